"""Pods: namespace, name, node, phase, requests, restarts; Pending pods say why (the scheduler's words)."""

from __future__ import annotations

from collections.abc import Callable, Hashable

from textual.app import ComposeResult

from kubeview.tui.key_index import KeyIndex
from kubeview.tui.rows import pods as rows
from kubeview.tui.screens.indexed import IndexedScreen
from kubeview.tui.state import ClusterState


class PodsScreen(IndexedScreen):
    SCREEN_TITLE = "Pods"
    KINDS = ("Pod",)
    COLUMNS = rows.COLUMNS
    EMPTY = "no pods (yet)"

    def compose_body(self) -> ComposeResult:
        yield self.make_table()

    def items(self, state: ClusterState) -> dict:
        return state.model.pods

    def by_name(self, state: ClusterState) -> KeyIndex:
        return state.pods_by_name

    def sort_value(self, column: str, items: dict) -> Callable[[Hashable], object] | None:
        return rows.sort_value(column, items)

    def search(self, state: ClusterState) -> dict:
        return state.pod_search

    def cells(self, items: dict, key: Hashable) -> list:
        return rows.cells(items.get(key), key)  # type: ignore[arg-type]
