"""A screen whose table is one kind of object kept in order by a `KeyIndex` (pods, workloads).

In the common case (by name, no filter) the rows are the state's by-name index itself, which the
source's thread keeps sorted: a refresh copies a list (about a millisecond for 150,000 pods).
Sorted by another column or filtered, the screen keeps its own `KeyIndex` and moves only the keys
changed since the last refresh (the state's `ChangeTracker`), or rebuilds when that would be
cheaper; typing more of a filter narrows the rows already shown instead of scanning everything.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

from textual import on, work
from textual.binding import Binding
from textual.message import Message
from textual.worker import get_current_worker

from kubeview.tui.key_index import Cancelled, Contains, KeyIndex, natural, untracked_copy
from kubeview.tui.rows.column import Column
from kubeview.tui.screens.base import ClusterScreen
from kubeview.tui.state import ChangeTracker, ClusterState
from kubeview.tui.widgets.table_rows import Cell, Rows
from kubeview.tui.widgets.virtual_table import VirtualTable

K = TypeVar("K", bound=Hashable)  # a row's key: (namespace, name) for pods
V = TypeVar("V")  # what a key stands for in `items`: a PodView, a WorkloadView or JobView

# Above this many changed keys a rebuild is cheaper than moving rows one by one (each move is a
# binary search plus a list insert, ~50 us at 150,000 rows; a rebuild costs ~20 ms filtered,
# ~200 ms sorted by a value).
REBUILD_AFTER = {"filtered": 2000, "sorted": 4000}
BACKGROUND_ROWS = 20_000  # rebuilds over more rows than this run in a thread worker
FEW_ROWS_DIVISOR = 8  # a filter matching at most 1/8 of the rows is applied on the UI thread


@dataclass
class IndexBuilt(Message, bubble=False):
    generation: int
    index: KeyIndex


class IndexedScreen(ClusterScreen, Generic[K, V]):
    """Subclasses name the kind (keys `K` for objects `V`) and say how to read, sort and draw one."""

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
        self.index: KeyIndex | None = None  # None: the state's by-name index is shown as it is
        self._tracker: ChangeTracker | None = None
        self._need_rebuild = True
        self._narrow_to: str | None = None
        self._building: int | None = None  # generation of the index a worker is building
        self._generation = 0
        self._table: VirtualTable | None = None

    # -- what subclasses provide -------------------------------------------------------------
    def items(self, state: ClusterState) -> Mapping[K, V]:
        raise NotImplementedError

    def by_name(self, state: ClusterState) -> KeyIndex:
        raise NotImplementedError

    def search(self, state: ClusterState) -> Mapping[K, str]:
        raise NotImplementedError

    def sort_value(self, column: str, items: Mapping[K, V]) -> Callable[[K], object] | None:
        raise NotImplementedError

    def cells(self, items: Mapping[K, V], key: K) -> Sequence[Cell]:
        raise NotImplementedError

    def stamp(self, items: Mapping[K, V], key: K) -> Hashable:
        """What a row shows: its drawn line is cached while this holds (see `Rows.stamp`)."""
        return _stamp(items.get(key))

    # -- table ---------------------------------------------------------------------------------
    def table(self) -> VirtualTable:
        if self._table is None:  # asked for per drawn row: a query each time shows in profiles
            self._table = self.query_one(VirtualTable)
        return self._table

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
            items = self.items(state)
            value = self.sort_value(self.sort_column, items)
            if value is None and not self.filter_text:
                state.take(self._tracker)  # the by-name index is already current
                self.index, self._building, self._need_rebuild, self._narrow_to = None, None, False, None
                keys = untracked_copy(self.by_name(state).keys)
                self._show(items, keys, _bisect_position(keys))
                return
            if self._building is not None:
                if not self._need_rebuild and self._narrow_to is None:
                    return  # a rebuild runs in a thread; the rows shown stay until it is done
                # asked for another sort or filter meanwhile: start over from all rows (the running
                # build's result will be ignored: its generation is no longer the awaited one)
                self._building, self._need_rebuild, self._narrow_to = None, True, None
            full, changed = state.take(self._tracker)
            limit = REBUILD_AFTER["sorted" if value is not None else "filtered"]
            narrowed = self.index if self._narrow_to is not None else None  # typing on: what is shown
            narrow = narrowed is not None
            self._narrow_to = None
            if self.index is None or full or self._need_rebuild or narrow or len(changed) > limit:
                self._need_rebuild = False
                source = (narrowed.keys if narrowed is not None else self.by_name(state).keys)[:]
                match = self._matcher(state)
                if len(source) >= BACKGROUND_ROWS and not narrow and match is not None:
                    # a filter that keeps few rows is found here and now: one pass over the search
                    # texts (no key lookups) and a sort of what matched, ~20-40 ms for 150,000 pods
                    hits = match.few(len(source) // FEW_ROWS_DIVISOR)
                    if hits is not None:
                        source = hits
                if len(source) >= BACKGROUND_ROWS:
                    self._building = self._generation = self._generation + 1
                    self.build_index(self._generation, value, match, source)
                    # the key's answer, at once, in the header line: the rows follow from the worker
                    what = f"sorting by {self.sort_column}" if value is not None else "filtering"
                    self.table().note = f"{what} {len(source):,} rows…"
                    return
                self.index = KeyIndex(value, match)
                self.index.rebuild(source)
            elif changed:
                self.index.update(changed, items.__contains__)
        self._show(items, self.index.keys, self.index.position)

    @work(thread=True, exclusive=True, group="index", exit_on_error=False, name="sorting and filtering",
          description="sorting and filtering rows")  # not the default: a repr of 150,000 keys
    def build_index(self, generation: int, value: Callable | None, match: Callable | None, keys: list) -> None:
        """Sort/filter 150,000 rows off the UI thread; the keys already shown stay until it is done.
        A newer sort or filter cancels this one (`exclusive`), which stops at its next step."""
        worker = get_current_worker()
        index = KeyIndex(value, match)

        def cancelled() -> bool:  # between steps: stop if superseded, else let a key press go first
            if worker.is_cancelled or generation != self._generation:
                return True
            self.kv.yield_to_ui()
            return worker.is_cancelled or generation != self._generation

        try:
            index.rebuild(keys, cancelled)
        except Cancelled:
            return
        # Fold in what changed while sorting here, not on the UI thread (a second of 1,000 events/s
        # is ~50 ms of re-placing keys). Under the state lock, so only the awaited build takes them:
        # the UI thread changes `_generation` under it too.
        state = self.state
        with state.lock:
            if generation != self._generation:
                return
            self._catch_up(index, state)  # after a relist, the UI thread rebuilds
        self.post_message(IndexBuilt(generation, index))

    @on(IndexBuilt)
    def _index_built(self, event: IndexBuilt) -> None:
        if event.generation != self._building:
            return  # a newer sort or filter was asked for meanwhile
        self._building = None
        self.table().note = ""
        state = self.state
        with state.lock:
            items = self.items(state)
            self.index = event.index
            current = self._catch_up(self.index, state)
        if current:
            self._show(items, self.index.keys, self.index.position)
        else:
            self.refresh_data()  # a relist since the build started: the tracker says full, rebuild

    def _catch_up(self, index: KeyIndex, state: ClusterState) -> bool:
        """Re-place in `index` the keys changed since the tracker was last taken (under `state.lock`).
        False, touching nothing, when a relist happened meanwhile: then only a rebuild will do."""
        tracker = self._tracker
        assert tracker is not None, "update_from_state makes the tracker before any build"
        if tracker.full:
            return False
        _, changed = state.take(tracker)
        if changed:
            index.update(changed, self.items(state).__contains__)
        return True

    @property
    def busy(self) -> bool:
        """A sort or filter is being computed in the background."""
        return self._building is not None

    def _matcher(self, state: ClusterState) -> Contains | None:
        text = self.filter_text
        if not text:
            return None
        return Contains(text, self.search(state))

    def _show(self, items: Mapping[K, V], keys: Sequence[Hashable], position: Callable[[Hashable], int | None]) -> None:
        table = self.table()
        table.sort_column, table.sort_reverse = self.sort_column, self.sort_reverse
        table.rows = Rows(keys, lambda key: self.cells(items, key), position, self.sort_reverse,
                          lambda key: self.stamp(items, key))

    def resort(self) -> None:
        self._need_rebuild = True
        self.refresh_data()

    def apply_filter(self, text: str) -> None:
        previous = getattr(self, "_shown_filter", "")
        self._shown_filter = text
        if (previous and text.startswith(previous) and self.index is not None and not self._need_rebuild
                and self._building is None):
            self._narrow_to = text  # typing on: keep only the rows already shown that still match
            self.refresh_data()
        else:
            self.resort()

    def action_sort(self, column: str) -> None:
        if column == self.sort_column:
            self.sort_reverse = not self.sort_reverse
        else:
            self.sort_column, self.sort_reverse = column, False
            self._need_rebuild = True
        table = self.table()  # the header shows the new order at once, even while a worker sorts
        table.sort_column, table.sort_reverse = self.sort_column, self.sort_reverse
        self.refresh_data()

    def action_sort_next(self) -> None:
        keys = [c.key for c in self.COLUMNS]
        i = keys.index(self.sort_column) if self.sort_column in keys else -1
        self.action_sort(keys[(i + 1) % len(keys)])

    def action_sort_reverse(self) -> None:
        self.action_sort(self.sort_column)

    @on(VirtualTable.HeaderClicked)
    def _header_clicked(self, event: VirtualTable.HeaderClicked) -> None:
        self.action_sort(event.column)


def _bisect_position(keys: Sequence[Hashable]) -> Callable[[Hashable], int | None]:
    def position(key: Hashable) -> int | None:
        i = bisect.bisect_left(keys, natural(key), key=natural)
        return i if i < len(keys) and keys[i] == key else None

    return position


def _stamp(obj: object) -> object:
    """What a pod or workload row shows changes exactly when its resourceVersion does."""
    return None if obj is None else getattr(obj, "resource_version", None) or id(obj)
