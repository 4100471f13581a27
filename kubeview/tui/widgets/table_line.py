"""One line of a `VirtualTable`: cells cut to their columns' widths and joined into a `Strip`.

The hot path of a repaint (the table caches the strips it makes): a plain string cell becomes one
Segment, a `Text` with a single style is not copied, and names in `whole` columns are cut in the
middle (`kube…mmh92`), where they differ, rather than at their end.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache

from rich.cells import cell_len
from rich.console import Console
from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual.strip import Strip

from kubeview.tui import format as fmt
from kubeview.tui.rows.column import Column
from kubeview.tui.widgets.table_rows import Cell

_parse_style = lru_cache(maxsize=256)(Style.parse)


def draw_line(console: Console, columns: Sequence[Column], widths: Sequence[int], cells: Sequence[Cell],
              base: Style, width: int, highlight: Style | None = None, highlight_key: str | None = None) -> Strip:
    """`cells` under `columns` (each `widths` wide, one space after it) in `width` cells; the column
    keyed `highlight_key` gets `highlight` over `base` (the sorted column's header)."""
    segments: list[Segment] = []
    add = segments.append
    for col, w, cell in zip(columns, widths, cells, strict=False):
        style = base + highlight if highlight is not None and col.key == highlight_key else base
        if isinstance(cell, str):
            n = len(cell) if cell.isascii() else cell_len(cell)
            if n > w and col.whole and cell.isascii():  # names differ at their ends: keep both
                cell, n = fmt.cut_middle(cell, w), w
            elif n > w:
                text = Text(cell)
                text.truncate(w, overflow="ellipsis")
                cell, n = text.plain, text.cell_len
            pad = " " * (w - n)
            add(Segment((pad + cell if col.align == "right" else cell + pad) + " ", style))
            continue
        # A Text's own style: `Text.render` leaves it to the console when there are no spans.
        own = cell.style
        cell_style = style + (_parse_style(own) if isinstance(own, str) else own) if own else style
        if not cell.spans and cell.plain.isascii() and len(cell.plain) <= w:
            # one style over a cell that fits (most of them): no copy, truncate and render of a
            # Text per cell (most of a first paint)
            n = len(cell.plain)
            body = [Segment(cell.plain, cell_style)] if cell.plain else []
        else:
            text = cell.copy()
            if col.whole and not cell.spans and cell.plain.isascii():
                text.plain = fmt.cut_middle(cell.plain, w)
            text.truncate(w, overflow="ellipsis")
            n = text.cell_len
            body = [Segment(seg.text, cell_style + seg.style if seg.style else cell_style)
                    for seg in text.render(console, end="")]
        pad = " " * (w - n)
        if col.align == "right" and pad:
            add(Segment(pad, style))
        segments += body
        add(Segment((pad if col.align != "right" else "") + " ", style))
    used = sum(len(seg.text) if seg.text.isascii() else cell_len(seg.text) for seg in segments)
    if used < width:
        add(Segment(" " * (width - used), base))
    if used > width:
        return Strip(segments, used).crop(0, width)
    return Strip(segments, width)
