"""The node screen's "GPUs" block (rows/gpu_block.py): the node's GPUs in words, its offers as a small
table fitted to the width, what each physical GPU is carved into, DCGM's use per GPU, the warnings and
the NVLink domain. Hidden on a node whose GPUs are plain whole NVIDIA GPUs outside any domain.

Spaces between fields end the span before them (never start one): an SVG viewer (rsvg) drew a span's
leading spaces after its text (see widgets/device_table.py).
"""

from __future__ import annotations

import textwrap

from rich.console import RenderableType
from rich.text import Text
from textual.reactive import reactive
from textual.widget import Widget

from kubeview.tui import format as fmt
from kubeview.tui.rows.gpu_block import OFFER_HEADER, GpuBlock

GAP = 2  # cells between the offer table's columns
CUT_FIRST = (0, 2)  # narrow: the resource (cut in the middle), then the source, give way first


def offer_widths(rows: list[tuple[str, ...]], width: int) -> list[int]:
    """Each column as wide as its widest cell; over `width`, the resource and the source give way."""
    widths = [max(len(r[i]) for r in rows) for i in range(len(OFFER_HEADER))]
    over = sum(widths) + GAP * (len(widths) - 1) - width
    for i in CUT_FIRST:
        if over <= 0:
            break
        cut = min(over, widths[i] - 8)
        if cut > 0:
            widths[i] -= cut
            over -= cut
    return widths


def gpu_lines(b: GpuBlock, width: int, short: bool = False) -> Text:
    """The block at `width`; `short` (a short terminal): no column headers, no carves."""
    out = Text(no_wrap=True, overflow="ellipsis")
    out.append("GPUs ", style="bold")
    out.append(b.title, style="bold cyan" if b.title else "")
    if b.product:
        out.append(" · ", style="dim")
        out.append(b.product, style="dim")
    rows = [OFFER_HEADER, *b.offers]
    widths = offer_widths(rows, width)
    for n, row in enumerate(rows):
        if short and n == 0:
            continue
        out.append("\n")
        cells = [fmt.cut_middle(c, w).ljust(w) if len(c) > w else c.ljust(w) for c, w in zip(row, widths, strict=True)]
        out.append((" " * GAP).join(cells).rstrip(), style="bold" if n == 0 else "")
    for line in () if short else b.carves:
        out.append("\n")
        out.append(line, style="dim")
    if b.use:
        out.append("\n")
        out.append("used ", style="bold")
        out.append(" │ ".join(b.use) if sum(len(u) + 3 for u in b.use) + 5 <= width else " │ ".join(
            u.split(" · ")[0] for u in b.use), style="cyan")
    for w in b.warnings:  # wrapped, not cut: the end says why it matters
        for i, piece in enumerate(textwrap.wrap(w, max(width - 2, 10))):
            out.append("\n")
            out.append(("⚠ " if i == 0 else "  ") + piece, style="bold yellow")
    for d in b.domains:
        out.append("\n")
        out.append(d)
    return out


class GpuShapeView(Widget):
    """The node screen's GPUs block; hidden while `block` is None."""

    block: reactive[GpuBlock | None] = reactive(None, layout=True)
    short: reactive[bool] = reactive(False, layout=True)

    def watch_block(self, block: GpuBlock | None) -> None:
        self.display = block is not None

    def render(self) -> RenderableType:
        if self.block is None:
            return Text("")
        width = max(self.size.width, 20)
        lines = gpu_lines(self.block, width, self.short).split("\n")
        for line in lines:
            line.truncate(width, overflow="ellipsis")
        return Text("\n").join(lines)
