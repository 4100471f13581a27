"""Tune: `kubeview tune SCENE` watched live — the trials, the best so far, wall time plotted.

A worker runs the study (`Tuner.run`, trials one after another) and posts `TuneUpdated`: every
trial when one finishes (read from the study in that thread, never on the UI thread) and, a few
times a second, the running trial's progress. The table lists the trials (parameters, Running /
Pending consumers, wall time, state, why a trial failed or was pruned); plotext plots (through
textual-plotext) show wall time per trial with the best so far, and against each parameter.
Quitting cancels the running trial (recorded as failed: interrupted) and deletes its job.
"""

from __future__ import annotations

import time
from typing import Any, ClassVar

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import BindingType
from textual.containers import Horizontal
from textual.widgets import Static
from textual_plotext import PlotextPlot

from kubeview.tui.messages import TuneUpdated
from kubeview.tui.rows.column import Column
from kubeview.tui.screens.base import ClusterScreen
from kubeview.tui.widgets.table_rows import Rows
from kubeview.tui.widgets.virtual_table import VirtualTable
from kubeview.tune import records as rec

LIVE_EVERY = 0.25  # seconds between live updates posted by the worker
COLUMNS = [  # the wall time next to the state: what a glance is for, before the parameters
    Column("number", "#", 3, "right"),
    Column("state", "STATE", 8),
    Column("wall", "WALL", 7, "right"),
    Column("replicas", "REPLICAS", 8, "right"),
    Column("cpu", "CPU", 6, "right"),
    Column("spt", "SPP/TASK", 8, "right"),
    Column("tile", "TILE", 4, "right"),
    Column("running", "RUNNING", 7, "right"),
    Column("pending", "PENDING", 7, "right"),
    Column("note", "NOTE", 0),
]
STATE_STYLE = {"COMPLETE": "green", "PRUNED": "yellow", "FAIL": "red", "RUNNING": "bold cyan"}
PARAM_PLOTS = (("replicas", "replicas"), ("cpu_millis", "cpu (m)"), ("samples_per_task", "samples/task"),
               ("tile", "tile"))


class TuneScreen(ClusterScreen):
    SCREEN_TITLE = "Tune"
    FILTERABLE = False
    BINDINGS: ClassVar[list[BindingType]] = []

    def __init__(self) -> None:
        super().__init__()
        self.records: list[rec.TrialRecord] = []
        self.live: Any = None
        self.done = False

    @property
    def tuner(self) -> Any:
        return getattr(self.kv, "tuner", None)

    def compose_body(self) -> ComposeResult:
        yield Static(id="tune-summary")
        with Horizontal(id="tune-main"):
            yield VirtualTable(COLUMNS, empty="no trial yet", id="trials")
            yield PlotextPlot(id="tune-per-trial")
        with Horizontal(id="tune-params"):
            for key, _ in PARAM_PLOTS:
                yield PlotextPlot(id=f"tune-vs-{key}", classes="tune-param")

    def main_widget(self) -> VirtualTable:
        return self.query_one("#trials", VirtualTable)

    def on_resize(self) -> None:
        self.set_class(self.size.height < 30, "-short")
        self.set_class(self.size.width < 100, "-narrow")

    def on_mount(self) -> None:
        super().on_mount()
        self.query_one("#trials").border_title = "Trials"
        if self.tuner is None:
            self.query_one("#tune-summary", Static).update("No study is running. Start one with:  kubeview tune three-spheres")
            return
        self._show()
        self.run_study()

    @work(thread=True, exclusive=True, group="tune", exit_on_error=False, name="tuning")
    def run_study(self) -> None:
        tuner = self.tuner
        last = [0.0]

        def on_live(live: Any) -> None:
            now = time.monotonic()
            if now - last[0] >= LIVE_EVERY or live.phase != "rendering":
                last[0] = now
                self.post_message(TuneUpdated(live=live))

        def on_trial(_trial: Any) -> None:
            self.post_message(TuneUpdated(records=tuner.records()))

        tuner.runner.on_live, tuner.on_trial = on_live, on_trial
        self.post_message(TuneUpdated(records=tuner.records()))  # a resumed study's trials, at once
        try:
            tuner.run()
        except BaseException as exc:  # noqa: BLE001 - a cancelled trial, a lost database: one line, never a crash
            if not tuner.stop.is_set():
                self.post_message(TuneUpdated(records=tuner.records(), error=f"{type(exc).__name__}: {exc}", done=True))
                return
        self.post_message(TuneUpdated(records=tuner.records(), done=True))

    @on(TuneUpdated)
    def _updated(self, event: TuneUpdated) -> None:
        if event.records is not None:
            self.records = event.records
            self.live = None
        if event.live is not None:
            self.live = event.live
        if event.done:
            self.done, self.live = True, None
        if event.error:
            self.kv.banner = (f"tune stopped: {event.error}", "error")
        self._show()

    # -- drawing -----------------------------------------------------------------------------------
    def _show(self) -> None:
        self.query_one("#tune-summary", Static).update(self._summary())
        shown = [r for r in self.records if not (self.live is not None and r.number == self.live.number)]
        live_row = self._live_record()
        rows = {r.number: r for r in shown}
        if live_row is not None:
            rows[live_row.number] = live_row
        order = sorted(rows, reverse=True)  # the newest first: the running trial on top
        self.main_widget().rows = Rows(order, lambda n: _cells(rows[n]))
        self._plot()

    def _live_record(self) -> rec.TrialRecord | None:
        live = self.live
        if live is None:
            return None
        p = live.progress
        frac = p.status.fraction if p is not None and p.status is not None else None
        return rec.TrialRecord(number=live.number, state="RUNNING", value=None, params=live.params.as_dict(),
                               running=p.running if p is not None else None, pending=p.pending if p is not None else None,
                               wall_seconds=live.elapsed, fraction=frac,
                               reason=f"{live.phase}" + (f" {100 * frac:.0f}%" if frac is not None else ""))

    def _summary(self) -> Text:
        t = self.tuner
        if t is None:
            return Text("")
        s = t.settings
        done = sum(1 for r in self.records if r.finished)
        out = Text.assemble(("study ", "dim"), (s.name, "bold"), (" in ", "dim"), rec.redact(s.storage),
                            ("   trials ", "dim"), f"{done}/{s.trials}", ("   finished" if self.done else "", "bold green"))
        out.append("\n")
        best = rec.best_of(self.records)
        out.append(rec.best_line(self.records) if best is not None else "best: none yet",
                   style="bold" if best is not None else "dim")
        return out

    def _plot(self) -> None:
        done = [r for r in self.records if r.state == "COMPLETE" and r.value is not None]
        per = self.query_one("#tune-per-trial", PlotextPlot)
        draw_per_trial(per.plt, self.records)
        per.refresh()
        for key, label in PARAM_PLOTS:
            w = self.query_one(f"#tune-vs-{key}", PlotextPlot)
            w.plt.clear_data()
            w.plt.clear_figure()
            w.plt.title(f"wall (s) vs {label}")
            pts = [(r.params[key], r.value) for r in done if key in r.params]
            if pts:
                w.plt.scatter([x for x, _ in pts], [y for _, y in pts], marker="●", color="green")
                ticks: list[float] = [*integer_ticks([x for x, _ in pts])]  # parameters are whole numbers
                w.plt.xticks(ticks)
            w.refresh()


def draw_per_trial(plt: Any, records: list[rec.TrialRecord]) -> None:  # noqa: ANN401 - plotext's module or a widget's
    """Wall time per trial with the best so far, into `plt` (plotext's API); trial numbers on whole ticks."""
    done = [r for r in records if r.state == "COMPLETE" and r.value is not None]
    stopped = [r for r in records if r.state in ("PRUNED", "FAIL") and r.wall_seconds is not None]
    plt.clear_data()
    plt.clear_figure()
    plt.title("wall time per trial (s)")
    if done:
        best_x, best_y, best = [], [], float("inf")
        for number, value in sorted((r.number, r.value) for r in done if r.value is not None):  # (trials' numbers differ)
            best = min(best, value)
            best_x.append(number)
            best_y.append(best)
        plt.plot(best_x, best_y, marker="braille", color="cyan", label="best so far")
        plt.scatter([r.number for r in done], [r.value for r in done], marker="●", color="green", label="complete")
    if stopped:
        plt.scatter([r.number for r in stopped], [r.wall_seconds for r in stopped], marker="x", color="red",
                    label="pruned/failed")
    if done or stopped:  # (#42: one trial's axis read 0.50 … 1.50)
        plt.xticks(integer_ticks([r.number for r in done + stopped]))


def integer_ticks(values: list[int], most: int = 6) -> list[int]:
    """Whole-number ticks over `values`: each one when few, else a round step (1, 2, 5 × 10^k), at most `most`."""
    lo, hi = min(values), max(values)
    i = 0
    while (hi - lo) // (step := (1, 2, 5)[i % 3] * 10 ** (i // 3)) + 1 > most:
        i += 1
    first = -(-lo // step) * step
    return list(range(first, hi + 1, step)) or [lo]


def _cells(r: rec.TrialRecord) -> list:
    p = r.params
    wall = r.value if r.value is not None else r.wall_seconds
    note = r.reason or ("image identical" if r.image == "identical" else "")
    return [str(r.number), Text(r.state.lower(), style=STATE_STYLE.get(r.state, "")),
            f"{wall:.2f}s" if wall is not None else "-", _num(p.get("replicas")),
            f"{p['cpu_millis']}m" if "cpu_millis" in p else "-", _num(p.get("samples_per_task")),
            _num(p.get("tile")), _num(r.running), _num(r.pending), note]


def _num(value: int | None) -> str:
    return "-" if value is None else str(value)
