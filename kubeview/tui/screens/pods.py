"""Pods: namespace, name, node, phase, requests, restarts; Pending pods say why (what an autoscaler says
they wait for, else the scheduler's words).

Enter opens the pod: everything about it, the scheduler's message whole.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping, Sequence

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding

from kubeview.model.views import PodView
from kubeview.tui.key_index import KeyIndex
from kubeview.tui.rows import pods as rows
from kubeview.tui.screens.indexed import IndexedScreen
from kubeview.tui.screens.pod_detail import NAME as DETAIL
from kubeview.tui.screens.pod_detail import install_pod_detail
from kubeview.tui.state import ClusterState
from kubeview.tui.widgets.table_rows import Cell
from kubeview.tui.widgets.virtual_table import VirtualTable


class PodsScreen(IndexedScreen[rows.Key, PodView]):
    SCREEN_TITLE = "Pods"
    KINDS = ("Pod",)
    COLUMNS = rows.COLUMNS
    EMPTY = "no pods (yet)"
    DEFAULT_SORT = "namespace"  # the key order (namespace, then name): the header's arrow says so
    BINDINGS = [Binding("enter", "open", "Open pod", id="pods.open",
                        tooltip="Show the pod: requests, node, conditions, the scheduler's whole message")]

    held: rows.Held = {}  # DRA GPUs per pod, taken from the GPU ledger at each refresh
    waits: rows.Waits = {}  # what pending pods wait for (the autoscalers' words), at each refresh

    def compose_body(self) -> ComposeResult:
        yield self.make_table()

    def update_from_state(self, state: ClusterState) -> None:
        with state.lock:
            self.held = rows.dra_held(state.model)
            self.waits = state.model.pod_waits()
        super().update_from_state(state)

    def items(self, state: ClusterState) -> Mapping[rows.Key, PodView]:
        return state.model.shown_pods()  # -n: the namespace's pods only

    def by_name(self, state: ClusterState) -> KeyIndex:
        return state.pods_by_name

    def sort_value(self, column: str, items: Mapping[rows.Key, PodView]) -> Callable[[rows.Key], object] | None:
        return rows.sort_value(column, items, self.held, self.waits)

    def search(self, state: ClusterState) -> Mapping[rows.Key, str]:
        return state.pod_search

    def cells(self, items: Mapping[rows.Key, PodView], key: rows.Key) -> Sequence[Cell]:
        return rows.cells(items.get(key), key, self.table().width_of, self.held, self.waits)

    def stamp(self, items: Mapping[rows.Key, PodView], key: rows.Key) -> Hashable:
        return super().stamp(items, key), self.held.get(key), self.waits.get(key)

    def action_open(self) -> None:
        key = self.table().cursor_key
        if key is None:
            return
        install_pod_detail(self.app).show(key)  # type: ignore[arg-type]
        self.app.push_screen(DETAIL)

    @on(VirtualTable.Selected)
    def _selected(self, event: VirtualTable.Selected) -> None:
        self.action_open()
