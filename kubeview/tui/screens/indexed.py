"""A screen whose table is one kind of object kept in order by a `KeyIndex` (pods, workloads).

Each refresh takes only the keys changed since the last one (the state's `ChangeTracker`) and moves
just those rows; a relist, a new sort column or a new filter rebuilds from the state's by-name index
(already sorted, so a rebuild is one numpy argsort, not a Python sort of 150,000 tuples).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence

from textual import on
from textual.binding import Binding

from kubeview.tui.key_index import KeyIndex
from kubeview.tui.rows.column import Column
from kubeview.tui.screens.base import ClusterScreen
from kubeview.tui.state import ChangeTracker, ClusterState
from kubeview.tui.widgets.virtual_table import Rows, VirtualTable

REBUILD_SHARE = 0.2  # more changed keys than this share of the rows: rebuild instead of moving rows


class IndexedScreen(ClusterScreen):
    """Subclasses name the kind and say how to read, sort, filter and draw one object."""

    KINDS: tuple[str, ...] = ()
    COLUMNS: Sequence[Column] = ()
    EMPTY = "nothing to show"
    DEFAULT_SORT = "name"
    BINDINGS = [
        Binding("o", "sort_next", "Sort", id="table.sort_next", tooltip="Sort by the next column"),
        Binding("O", "sort_reverse", "Reverse", show=False, id="table.sort_reverse",
                tooltip="Reverse the sort order"),
    ]

    def __init__(self) -> None:
        super().__init__()
        self.sort_column = self.DEFAULT_SORT
        self.sort_reverse = False
        self.index = KeyIndex()
        self._tracker: ChangeTracker | None = None
        self._search_cache: dict = {}
        self._need_rebuild = True

    # -- what subclasses provide -------------------------------------------------------------
    def items(self, state: ClusterState) -> dict:
        raise NotImplementedError

    def by_name(self, state: ClusterState) -> KeyIndex:
        raise NotImplementedError

    def sort_value(self, column: str, items: dict) -> Callable[[Hashable], object] | None:
        raise NotImplementedError

    def matcher(self, text: str, items: dict) -> Callable[[Hashable], bool] | None:
        raise NotImplementedError

    def cells(self, items: dict, key: Hashable) -> list:
        raise NotImplementedError

    # -- table ---------------------------------------------------------------------------------
    def table(self) -> VirtualTable:
        return self.query_one(VirtualTable)

    def main_widget(self) -> VirtualTable:
        return self.table()

    def make_table(self) -> VirtualTable:
        table = VirtualTable(self.COLUMNS, empty=self.EMPTY)
        table.sort_column = self.sort_column
        return table

    def update_from_state(self, state: ClusterState) -> None:
        if self._tracker is None:
            self._tracker = state.tracker(*self.KINDS)
        with state.lock:
            full, changed = state.take(self._tracker)
            items = self.items(state)
            if full or self._need_rebuild or len(changed) > REBUILD_SHARE * max(len(self.index), 1000):
                self._rebuild(state, items)
            elif changed:
                self.index.update(changed, items.__contains__)
            else:
                # nothing moved, but shown figures may have (e.g. a workload's ready count)
                pass
        self._show(items)

    def _rebuild(self, state: ClusterState, items: dict) -> None:
        self._need_rebuild = False
        self.index = KeyIndex(self.sort_value(self.sort_column, items), self.matcher(self.filter_text, items))
        self.index.rebuild(self.by_name(state).keys)

    def _show(self, items: dict) -> None:
        table = self.table()
        table.sort_column, table.sort_reverse = self.sort_column, self.sort_reverse
        table.rows = Rows(self.index.keys, lambda key: self.cells(items, key), self.index.position,
                          self.sort_reverse, lambda key: _stamp(items.get(key)))

    def resort(self) -> None:
        self._need_rebuild = True
        self.refresh_data()

    def apply_filter(self, text: str) -> None:
        self.resort()

    def action_sort(self, column: str) -> None:
        if column == self.sort_column:
            self.sort_reverse = not self.sort_reverse
            with self.state.lock:
                self._show(self.items(self.state))
            return
        self.sort_column, self.sort_reverse = column, False
        self.resort()

    def action_sort_next(self) -> None:
        keys = [c.key for c in self.COLUMNS]
        i = keys.index(self.sort_column) if self.sort_column in keys else -1
        self.action_sort(keys[(i + 1) % len(keys)])

    def action_sort_reverse(self) -> None:
        self.action_sort(self.sort_column)

    @on(VirtualTable.HeaderClicked)
    def _header_clicked(self, event: VirtualTable.HeaderClicked) -> None:
        self.action_sort(event.column)


def _stamp(obj: object) -> object:
    """What a pod or workload row shows changes exactly when its resourceVersion does."""
    return None if obj is None else getattr(obj, "resource_version", None) or id(obj)
