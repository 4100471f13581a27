"""One Kueue ClusterQueue (Enter on a row of the Quota screen's queue table): its quota per flavor and
resource against what is reserved, borrowing, the LocalQueues feeding it, the Workloads waiting in queue
order with Kueue's own reason and message, and those holding quota (rows/queues.py). Installed once
and reused, like the namespace quota screen.
"""

from __future__ import annotations

from textual import events, on
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.widgets import Static

from kubeview.tui.format import wrap_markup
from kubeview.tui.positions import want_positions
from kubeview.tui.rows import queues as rows
from kubeview.tui.screens.base import ClusterScreen, installed
from kubeview.tui.state import ClusterState

NAME = "queue-detail"


def install_queue_detail(app: App) -> QueueDetailScreen:
    return installed(app, NAME, QueueDetailScreen)  # type: ignore[return-value]


class QueueDetailScreen(ClusterScreen):
    POSITIONS = True  # shows Kueue's queue positions: the source polls them while it is up (tui/positions.py)
    SCREEN_TITLE = "ClusterQueue"
    FILTERABLE = False
    BINDINGS = [Binding("escape", "back", "Back", id="queue_detail.back", tooltip="Back to the quotas and queues")]

    def __init__(self) -> None:
        super().__init__()
        self.queue = ""
        self.text = ""  # the panel's markup as last shown (tests read it)

    def show(self, queue: str) -> None:
        self.queue = queue
        self.retitle(f"ClusterQueue {queue}")

    def compose_body(self) -> ComposeResult:
        with VerticalScroll(id="queue-detail"):
            yield Static(id="queue-text")

    def main_widget(self) -> VerticalScroll:
        return self.query_one("#queue-detail", VerticalScroll)

    def update_from_state(self, state: ClusterState) -> None:
        with state.lock:
            data = rows.build(state.model.queues)
        box = self.main_widget()
        width = box.scrollable_content_region.width or max(self.app.size.width - 4, 20)
        row = data.queues.get(self.queue)
        self.text = "\n".join(rows.panel(row, admitted=True)) if row is not None else \
            f"[dim]ClusterQueue {self.queue} is gone[/dim]"
        self.query_one("#queue-text", Static).update(wrap_markup(self.text, width))

    @on(events.ScreenResume)
    @on(events.ScreenSuspend)
    def _positions_wanted(self) -> None:
        want_positions(self.app)

    def on_resize(self) -> None:
        self.refresh_data()

    def action_back(self) -> None:
        self.app.pop_screen()
