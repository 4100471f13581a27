"""One namespace's quota (Enter on a Quota row): every key of its ResourceQuotas with hard, the quota
controller's used and kubeview's count, and each workload held by quota with the API server's message
(rows/quota_panel.py). Installed once and reused, like the node group screen.
"""

from __future__ import annotations

from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.widgets import Static

from kubeview.tui.format import wrap_markup
from kubeview.tui.rows import quota as rows
from kubeview.tui.rows.quota_panel import detail
from kubeview.tui.screens.base import ClusterScreen, installed
from kubeview.tui.state import ClusterState

NAME = "quota-detail"


def install_quota_detail(app: App) -> QuotaDetailScreen:
    return installed(app, NAME, QuotaDetailScreen)  # type: ignore[return-value]


class QuotaDetailScreen(ClusterScreen):
    SCREEN_TITLE = "Namespace quota"
    FILTERABLE = False
    BINDINGS = [Binding("escape", "back", "Back", id="quota_detail.back", tooltip="Back to the quotas")]

    def __init__(self) -> None:
        super().__init__()
        self.namespace = ""
        self.text = ""  # the panel's markup as last shown (tests read it)

    def show(self, namespace: str) -> None:
        self.namespace = namespace
        self.retitle(f"Namespace {namespace}: quota")

    def compose_body(self) -> ComposeResult:
        with VerticalScroll(id="quota-detail"):
            yield Static(id="quota-text")

    def main_widget(self) -> VerticalScroll:
        return self.query_one("#quota-detail", VerticalScroll)

    def update_from_state(self, state: ClusterState) -> None:
        with state.lock:
            model = state.model
            data = rows.build(model.quotas.in_namespace(self.namespace), model.quota_uses(),
                              {k: h for k, h in model.held().items() if k[1] == self.namespace}, self.namespace)
        box = self.main_widget()
        width = box.scrollable_content_region.width or max(self.app.size.width - 4, 20)
        self.text = detail(self.namespace, data.namespaces.get(self.namespace))
        self.query_one("#quota-text", Static).update(wrap_markup(self.text, width))

    def on_resize(self) -> None:
        self.refresh_data()

    def action_back(self) -> None:
        self.app.pop_screen()
