"""Capacity (`7`, `:capacity`): the node groups that may add nodes, their sizes against their limits, and
what the pods waiting on them are in for.

One row per Cluster Autoscaler node group, Karpenter NodePool or embedded node group
(`model.autoscaling.groups()`, rows/capacity.py); the panel under the table tells the selected
group's story (rows/capacity_story.py): the pods waiting on it, the nodes it can still add, a rough
time and its recent scale-ups and failures. Enter opens the group: its nodes and the pods waiting on it.
Without any autoscaler the table says so, and why when a source could not read one (a 403).
"""

from __future__ import annotations

import time

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.widgets import Static

from kubeview.model.autoscaling.store import AUTOSCALING_KINDS
from kubeview.tui.format import wrap_markup
from kubeview.tui.rows import capacity as rows
from kubeview.tui.rows import capacity_story as tale
from kubeview.tui.screens.base import ClusterScreen
from kubeview.tui.screens.group_detail import NAME as GROUP_DETAIL
from kubeview.tui.screens.group_detail import install_group_detail
from kubeview.tui.state import ClusterState
from kubeview.tui.widgets.table_rows import Rows
from kubeview.tui.widgets.virtual_table import VirtualTable

NO_GROUPS = "no node groups: no Cluster Autoscaler status, Karpenter NodePool or embedded node group"


def nothing_said(unavailable: dict[str, str]) -> str:
    """The empty table's line: no autoscaler, or why kubeview could not read one."""
    refused = sorted({why for kind, why in unavailable.items() if kind in AUTOSCALING_KINDS})
    return NO_GROUPS if not refused else f"node groups are not shown: {'; '.join(refused)}"


class CapacityScreen(ClusterScreen):
    SCREEN_TITLE = "Capacity"
    BINDINGS = [
        Binding("enter", "open", "Open group", id="capacity.open",
                tooltip="Open the node group: its nodes and the pods waiting on it"),
    ]

    def __init__(self) -> None:
        super().__init__()
        self.data = rows.CapacityRows()
        self.panel = ""  # the panel's markup as last shown (tests read it)

    def compose_body(self) -> ComposeResult:
        yield VirtualTable(rows.COLUMNS, empty=NO_GROUPS, id="capacity-table")
        yield Static(id="capacity-panel")

    def main_widget(self) -> VirtualTable:
        return self.query_one("#capacity-table", VirtualTable)

    def update_from_state(self, state: ClusterState) -> None:
        now = time.time()
        with state.lock:
            model = state.model
            self.data = rows.build(model.autoscaling.groups(), model.pod_waits(now), now)
            empty = nothing_said(model.unavailable)
        table = self.main_widget()
        table.empty = empty
        data = self.data
        keys = rows.order(data, self.filter_text)
        position = {k: i for i, k in enumerate(keys)}
        # as tall as its rows (and header), at most half the screen: the panel tells the story
        table.styles.height = max(2, min(len(keys) + 1, self.app.size.height // 2))
        table.rows = Rows(keys, lambda k: rows.cells(data, k), position.get, stamp=lambda k: rows.stamp(data, k))
        self.show_panel()

    def show_panel(self) -> None:
        """The story of the group under the cursor (the first one before the cursor moves)."""
        box = self.query_one("#capacity-panel", Static)
        table = self.main_widget()
        key = table.cursor_key if table.cursor_key in self.data.groups else next(
            iter(rows.order(self.data, self.filter_text)), None)
        group = self.data.groups.get(key) if key is not None else None
        if group is None:
            self.panel = ""
            box.update("")
            box.display = False
            return
        now = self.data.now
        waiting = self.data.waiting.get(group.key, [])
        with self.state.lock:
            model = self.state.model
            batch = tale.gather(model, group, waiting, now)
            est = None
            if batch is not None:
                per = tale.per_node(group.template, tale.overhead_of(model, model.autoscaling.nodes_of(group.key)),
                                    batch.request)
                est = tale.estimate(group, batch, per)
            events = tale.recent(model, group)
        self.panel = "\n".join(tale.story(group, len(waiting), self.data.never[group.key], batch, est, events, now))
        width = max(20, (box.size.width or self.app.size.width) - 2)
        box.update(wrap_markup(self.panel, width))
        box.display = True

    def apply_filter(self, text: str) -> None:
        self.refresh_data()

    @on(VirtualTable.Highlighted, "#capacity-table")
    def _highlighted(self) -> None:
        self.show_panel()

    def on_resize(self) -> None:
        if self.is_current:
            self.refresh_data()  # the table's height and the panel's lines follow the screen

    def action_open(self) -> None:
        key = self.main_widget().cursor_key
        if key is None or key not in self.data.groups:
            return
        install_group_detail(self.app).show(key)
        self.app.push_screen(GROUP_DETAIL)

    @on(VirtualTable.Selected, "#capacity-table")
    def _selected(self) -> None:
        self.action_open()
