"""The render's progress: a bar with ETA, samples/s with a sparkline of its history, task counts.

A view of its `progress` reactive (the render job's `RenderProgress`); it keeps the rate history
for the sparkline itself, one point per new status.
"""

from __future__ import annotations

from collections import deque
from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.reactive import reactive
from textual.widgets import ProgressBar, Sparkline, Static

from kubeview.tui import format as fmt

HISTORY = 120  # points in the sparkline (one per poll, ~0.5 s each: a minute)


class RenderProgressView(Vertical):
    progress: reactive[Any] = reactive(None, always_update=True)

    def __init__(self, *, id: str | None = None) -> None:  # noqa: A002
        super().__init__(id=id)
        self.rates: deque[float] = deque(maxlen=HISTORY)
        self._last_elapsed: float | None = None

    def compose(self) -> ComposeResult:
        yield Static("waiting for the producer…", id="render-title")
        with Horizontal(id="render-bar-row"):
            yield ProgressBar(total=1.0, show_eta=False, show_percentage=False, id="render-bar")
            yield Static(id="render-eta")
        with Horizontal(id="render-rate-row"):
            yield Static(id="render-rate")
            yield Sparkline(list(self.rates), id="render-sparkline")

    def watch_progress(self, progress: Any) -> None:
        status = getattr(progress, "status", None)
        if status is None:
            return
        if status.elapsed_seconds != self._last_elapsed:  # one point per new status, not per poll
            self._last_elapsed = status.elapsed_seconds
            self.rates.append(status.samples_per_second)
        title = Text()
        title.append(f"{status.scene}", style="bold")
        title.append(f" {status.width}x{status.height}, {status.spp} samples/pixel · ")
        running, pending = getattr(progress, "running", status.connected), getattr(progress, "pending", 0)
        restarts = getattr(progress, "restarts", 0)
        reason = getattr(progress, "pending_reason", None)
        if status.finished:
            title.append(f"done, {fmt.counted(len(status.consumers), 'consumer')} took part", style="green")
        else:
            title.append(f"{fmt.counted(running, 'consumer')} running")
            if pending:
                title.append(f", {pending} pending", style="bold yellow")
        if restarts:
            title.append(f" · {fmt.counted(restarts, 'restart')}", style="yellow")
        deaths = getattr(progress, "producer_deaths", 0)
        if deaths:
            title.append(f" · producer died {deaths}x", style="bold yellow")
        if reason and not status.finished:
            title.append(f"\n{reason}", style="yellow")
        self.query_one("#render-title", Static).update(title)
        bar = self.query_one("#render-bar", ProgressBar)
        bar.update(total=max(status.samples_total, 1), progress=status.samples_done)
        t = status.tasks
        eta = "done" if status.finished else f"ETA {fmt.duration(status.eta_seconds)}"
        self.query_one("#render-eta", Static).update(
            f" {100 * status.fraction:5.1f}%  {eta}  elapsed {fmt.duration(status.elapsed_seconds)}  "
            f"tasks {t.done}/{t.total}, {t.leased} leased, {t.requeued} requeued")
        self.query_one("#render-rate", Static).update(
            Text.assemble(("samples/s ", "bold"), (fmt.rate(status.samples_per_second), "bold cyan")))
        # a single point would draw as a full bar: the sparkline starts with the second
        self.query_one("#render-sparkline", Sparkline).data = list(self.rates) if len(self.rates) > 1 else []
