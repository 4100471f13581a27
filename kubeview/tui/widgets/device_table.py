"""A node's DRA devices as a small table (`rows/devices.py`: columns and cells), fitted to the width
with `fit_widths` like the other tables, so a device is one line at any width.

A plain widget rather than a `VirtualTable`: a node has a handful of devices, nothing to scroll,
sort or focus. Spaces between fields end the span before them (never start one): an SVG viewer
(rsvg) drew a span's leading spaces after its text, which ran labels together in the screenshots.
"""

from __future__ import annotations

from rich.console import RenderableType
from rich.text import Text
from textual.reactive import reactive
from textual.widget import Widget

from kubeview.tui import format as fmt
from kubeview.tui.rows.column import fit_widths
from kubeview.tui.rows.devices import CUT_AT_END, DEVICE_COLUMNS, STATE_STYLE, DeviceTable


def fitted(cell: str, width: int, middle: bool) -> str:
    """`cell` in `width` cells, padded; cut in the middle (names, UUIDs) or at its end."""
    if len(cell) > width:
        cell = fmt.cut_middle(cell, width) if middle else cell[: max(width - 1, 0)] + "…"[:width]
    return cell.ljust(width)


def device_lines(table: DeviceTable, width: int) -> Text:
    """The title, the header and one line per device, each at most `width` cells."""
    columns = DEVICE_COLUMNS if any(row[-1] for row in table.rows) else DEVICE_COLUMNS[:-1]  # NOTE: when any
    rows = [row[:len(columns)] for row in table.rows]
    want = {c.key: max([len(c.label)] + [len(row[i]) for row in rows]) for i, c in enumerate(columns) if not c.width}
    widths = fit_widths(columns, width, want)
    out = Text(no_wrap=True, overflow="crop")
    out.append("DRA devices  ", style="bold")
    if table.states and all(state == "gone" for state in table.states):
        out.append("gone with the node: counted nowhere (its ResourceSlice is still published)", style="dim")
    else:
        out.append(f"{table.allocated} of {table.total} GPUs allocated (counted in the GPU figures above)")
    header = "".join(fitted(c.label, w, False) + " " for c, w in zip(columns, widths, strict=True))
    out.append("\n")
    out.append(header.rstrip(), style="bold")
    for row, state in zip(rows, table.states, strict=True):
        out.append("\n")
        for i, (c, w, cell) in enumerate(zip(columns, widths, row, strict=True)):
            text = fitted(cell, w, c.key not in CUT_AT_END) + (" " if i < len(row) - 1 else "")
            out.append(text.rstrip() if i == len(row) - 1 else text,
                       style=STATE_STYLE.get(state, "") if c.key == "state" else "")
    return out  # no_wrap, crop: a line longer than `width` (only below the columns' floors) is cut


class DeviceTableView(Widget):
    """The node screen's device table; hidden on a node that publishes no ResourceSlice."""

    table: reactive[DeviceTable | None] = reactive(None, layout=True)

    def watch_table(self, table: DeviceTable | None) -> None:
        self.display = table is not None

    def render(self) -> RenderableType:
        if self.table is None:
            return Text("")
        return device_lines(self.table, max(self.size.width, 20))
