"""Workloads: desired / ready per ReplicaSet, Deployment and StatefulSet; scale with `+`, `-`, `s`.

A jump of more than 10x (either way) or to 0 asks first. Scaling runs `source.scale` in a worker;
the result or the API's refusal appears in the banner, one line.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable

from textual.app import ComposeResult
from textual.binding import Binding

from kubeview.tui.key_index import KeyIndex
from kubeview.tui.rows import workloads as rows
from kubeview.tui.screens.indexed import IndexedScreen
from kubeview.tui.screens.prompts import Confirm, NumberPrompt
from kubeview.tui.state import ClusterState

JUMP = 10  # a change by more than this factor asks for confirmation


def needs_confirmation(current: int, target: int) -> bool:
    """Scaling to 0, or by more than 10x up or down, is worth a second look."""
    if target == current:
        return False
    if target == 0:
        return True
    return target > JUMP * max(current, 1) or current > JUMP * target


class WorkloadsScreen(IndexedScreen):
    SCREEN_TITLE = "Workloads"
    KINDS = ("ReplicaSet", "Deployment", "StatefulSet")
    COLUMNS = rows.COLUMNS
    EMPTY = "no workloads (yet)"
    DEFAULT_SORT = "kind"
    BINDINGS = [
        Binding("plus,equals_sign", "scale_by(1)", "Scale +1", id="workloads.scale_up",
                tooltip="Add one replica to the selected workload"),
        Binding("minus", "scale_by(-1)", "Scale -1", id="workloads.scale_down",
                tooltip="Remove one replica from the selected workload"),
        Binding("s", "scale_to", "Scale to…", id="workloads.scale_to",
                tooltip="Ask for a replica count for the selected workload"),
    ]

    def compose_body(self) -> ComposeResult:
        yield self.make_table()

    def items(self, state: ClusterState) -> dict:
        return state.model.workloads

    def by_name(self, state: ClusterState) -> KeyIndex:
        return state.workloads_by_name

    def sort_value(self, column: str, items: dict) -> Callable[[Hashable], object] | None:
        return rows.sort_value(column, items)

    def search(self, state: ClusterState) -> dict:
        return state.workload_search

    def cells(self, items: dict, key: Hashable) -> list:
        return rows.cells(items.get(key), key)  # type: ignore[arg-type]

    def selected(self) -> tuple[tuple[str, str, str], int] | None:
        key = self.table().cursor_key
        if key is None:
            return None
        w = self.state.model.workloads.get(key)  # type: ignore[call-overload]
        return (key, w.desired) if w is not None else None  # type: ignore[return-value]

    def action_scale_by(self, delta: int) -> None:
        sel = self.selected()
        if sel is None:
            self.kv.banner = ("select a workload first", "error")
            return
        key, desired = sel
        self.request_scale(key, max(0, desired + delta), desired)

    def action_scale_to(self) -> None:
        sel = self.selected()
        if sel is None:
            self.kv.banner = ("select a workload first", "error")
            return
        key, desired = sel
        kind, ns, name = key

        def answered(n: int | None) -> None:
            if n is not None:
                self.request_scale(key, n, desired)

        self.app.push_screen(NumberPrompt(f"Replicas for {kind} {ns}/{name} (now {desired}):", desired), answered)

    def request_scale(self, key: tuple[str, str, str], target: int, current: int) -> None:
        kind, ns, name = key
        if target == current:
            self.kv.banner = (f"{kind} {ns}/{name} already has {current} replicas.", "ok")
            return
        if not needs_confirmation(current, target):
            self._scale(key, target)
            return

        def answered(yes: bool | None) -> None:
            if yes:
                self._scale(key, target)
            else:
                self.kv.banner = (f"{kind} {ns}/{name} left at {current} replicas.", "ok")

        self.app.push_screen(Confirm(f"Scale {kind} {ns}/{name} from {current} to {target}?"), answered)

    def _scale(self, key: tuple[str, str, str], target: int) -> None:
        kind, ns, name = key
        self.kv.banner = (f"scaling {kind} {ns}/{name} to {target}…", "")
        self.kv.scale(kind, ns, name, target)
