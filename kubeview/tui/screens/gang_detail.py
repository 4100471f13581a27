"""One gang (Enter on a gang row of Workloads): its members and the fit now (rows/gang_panel.py).

The fit is computed under the live packing policy (the embedded scheduler's, or the extender's once
read; kube-scheduler's default otherwise), at most once per model version. Installed once and reused,
like the pod and node screens.
"""

from __future__ import annotations

from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.widgets import Static

from kubeview.scheduling.config import PackingConfig
from kubeview.scheduling.gang_fit import fit_of
from kubeview.tui.format import wrap_long_lines
from kubeview.tui.rows.gang_panel import describe
from kubeview.tui.screens.base import ClusterScreen, installed
from kubeview.tui.state import ClusterState

NAME = "gang-detail"


def install_gang_detail(app: App) -> GangDetailScreen:
    return installed(app, NAME, GangDetailScreen)  # type: ignore[return-value]


class GangDetailScreen(ClusterScreen):
    SCREEN_TITLE = "Gang"
    FILTERABLE = False
    BINDINGS = [Binding("escape", "back", "Back", id="gang.back", tooltip="Back to the workloads and gangs")]

    def __init__(self) -> None:
        super().__init__()
        self.key: tuple[str, str, str] = ("", "", "")
        self.text = ""  # the panel's markup as last shown (tests read it)

    def show(self, key: tuple[str, str, str]) -> None:
        self.key = key
        self.retitle(f"Gang {key[1]}/{key[2]}")

    def compose_body(self) -> ComposeResult:
        with VerticalScroll(id="gang-detail"):
            yield Static(id="gang-text")

    def main_widget(self) -> VerticalScroll:
        return self.query_one("#gang-detail", VerticalScroll)

    def update_from_state(self, state: ClusterState) -> None:
        config = self.kv.packing_live or PackingConfig()
        with state.lock:
            model = state.model
            gang = model.gangs.get(*self.key)
            fit = fit_of(model, gang, config) if gang is not None and gang.members else None
            claims = {} if gang is None else {
                name: (c.node if (c := model.gpus.claims.get((gang.namespace, name))) is not None else None)
                for name in gang.claims}
        box = self.query_one("#gang-detail", VerticalScroll)
        width = box.scrollable_content_region.width or max(self.app.size.width - 4, 20)
        self.text = describe(gang, self.key, fit, config.policy, claims, width)
        self.query_one("#gang-text", Static).update(wrap_long_lines(self.text, width))

    def on_resize(self) -> None:
        self.refresh_data()  # long lines follow the width

    def action_back(self) -> None:
        self.app.pop_screen()
