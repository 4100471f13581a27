"""Quota (`8`, `:quota`): whose share of the cluster each namespace has used, and what quota holds back.

One row per namespace with a ResourceQuota (or a workload held by one; rows/quota.py): its tightest
GPU, cpu and memory keys as bars of the quota controller's used against hard, the workloads the quota
admission refused pods of, and kubeview's own count where it differs from the controller's. The panel
under the table (rows/quota_panel.py) is the selected namespace's quotas key by key and its held
workloads. Enter opens the namespace: every key with both counts, each hold with the API server's words.
Without any quota the table says so, and why when the source could not read them (a 403).

Where the cluster serves Kueue, a second table lists its ClusterQueues (rows/queues.py): GPU, cpu and
memory reserved against nominal quota as bars, borrowing, Kueue's counts and the Workloads waiting with
Kueue's own words; the panel follows the table last moved in, and Enter there opens the queue
(screens/queue_detail.py).
"""

from __future__ import annotations

from textual import events, on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.widgets import Static

from kubeview.model.kinds import queues_unavailable, quota_unavailable
from kubeview.tui.format import wrap_markup
from kubeview.tui.positions import want_positions
from kubeview.tui.rows import queues as queue_rows
from kubeview.tui.rows import quota as rows
from kubeview.tui.rows.quota_panel import panel
from kubeview.tui.screens.base import ClusterScreen
from kubeview.tui.screens.queue_detail import NAME as QUEUE_DETAIL
from kubeview.tui.screens.queue_detail import install_queue_detail
from kubeview.tui.screens.quota_detail import NAME as QUOTA_DETAIL
from kubeview.tui.screens.quota_detail import install_quota_detail
from kubeview.tui.state import ClusterState
from kubeview.tui.widgets.table_rows import Rows
from kubeview.tui.widgets.virtual_table import VirtualTable

NO_QUOTAS = "no ResourceQuota in any namespace shown"
NO_QUEUES = "no Kueue ClusterQueue"


class QuotaScreen(ClusterScreen):
    POSITIONS = True  # shows Kueue's queue positions: the source polls them while it is up (tui/positions.py)
    SCREEN_TITLE = "Quota"
    BINDINGS = [
        Binding("enter", "open", "Open", id="quota.open",
                tooltip="Open the namespace (its quotas key by key and the workloads held, in the API server's "
                        "words) or the ClusterQueue (its flavors and the Workloads waiting, in Kueue's words)"),
    ]

    def __init__(self) -> None:
        super().__init__()
        self.data = rows.QuotaRows()
        self.queues = queue_rows.QueueRows()
        self.panel_of = "quota"  # which table the panel follows: the one last moved in
        self.panel = ""  # the panel's markup as last shown (tests read it)

    def compose_body(self) -> ComposeResult:
        yield VirtualTable(rows.COLUMNS, empty=NO_QUOTAS, id="quota-table")
        yield VirtualTable(queue_rows.COLUMNS, empty=NO_QUEUES, id="queue-table")
        yield Static(id="quota-panel")

    def main_widget(self) -> VirtualTable:
        return self.query_one("#quota-table", VirtualTable)

    def update_from_state(self, state: ClusterState) -> None:
        with state.lock:
            model = state.model
            self.data = rows.build(model.quotas.quotas(), model.quota_uses(), model.held(), model.display_namespace)
            empty = quota_unavailable(model.unavailable) or NO_QUOTAS
            self.queues = queue_rows.build(model.queues, model.display_namespace)
            queues_empty = queues_unavailable(model.unavailable)
        self._show_queues(queues_empty)
        table = self.main_widget()
        table.empty = empty
        data = self.data
        keys = rows.order(data, self.filter_text)
        position = {k: i for i, k in enumerate(keys)}
        table.styles.height = max(2, min(len(keys) + 1, self.app.size.height // 2))
        table.rows = Rows(keys, lambda k: rows.cells(data, k, table.width_of), position.get,
                          stamp=lambda k: rows.stamp(data, k))
        self.show_panel()

    def _show_queues(self, unavailable: str | None) -> None:
        """The ClusterQueue table, shown where there is one (or Kueue's lists were refused: why)."""
        table = self.query_one("#queue-table", VirtualTable)
        data = self.queues
        keys = queue_rows.order(data, self.filter_text)
        position = {k: i for i, k in enumerate(keys)}
        table.display = bool(data.queues) or unavailable is not None
        table.empty = unavailable or NO_QUEUES
        table.styles.height = max(2, min(len(keys) + 1, self.app.size.height // 3))
        table.rows = Rows(keys, lambda k: queue_rows.cells(data, k, table.width_of), position.get,
                          stamp=lambda k: queue_rows.stamp(data, k))

    def show_panel(self) -> None:
        """The namespace (or ClusterQueue) under the cursor (the first one before the cursor moves)."""
        box = self.query_one("#quota-panel", Static)
        if self.panel_of == "queue" and self.queues.queues:
            queues = self.query_one("#queue-table", VirtualTable)
            name = queues.cursor_key if queues.cursor_key in self.queues.queues else next(
                iter(queue_rows.order(self.queues, self.filter_text)), None)
            lines = queue_rows.panel(self.queues.queues.get(name) if name is not None else None)
        else:
            table = self.main_widget()
            key = table.cursor_key if table.cursor_key in self.data.namespaces else next(
                iter(rows.order(self.data, self.filter_text)), None)
            lines = panel(self.data.namespaces.get(key) if key is not None else None)
        self.panel = "\n".join(lines)
        box.display = bool(lines)
        if lines:
            box.update(wrap_markup(self.panel, max(20, (box.size.width or self.app.size.width) - 2)))

    def apply_filter(self, text: str) -> None:
        self.refresh_data()

    @on(VirtualTable.Highlighted, "#quota-table")
    def _highlighted(self) -> None:
        self.panel_of = "quota"
        self.show_panel()

    @on(VirtualTable.Highlighted, "#queue-table")
    def _queue_highlighted(self) -> None:
        self.panel_of = "queue"
        self.show_panel()

    @on(events.ScreenResume)
    @on(events.ScreenSuspend)
    def _positions_wanted(self) -> None:
        want_positions(self.app)

    def on_resize(self) -> None:
        if self.is_current:
            self.refresh_data()

    def action_open(self) -> None:
        queues = self.query_one("#queue-table", VirtualTable)
        if self.focused is queues:
            self.open_queue()
            return
        key = self.main_widget().cursor_key
        if key is None or key not in self.data.namespaces:
            return
        install_quota_detail(self.app).show(key)
        self.app.push_screen(QUOTA_DETAIL)

    def open_queue(self) -> None:
        name = self.query_one("#queue-table", VirtualTable).cursor_key
        if name is None or name not in self.queues.queues:
            return
        install_queue_detail(self.app).show(name)
        self.app.push_screen(QUEUE_DETAIL)

    @on(VirtualTable.Selected, "#quota-table")
    def _selected(self) -> None:
        self.action_open()

    @on(VirtualTable.Selected, "#queue-table")
    def _queue_selected(self) -> None:
        self.open_queue()
