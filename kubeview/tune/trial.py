"""One tuning trial: run the render job with a trial's parameters, time it, check it, clean up.

The job is the one `kubeview --render` runs (`LocalRenderJob` on the embedded cluster, `KubeRenderJob`
on a real one), made by the caller's `make_job`. The objective is the producer's own elapsed time
when it finished. Every `STEPS`-th of the samples the elapsed time is reported to Optuna for pruning.
A trial that fails (the job's error, a timeout, an image that is not the reference's bits, Ctrl-C)
raises with its reason stored as the `reason` user attribute, so the study records it as failed.
Whatever happens, the job is deleted and its pods waited for before the next trial starts.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import optuna

from kubeview.render.local import RenderError, RenderProgress
from kubeview.tune import records as rec
from kubeview.tune.pruner import STEPS, WARMUP_STEPS, overdue
from kubeview.tune.reference import Reference, ReferenceRenderError
from kubeview.tune.space import TrialParams

POLL_SECONDS = 0.1
GONE_TIMEOUT = 120.0  # how long to wait for a trial's pods to go before the next one starts


class Cancelled(Exception):
    """The tuner was asked to stop (the TUI quit) while this trial ran."""


class TrialFailed(Exception):
    """The trial could not produce a valid time; the message is its reason (also a user attribute)."""


@dataclass(frozen=True, slots=True)
class Live:
    """A running trial as the progress display sees it."""

    number: int
    params: TrialParams
    phase: str  # reference render | starting | rendering | checking | cleaning up
    progress: RenderProgress | None = None
    elapsed: float = 0.0


@dataclass
class TrialRunner:
    """What every trial of a study shares. `make_job(params, output, raw)` returns a started-able job."""

    make_job: Callable[[TrialParams, Path, Path | None], Any]
    reference: Callable[[], Reference]  # the one reference of the study (task sizes cannot change it)
    workdir: Path
    margin: float
    trial_timeout: float
    start_timeout: float
    on_live: Callable[[Live], None] = lambda live: None
    poll_seconds: float = POLL_SECONDS
    raw: bool = True  # the job can write the float image (the local cluster); else the PNG is compared
    cancel: threading.Event = field(default_factory=threading.Event)

    def run(self, trial: optuna.Trial, params: TrialParams) -> float:
        out = self.workdir / f"trial-{trial.number}.png"
        raw = self.workdir / f"trial-{trial.number}.npy" if self.raw else None
        job = None
        try:
            self.on_live(Live(trial.number, params, "reference render"))
            try:  # before the job starts: made once per scene, size and spp, then read from the cache
                ref = self.reference()
            except ReferenceRenderError as exc:
                self._fail(trial, str(exc))
            job = self.make_job(params, out, raw)
            try:
                job.start()
            except RenderError as exc:
                self._fail(trial, f"the render did not start: {exc}")
            wall = self._follow(trial, params, job)
            self.on_live(Live(trial.number, params, "checking"))
            mismatch = ref.matches(raw, out)
            if mismatch is not None:
                self._fail(trial, mismatch)
            trial.set_user_attr(rec.ATTR_IMAGE, "identical")
            return wall
        except (TrialFailed, optuna.TrialPruned):
            raise
        except BaseException as exc:  # Ctrl-C, SIGTERM, quit: the trial is recorded as failed, and why
            why = ("kubeview quit" if isinstance(exc, Cancelled) else "terminated" if isinstance(exc, SystemExit)
                   else type(exc).__name__)
            trial.set_user_attr(rec.ATTR_REASON, f"interrupted ({why})")
            raise
        finally:
            if job is not None:
                self.on_live(Live(trial.number, params, "cleaning up"))
                job.stop()
                _wait_gone(job)
            for path in (out, raw):
                if path is not None:
                    path.unlink(missing_ok=True)

    def _fail(self, trial: optuna.Trial, reason: str) -> None:
        trial.set_user_attr(rec.ATTR_REASON, reason)
        raise TrialFailed(reason)

    def _follow(self, trial: optuna.Trial, params: TrialParams, job: Any) -> float:
        """Poll until the producer says finished; returns its elapsed seconds. The user attributes are
        written when they change (consumers) or once at the end (time, progress): a shared database
        is not written ten times a second."""
        last: list[Any] = [None]
        try:
            return self._poll_until_done(trial, params, job, last)
        finally:
            status = last[0]
            if status is not None:
                trial.set_user_attr(rec.ATTR_WALL, round(status.elapsed_seconds, 3))
                trial.set_user_attr(rec.ATTR_FRACTION, round(status.fraction, 4))
                trial.set_user_attr(rec.ATTR_REQUEUED, status.tasks.requeued)

    def _poll_until_done(self, trial: optuna.Trial, params: TrialParams, job: Any, last: list[Any]) -> float:
        began = time.monotonic()
        reported = 0
        running_peak = -1
        study = trial.study
        while True:
            if self.cancel.is_set():
                raise Cancelled("the tuner was stopped")
            try:
                progress = job.poll()
            except RenderError as exc:
                self._fail(trial, str(exc))
            now = time.monotonic()
            if progress.running > running_peak:  # the most Running at once, and how many waited then
                running_peak = progress.running
                trial.set_user_attr(rec.ATTR_RUNNING, progress.running)
                trial.set_user_attr(rec.ATTR_PENDING, progress.pending)
            status = progress.status
            last[0] = status or last[0]
            elapsed = status.elapsed_seconds if status is not None else now - began
            self.on_live(Live(trial.number, params, "rendering" if status is not None else "starting",
                              progress, elapsed))
            if status is not None:
                if status.finished:
                    return status.elapsed_seconds
                # at 100% every sample is in and the time is known: the trial waits for its image and
                # is COMPLETE (slow or not, data for the sampler), never "pruned at 100%"
                if status.fraction < 1.0:
                    reported = self._check(trial, study, status.fraction, elapsed, reported)
            elif now - began > self.start_timeout:
                why = progress.pending_reason or progress.producer_phase
                self._fail(trial, f"the producer did not answer within {self.start_timeout:g} s ({why})")
            if now - began > self.trial_timeout:
                self._fail(trial, f"timed out after {self.trial_timeout:g} s")
            time.sleep(self.poll_seconds)

    def _check(self, trial: optuna.Trial, study: optuna.Study, fraction: float, elapsed: float,
               reported: int) -> int:
        """Report the steps reached and prune when clearly slower than the best; the steps reported."""
        reached = int(fraction * STEPS + 1e-9)
        while reported < min(reached, STEPS - 1):
            reported += 1
            trial.report(elapsed, reported)
            if trial.should_prune():
                self._prune(trial, self._slower(fraction, elapsed, reported, overdue(study, reported, elapsed,
                                                                                     self.margin, warmup=0)))
        # not at the next step yet, but already further behind than the best was there
        nxt = max(reported + 1, WARMUP_STEPS)
        best = overdue(study, nxt, elapsed, self.margin)
        if best is not None:
            self._prune(trial, self._slower(fraction, elapsed, nxt, best))
        return reported

    def _slower(self, fraction: float, elapsed: float, step: int, best: float | None) -> str:
        """Why a trial was pruned, as a sentence: where it was, and where the best trial was when."""
        there = "finished" if step >= STEPS else f"reached {100 * step // STEPS}%"
        when = f" in {best:.1f} s" if best is not None else ""
        return (f"it was at {100 * fraction:.0f}% after {elapsed:.1f} s, while the best trial {there}{when}: "
                f"more than {self.margin:g}x slower.")

    def _prune(self, trial: optuna.Trial, reason: str) -> None:
        trial.set_user_attr(rec.ATTR_REASON, reason)
        raise optuna.TrialPruned(reason)


def _wait_gone(job: Any, timeout: float = GONE_TIMEOUT) -> None:
    """Until the job's pods (and a namespace it created) are gone; a cluster that cannot be asked
    is not waited on (the next trial's start then says what is wrong)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if job.pods_left() == 0:
                return
        except RenderError:
            return
        time.sleep(0.1)
