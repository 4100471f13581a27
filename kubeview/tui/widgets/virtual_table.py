"""A table that renders only the rows on screen, for 150,000 pods without a freeze.

Textual's DataTable keeps a Row object and measured cells per row, so adding 150,000 rows takes
seconds. This is a Line API widget: the data is a `Rows` value (keys in display order plus a cell
function), assigned to the `rows` reactive by the screen that owns it; `render_line` formats just
the visible keys. The cursor follows its key across updates, so new rows arriving above it do not
move the selection. Clicking a header asks the screen to sort by that column.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence

from rich.cells import cell_len
from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.binding import Binding
from textual.geometry import Region, Size
from textual.message import Message
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip
from textual.widget import Widget

from kubeview.tui.rows.column import Column, fit_widths
from kubeview.tui.widgets.table_line import draw_line
from kubeview.tui.widgets.table_rows import Cell, Rows

CACHE_ROWS = 2048
MEASURE_ALL = 5000  # up to this many rows, columns are as wide as the whole list wants (`_measure`)


class VirtualTable(ScrollView, can_focus=True):
    """Header line + visible rows; cursor by key; Enter selects."""

    BINDINGS = [
        Binding("up,k", "cursor(-1)", "Up", show=False, id="table.up", tooltip="Move the cursor up one row"),
        Binding("down,j", "cursor(1)", "Down", show=False, id="table.down",
                tooltip="Move the cursor down one row"),
        Binding("pageup,ctrl+b", "page(-1)", "Page up", show=False, id="table.page_up",
                tooltip="Move the cursor up one page"),
        Binding("pagedown,ctrl+f", "page(1)", "Page down", show=False, id="table.page_down",
                tooltip="Move the cursor down one page"),
        Binding("home,g", "edge(0)", "Top", show=False, id="table.top", tooltip="Go to the first row"),
        Binding("end,G", "edge(1)", "Bottom", show=False, id="table.bottom", tooltip="Go to the last row"),
        Binding("enter", "select", "Open", show=False, id="table.select", tooltip="Open the selected row"),
    ]
    COMPONENT_CLASSES = {"virtual-table--header", "virtual-table--cursor", "virtual-table--sorted",
                         "virtual-table--empty"}
    DEFAULT_CSS = """
    VirtualTable { height: 1fr; background: $surface; scrollbar-gutter: stable; overflow-x: hidden; }
    VirtualTable > .virtual-table--header { text-style: bold; color: $text-primary; background: $panel; }
    VirtualTable > .virtual-table--sorted { color: $text-accent; }
    VirtualTable > .virtual-table--cursor { background: $block-cursor-blurred-background; }
    VirtualTable:focus > .virtual-table--cursor { background: $block-cursor-background;
                                                  color: $block-cursor-foreground; }
    VirtualTable > .virtual-table--empty { color: $text-muted; text-style: italic; }
    """

    # repaint=False: the watchers repaint just the lines that changed
    rows: reactive[Rows] = reactive(Rows, always_update=True, repaint=False)
    cursor: reactive[int] = reactive(0, repaint=False)
    sort_column: reactive[str] = reactive("")
    sort_reverse: reactive[bool] = reactive(False)
    note: reactive[str] = reactive("", repaint=False)  # shown at the right of the header ("sorting…")

    class Selected(Message):
        """Enter (or a double click) on a row."""

        def __init__(self, table: VirtualTable, key: Hashable) -> None:
            super().__init__()
            self.table, self.key = table, key

        @property
        def control(self) -> VirtualTable:
            return self.table

    class Highlighted(Message):
        """The cursor moved to another key."""

        def __init__(self, table: VirtualTable, key: Hashable | None) -> None:
            super().__init__()
            self.table, self.key = table, key

        @property
        def control(self) -> VirtualTable:
            return self.table

    class HeaderClicked(Message):
        def __init__(self, table: VirtualTable, column: str) -> None:
            super().__init__()
            self.table, self.column = table, column

        @property
        def control(self) -> VirtualTable:
            return self.table

    def __init__(self, columns: Sequence[Column], empty: str = "nothing to show", *, name: str | None = None,
                 id: str | None = None, classes: str | None = None) -> None:  # noqa: A002
        super().__init__(name=name, id=id, classes=classes)
        self.columns = list(columns)
        self.empty = empty
        self.cursor_key: Hashable | None = None
        # Until the table is first painted, or someone moves the cursor, the cursor stays on the first
        # row: a table filled out of sight while its lists arrive would otherwise open on the row that
        # happened to come first (a ReplicaSet) below a Job that sorts before it. After that it
        # follows its row's key (through a re-sort, a filter, rows coming and going).
        self.follow_key = False
        self._cache: dict[tuple, Strip] = {}
        self._pass: tuple | None = None
        self._shown: list | None = None  # what `_signature` was when the lines were last repainted
        self._generation = 0
        self._widths: list[int] = []
        self._widths_for: tuple = ()
        self.want: dict[str, int] = {}  # what flexible columns' content wants (the longest name)
        self._measured: dict[Hashable, tuple[Hashable, list[int]]] = {}  # key -> (stamp, sizes)
        self._measured_content: Hashable | None = None  # `Rows.content` of the rows last measured whole
        self.width_of: dict[str, int] = {}  # each column's width on screen now, by key

    # -- data --------------------------------------------------------------------------------------
    def watch_rows(self, rows: Rows) -> None:
        self._generation += 1
        if rows.stamp is None:
            self._cache.clear()
        n = len(rows)
        size = Size(self.scrollable_content_region.width, n + 1)
        if size != self.virtual_size:
            # Not `self.virtual_size = size`: that reactive asks for a layout of the whole screen and a
            # full repaint (~60 ms at 120x40) on every keystroke of a filter. The scrollbars are all a
            # new row count changes; showing or hiding one still asks for a layout by itself.
            self.set_reactive(Widget.virtual_size, size)
            self._scroll_update(size)
        row = rows.index(self.cursor_key) if self.cursor_key is not None and self.follow_key else None
        if row is None:
            row = min(self.cursor, max(n - 1, 0))
        self.set_reactive(VirtualTable.cursor, row)
        new_key = rows.key(row) if n else None
        if new_key != self.cursor_key:
            self.cursor_key = new_key
            self.post_message(self.Highlighted(self, new_key))
        self._scroll_cursor_into_view()
        self._measure()
        self._refresh_changed()

    def _measure(self, scrolled: bool = False) -> None:
        """What the `whole` columns (names) and the `point` ones (a reason's leading part) want: the
        widest over the whole list, so a column is as wide at the top as after `G` (#24: NAMESPACE grew
        from 13 to 22 once scrolled past, and never shrank). Rows are measured once per what they show
        (`Rows.stamp`). Above `MEASURE_ALL` rows only the page is measured, growing only: formatting
        150,000 rows per refresh would freeze the screen."""
        measured = [(i, c.key, c.point) for i, c in enumerate(self.columns) if c.whole or c.point is not None]
        measured += [(i, c.key + "+", c.full) for i, c in enumerate(self.columns) if c.full is not None]
        rows = self.rows
        if not measured or not len(rows):
            return
        keys: Sequence[Hashable]
        if len(rows) <= MEASURE_ALL and rows.content is not None and rows.content == self._measured_content:
            return  # the same rows in another order: what they want is what was measured (a sort of 5,000 nodes
            # measured each row's stamp again, ~70 ms of a key press)
        if len(rows) > MEASURE_ALL:
            top = round(self.scroll_y)
            keys = [rows.key(row) for row in range(top, min(len(rows), top + self.page_height))]
            want = dict(self.want)
        elif scrolled:
            return  # the whole list is measured already: scrolling changes nothing
        else:
            keys, want = rows.keys, {}
        cache, fresh = self._measured, {}
        stamp = rows.measure or rows.stamp
        shown, self.width_of = self.width_of, {}  # cells whole, not cut to the widths they have now
        for key in keys:
            mark = stamp(key) if stamp is not None else self._generation
            hit = cache.get(key)
            if hit is None or hit[0] != mark:
                cells = rows.cells(key)
                sizes = []
                for i, _, point in measured:
                    cell = cells[i] if i < len(cells) else ""
                    text = cell if isinstance(cell, str) else cell.plain
                    if point is not None and text:
                        text = point(text)
                    sizes.append(cell_len(text))
                hit = (mark, sizes)
            fresh[key] = hit
            for (_, column, _), size in zip(measured, hit[1], strict=True):
                if size > want.get(column, 0):
                    want[column] = size
        self.width_of = shown
        self._measured = fresh if len(rows) <= MEASURE_ALL else {}
        self._measured_content = rows.content if len(rows) <= MEASURE_ALL else None
        for _, column, _ in measured:
            want.setdefault(column, 0)
        self.set_want(want)

    def watch_cursor(self, row: int) -> None:
        rows = self.rows
        key = rows.key(row) if 0 <= row < len(rows) else None
        if key != self.cursor_key:
            self.cursor_key = key
            self.post_message(self.Highlighted(self, key))
        self._scroll_cursor_into_view()
        self._refresh_changed()

    def watch_scroll_y(self, old: float, new: float) -> None:
        super().watch_scroll_y(old, new)
        self._shown = None  # every line moved: the next change repaints all of them
        self._measure(scrolled=True)

    def _signature(self) -> list:
        """What each visible line shows: (key, stamp, is cursor), None past the last row."""
        rows, top, cursor = self.rows, round(self.scroll_y), self.cursor
        n, stamp, gen = len(rows), rows.stamp, self._generation
        out: list = []
        for row in range(top, top + self.page_height):
            if row >= n:
                out.append(None)
                continue
            key = rows.key(row)
            out.append((key, stamp(key) if stamp is not None else gen, row == cursor))
        return out

    def _refresh_changed(self) -> None:
        """Repaint only the lines whose content changed (a burst of events moves a few rows at most)."""
        new = self._signature()
        old, self._shown = self._shown, new
        if old is None or len(old) != len(new):
            self.refresh()
            return
        width = self.size.width
        for y, (a, b) in enumerate(zip(old, new, strict=True), start=1):
            if a != b:
                self.refresh(Region(0, y, width, 1))

    def watch_sort_column(self) -> None:
        self._shown = None
        self.refresh()

    def watch_sort_reverse(self) -> None:
        self._shown = None
        self.refresh()

    def watch_note(self) -> None:
        self.refresh(Region(0, 0, self.size.width, 1))  # the header line only

    def on_resize(self, event: events.Resize) -> None:
        self._cache.clear()
        self._shown = None
        self.virtual_size = Size(self.scrollable_content_region.width, len(self.rows) + 1)

    # -- navigation --------------------------------------------------------------------------------
    @property
    def page_height(self) -> int:
        return max(1, self.scrollable_content_region.height - 1)

    def _move(self, row: int) -> None:
        self.follow_key = True
        n = len(self.rows)
        self.cursor = max(0, min(row, n - 1)) if n else 0

    def action_cursor(self, delta: int) -> None:
        self._move(self.cursor + delta)

    def action_page(self, direction: int) -> None:
        self._move(self.cursor + direction * self.page_height)

    def action_edge(self, end: int) -> None:
        self._move(len(self.rows) - 1 if end else 0)

    def action_select(self) -> None:
        if self.cursor_key is not None:
            self.post_message(self.Selected(self, self.cursor_key))

    def _scroll_cursor_into_view(self) -> None:
        top = round(self.scroll_y)
        height = self.page_height
        if self.cursor < top:
            self.scroll_to(y=self.cursor, animate=False, immediate=True)
        elif self.cursor >= top + height:
            self.scroll_to(y=self.cursor - height + 1, animate=False, immediate=True)

    def on_click(self, event: events.Click) -> None:
        y = event.get_content_offset(self)
        if y is None:
            return
        if y.y == 0:
            col = self._column_at(y.x)
            if col is not None:
                self.post_message(self.HeaderClicked(self, col))
            return
        row = round(self.scroll_y) + y.y - 1
        if 0 <= row < len(self.rows):
            self.follow_key = True
            self.cursor = row
            if event.chain == 2:
                self.action_select()

    def _column_at(self, x: int) -> str | None:
        pos = 0
        for col, width in zip(self.columns, self._column_widths(self.scrollable_content_region.width), strict=True):
            if pos <= x < pos + width + 1:
                return col.key
            pos += width + 1
        return None

    # -- rendering ---------------------------------------------------------------------------------
    # Rendering is the hot path at 4 refreshes a second: styles and widths are looked up once per
    # pass (`_pass`), plain string cells become one Segment each, and a row's strip is cached by
    # its key and `Rows.stamp` (what it shows), so only rows whose content changed are formatted.
    def render_lines(self, crop):  # noqa: ANN001, ANN201
        self._pass = None
        return super().render_lines(crop)

    def _styles(self) -> tuple[int, Style, Style, Style, Style]:
        if self._pass is None:
            base = self.rich_style
            self._pass = (
                self.scrollable_content_region.width,
                base,
                base + self.get_component_rich_style("virtual-table--cursor"),
                base + self.get_component_rich_style("virtual-table--header"),
                self.get_component_rich_style("virtual-table--sorted"),
            )
        return self._pass

    def _column_widths(self, width: int) -> list[int]:
        stamp = (width, *self.want.items())
        if stamp != self._widths_for:
            self._widths, self._widths_for = fit_widths(self.columns, width, self.want), stamp
            self.width_of = {c.key: w for c, w in zip(self.columns, self._widths, strict=True)}
        return self._widths

    def set_columns(self, columns: Sequence[Column]) -> None:
        """Other columns (the packing what-if: a pod's scores, or a gang's members per node)."""
        if list(columns) == self.columns:
            return
        self.columns = list(columns)
        self.want, self._measured, self._widths_for = {}, {}, ()
        self._cache.clear()
        self._shown = None
        self.refresh()

    def set_want(self, want: dict[str, int]) -> None:
        """Widths the flexible columns' content wants; a change redraws every line."""
        if want != self.want:
            self.want = want
            self._cache.clear()
            self._shown = None
            self.refresh()

    def _line(self, cells: Sequence[Cell], base: Style, width: int, highlight: Style | None = None,
              highlight_key: str | None = None) -> Strip:
        return draw_line(self.app.console, self.columns, self._column_widths(width), cells, base, width,
                         highlight, highlight_key)

    def _header(self, width: int, style: Style, sorted_style: Style) -> Strip:
        labels: list[Cell] = []
        for c, w in zip(self.columns, self._column_widths(width), strict=True):
            label = c.short if c.short and w < len(c.label) else c.label
            if c.key == self.sort_column:  # the arrow says the order shown: ▼ largest first
                label += " ▼" if c.descending != self.sort_reverse else " ▲"
            labels.append(label)
        line = self._line(labels, style, width, sorted_style, self.sort_column)
        if not self.note:
            return line
        note = f" {self.note} "[: max(0, width - 1)]
        return Strip.join([line.crop(0, width - len(note)), Strip([Segment(note, style + sorted_style)])])

    def render_line(self, y: int) -> Strip:
        self.follow_key = True  # seen: from now on the cursor follows its row (see __init__)
        width, base, cursor_style, header_style, sorted_style = self._styles()
        if y == 0:
            return self._header(width, header_style, sorted_style)
        rows = self.rows
        row = round(self.scroll_y) + y - 1
        if row >= len(rows):
            if row == 0:
                style = base + self.get_component_rich_style("virtual-table--empty")
                return Strip([Segment(f" {self.empty}", style)]).adjust_cell_length(width, base)
            return Strip.blank(width, base)
        try:
            key = rows.key(row)
        except IndexError:
            return Strip.blank(width, base)
        style = cursor_style if row == self.cursor else base
        stamp = rows.stamp(key) if rows.stamp is not None else self._generation
        cache_key = (key, stamp, style, width)  # the style says cursor or not, focused or not
        strip = self._cache.get(cache_key)
        if strip is None:
            self._column_widths(width)  # cells may be drawn for their column's width (`width_of`)
            strip = self._line(rows.cells(key), style, width)
            if len(self._cache) > CACHE_ROWS:
                self._cache.clear()
            self._cache[cache_key] = strip
        return strip

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._pass = None  # cached strips are keyed by their style: those still current stay
