"""Render: the distributed ray-tracer filling in, its progress, its consumers, scaling at `+`/`-`.

A worker polls the render job every half second (`poll()`: the producer's /status plus the consumer
pods; `image_png()`: the image so far, fetched when new samples arrived) and posts `RenderUpdated`.
When the job finishes the screen says where the image was written.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.widgets import Static
from textual.worker import get_current_worker

from kubeview.cluster.source import MaybeDemo
from kubeview.render.status import RenderStatus
from kubeview.tui import format as fmt
from kubeview.tui.actions import report_action
from kubeview.tui.messages import RenderUpdated
from kubeview.tui.rows.column import Column
from kubeview.tui.screens.base import ClusterScreen
from kubeview.tui.widgets.half_block_image import HalfBlockImage
from kubeview.tui.widgets.render_progress import RenderProgressView
from kubeview.tui.widgets.table_rows import Rows
from kubeview.tui.widgets.virtual_table import VirtualTable

POLL_SECONDS = 0.5
IMAGE_EVERY = 1.0  # fetch the image at most this often while it fills in
CONSUMER_COLUMNS = [
    Column("id", "CONSUMER", 0, whole=True),  # cut in the middle: consumers differ at their ends
    Column("state", "STATE", 7),
    Column("tasks", "TASKS", 5, "right"),
    Column("rate", "SAMPLE/S", 8, "right"),
    Column("seen", "SEEN", 4, "right"),
]
STATE_STYLE = {"working": "green", "idle": "yellow", "gone": "dim"}


class RenderScreen(ClusterScreen):
    SCREEN_TITLE = "Render"
    FILTERABLE = False
    BINDINGS = [
        Binding("plus,equals_sign", "scale(1)", "Consumers +1", id="render.scale_up",
                tooltip="Start one more render consumer"),
        Binding("minus", "scale(-1)", "Consumers -1", id="render.scale_down",
                tooltip="Stop one render consumer (it hands its task back)"),
    ]

    def __init__(self) -> None:
        super().__init__()
        self.progress: Any = None
        self.replicas: int | None = None

    @property
    def job(self) -> Any:
        return self.kv.render_job

    def compose_body(self) -> ComposeResult:
        yield RenderProgressView(id="render-progress")
        with Horizontal(id="render-main"):
            yield HalfBlockImage("the image appears here as samples arrive", id="render-image")
            yield VirtualTable(CONSUMER_COLUMNS, empty="no consumer connected yet", id="consumers")
        yield Static(id="render-result")

    def main_widget(self) -> VirtualTable:
        return self.query_one("#consumers", VirtualTable)

    def on_mount(self) -> None:
        super().on_mount()
        self.query_one("#render-image").border_title = "Image"
        self.query_one("#consumers").border_title = "Consumers"
        if self.job is None:  # one message: not also the progress view's "waiting for the producer…"
            self.query_one(RenderProgressView).display = False
            from kubeview.render.cpu_hint import render_command

            source = self.kv.source
            command = render_command(self.kv.state.model.allocation(), demo=isinstance(source, MaybeDemo) and source.demo)
            self.query_one("#render-result", Static).update(f"No render is running. Start one with:  {command}")
            self.query_one("#render-result").add_class("-idle")
        else:
            self.follow()

    @work(thread=True, exclusive=True, group="render", exit_on_error=False, name="following the render")
    def follow(self) -> None:
        worker = get_current_worker()
        job, stop = self.job, self.kv.stopping
        last_image = 0.0
        last_samples = -1
        while not worker.is_cancelled and not stop.is_set():
            try:
                progress = job.poll() if hasattr(job, "poll") else job.status()
            except Exception as exc:  # the job's RenderError: one sentence; keep following
                self.post_message(RenderUpdated(None, error=str(exc)))
                stop.wait(2.0)
                continue
            status = getattr(progress, "status", progress)
            png = None
            now = time.monotonic()
            finished = bool(getattr(status, "finished", False))
            samples = getattr(status, "samples_done", 0)
            if status is not None and (finished or (samples != last_samples and now - last_image >= IMAGE_EVERY)):
                png = job.image_png()
                last_image, last_samples = now, samples
            self.post_message(RenderUpdated(progress, png))
            if finished and png is not None:
                return
            stop.wait(POLL_SECONDS)

    @on(RenderUpdated)
    def _updated(self, event: RenderUpdated) -> None:
        if event.error:
            self.kv.banner = (f"render: {event.error}", "error")
            return
        progress = event.status
        self.progress = progress
        self.query_one(RenderProgressView).progress = progress
        if event.png is not None:
            self.query_one(HalfBlockImage).png = event.png
        running, pending = getattr(progress, "running", None), getattr(progress, "pending", None)
        if running is not None and self.replicas is None:
            self.replicas = running + (pending or 0)
        status = getattr(progress, "status", progress)  # a job's poll() has it, a bare status() is it
        if not isinstance(status, RenderStatus):
            return  # (None: the producer has not said anything yet)
        consumers = {c.id: c for c in status.consumers}
        order = sorted(consumers, key=lambda cid: (consumers[cid].state == "gone", cid))
        finished = status.finished
        self.main_widget().rows = Rows(order, lambda cid: _consumer_cells(consumers[cid], finished))
        if status.finished:
            where = getattr(getattr(self.job, "settings", None), "output", None) or status.output
            result = self.query_one("#render-result", Static)
            result.update(Text.assemble(("finished ", "bold green"),
                                        f"in {fmt.duration(status.elapsed_seconds)}: image written to ",
                                        (shown_path(where) if where else "(a path not said)", "bold")))
            result.add_class("-done")

    def action_scale(self, delta: int) -> None:
        why = self._not_scalable()
        if why:  # said where the eye is, not a key that does nothing (#42)
            self.app.notify(why, severity="warning")
            return
        current = self.replicas if self.replicas is not None else 0
        self.replicas = max(0, current + delta)
        self.kv.banner = (f"scaling render consumers to {self.replicas}…", "")
        self._scale(self.replicas)

    def _not_scalable(self) -> str:
        """Why `+`/`-` cannot scale the render now; "" when they can."""
        if self.job is None:
            return "No render is running, so there are no consumers to scale; the line below says how to start one."
        status = getattr(self.progress, "status", self.progress)
        if status is not None and getattr(status, "finished", False):
            return "The render is finished: there are no consumers left to scale."
        return ""

    @work(thread=True, group="actions", exit_on_error=False, name="scaling the render")
    def _scale(self, replicas: int) -> None:
        # a RenderError is one sentence too; the app shows the banner
        report_action(self.app.post_message, lambda: self.job.scale(replicas), f"render consumers scaled to {replicas}.")


def _consumer_cells(c: Any, finished: bool = False) -> list:
    """A consumer's row; its rate only while it works (#24: a finished render showed a consumer
    `idle 1.0M`, the producer's last rate for it, as if it still rendered)."""
    working = c.state == "working" and not finished
    rate = fmt.rate(c.samples_per_second).removesuffix("/s") if working else Text("-", style="dim")
    # the column says CONSUMER: the pod's own part of the name is what tells them apart
    return [c.id.removeprefix("consumer-"), Text(c.state, style=STATE_STYLE.get(c.state, "")), str(c.tasks_done), rate,
            fmt.duration(c.last_seen_seconds)]


def shown_path(path: str | Path) -> str:
    """The path as the user would type it: relative below the working directory, else `~/...`, else
    absolute (a screenshot must not show the layout of the machine it was made on)."""
    p = Path(path)
    for base, prefix in ((Path.cwd(), ""), (Path.home(), "~/")):
        if p.is_absolute() and p.is_relative_to(base) and p != base:
            return prefix + str(p.relative_to(base))
    return str(p)
