"""One node group (Enter on a Capacity row): its nodes, its NodeClaims on their way, and the pods waiting
on it (rows/group_panel.py). Installed once and reused, like the gang and node screens.
"""

from __future__ import annotations

import time

from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.widgets import Static

from kubeview.model.allocation import GPU
from kubeview.model.autoscaling.groups import KARPENTER
from kubeview.tui.format import wrap_markup
from kubeview.tui.rows.group_panel import NodeLine, describe
from kubeview.tui.screens.base import ClusterScreen, installed
from kubeview.tui.state import ClusterState

NAME = "group-detail"


def install_group_detail(app: App) -> GroupDetailScreen:
    return installed(app, NAME, GroupDetailScreen)  # type: ignore[return-value]


class GroupDetailScreen(ClusterScreen):
    SCREEN_TITLE = "Node group"
    FILTERABLE = False
    BINDINGS = [Binding("escape", "back", "Back", id="group.back", tooltip="Back to the node groups")]

    def __init__(self) -> None:
        super().__init__()
        self.key: tuple[str, str] = ("", "")
        self.text = ""  # the panel's markup as last shown (tests read it)

    def show(self, key: tuple[str, str]) -> None:
        self.key = key
        self.retitle(f"Node group {key[1]}")

    def compose_body(self) -> ComposeResult:
        with VerticalScroll(id="group-detail"):
            yield Static(id="group-text")

    def main_widget(self) -> VerticalScroll:
        return self.query_one("#group-detail", VerticalScroll)

    def update_from_state(self, state: ClusterState) -> None:
        now = time.time()
        with state.lock:
            model = state.model
            group = model.autoscaling.group(self.key)
            nodes: list[NodeLine] = []
            waiting = {}
            claims = []
            if group is not None:
                alloc = model.allocation()
                rows = {name: i for i, name in enumerate(alloc.nodes)}
                cols = [alloc.column(r) for r in ("cpu", "memory", GPU)]
                for name in model.autoscaling.nodes_of(self.key, model.nodes):
                    i, view = rows.get(name), model.nodes[name]
                    figures = [(0, 0) if i is None or c is None else
                               (int(alloc.requested[i, c]), int(alloc.allocatable[i, c])) for c in cols]
                    nodes.append(NodeLine(name, view.ready, figures[0], figures[1], figures[2],
                                          len(model.pods_on(name))))
                for pod, wait in model.pod_waits(now).items():
                    if wait.group == self.key:
                        pod_view = model.pods.get(pod)
                        waiting[pod] = (pod_view.owner if pod_view is not None else None, wait)
                if group.autoscaler == KARPENTER:
                    claims = model.autoscaling.nodeclaims(group.name)
        box = self.main_widget()
        width = box.scrollable_content_region.width or max(self.app.size.width - 4, 20)
        self.text = describe(group, self.key, nodes, waiting, claims, now)
        self.query_one("#group-text", Static).update(wrap_markup(self.text, width))

    def on_resize(self) -> None:
        self.refresh_data()

    def action_back(self) -> None:
        self.app.pop_screen()
