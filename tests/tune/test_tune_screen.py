"""The Tune screen with the pilot: a real study on the embedded cluster, watched live; quitting mid-trial."""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import threading
from collections.abc import Callable, Coroutine, Iterator
from pathlib import Path
from typing import Any

import optuna
import pytest

from kubeview.cli import build_parser
from kubeview.cluster.local.source import LocalSource
from kubeview.commands.tune import _inputs, build_tuner, study_settings
from kubeview.tui.app import make_app
from kubeview.tui.screens.tune import TuneScreen
from kubeview.tune.study import open_study


@pytest.fixture
def tuner_on_local(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator:  # noqa: ANN401
    """(source, make_tuner(trials)) for three-spheres at its own small size, stored under tmp_path."""
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    source = LocalSource()

    def make(trials: int, *extra: str):  # noqa: ANN202
        args = build_parser().parse_args(["tune", "three-spheres", "--trials", str(trials), "--replicas", "1:2",
                                          "--samples-per-task", "4", "--seed", "3",
                                          "--storage", f"sqlite:///{tmp_path / 'tune.db'}", *extra])
        args.local = True
        scene, space, (first, job) = _inputs(args, False)
        settings = study_settings(args, scene, space, first, job, False)
        return build_tuner(args, source, scene, open_study(settings), settings, tmp_path)

    try:
        yield source, make
    finally:
        source.close()


async def _until(pilot, test, what: str, tries: int = 600) -> None:  # noqa: ANN001
    for _ in range(tries):
        if test():
            return
        await pilot.pause(0.05)
    raise AssertionError(f"never: {what}")


def run_async(test: Callable[..., Coroutine[Any, Any, None]]) -> Callable[..., None]:
    """An async test run with asyncio (no pytest async plugin), as tests/tui does."""

    @functools.wraps(test)
    def wrapper(*args: Any, **kwargs: Any) -> None:
        asyncio.run(test(*args, **kwargs))

    return wrapper


@pytest.mark.slow
@pytest.mark.timeout(120)
@run_async
async def test_tune_screen_shows_the_study_live(tuner_on_local) -> None:  # noqa: ANN001
    source, make = tuner_on_local
    tuner = make(2, "--prune-margin", "1000")  # both complete: load made trial 1 slow enough to be pruned
    release = threading.Event()
    _hold_open_the_job_of_trial(tuner, 1, until=release)  # trial 1 is seen rendering by construction
    app = make_app(source, tuner=tuner)
    async with app.run_test(size=(140, 45)) as pilot:
        screen = app.screen
        assert isinstance(screen, TuneScreen)
        await _until(pilot, lambda: screen.live is not None and screen.live.phase == "rendering"
                     and screen.live.number == 1, "trial 1 rendering")
        running = screen.main_widget().rows.cells(1)
        release.set()
        await _until(pilot, lambda: screen.done, "the study finished")
        rows = screen.main_widget().rows
        assert list(rows.keys) == [1, 0]  # newest first
        cells = [rows.cells(k) for k in rows.keys]
        assert [str(c[1]) for c in cells] == ["complete", "complete"]
        assert [c[-1] for c in cells] == ["image identical"] * 2
        assert cells[1][3:7] == ["2", "1000m", "4", "16"]  # trial 0: the default job
        assert all(c[2].endswith("s") and float(c[2][:-1]) > 0 for c in cells)  # its wall time
        assert str(running[1]) == "running" and running[-1].startswith("rendering")
        summary = str(screen.query_one("#tune-summary").render())
        assert "trials 2/2" in summary and "best: trial" in summary
        svg = app.export_screenshot()
        for title in ("wall time per trial", "best so far", "wall (s) vs replicas", "wall (s) vs tile"):
            assert title.replace(" ", "&#160;") in svg or title in svg, title
        await pilot.press("q")
    app.finish_cleanup()


@pytest.mark.slow
@pytest.mark.timeout(120)
@run_async
async def test_quit_mid_trial_records_it_and_deletes_its_job(tuner_on_local) -> None:  # noqa: ANN001
    source, make = tuner_on_local
    tuner = make(4, "--prune-margin", "1000")  # held open, trial 1 must not be pruned for its time
    _hold_open_the_job_of_trial(tuner, 1)
    app = make_app(source, tuner=tuner)
    async with app.run_test(size=(140, 45)) as pilot:
        screen = app.screen
        await _until(pilot, lambda: screen.live is not None and screen.live.phase == "rendering"
                     and screen.live.number == 1, "trial 1 rendering")
        await pilot.press("q")
    app.finish_cleanup()
    trials = tuner.study.get_trials()
    assert trials[1].state == optuna.trial.TrialState.FAIL
    assert trials[1].user_attrs["reason"] == "interrupted (kubeview quit)"
    assert len([t for t in trials if t.state.is_finished()]) == 2  # no trial started after quitting
    assert source.pods("render") == []  # the job deleted and its pods gone before the app let go


class _HeldOpen:
    """A render job whose producer's "finished" the tuner never sees: the trial is running when `q`
    comes by construction (issue 23: trial 1 had finished, 0.3 s, before `q` arrived)."""

    def __init__(self, job: Any, until: threading.Event | None) -> None:
        self._job = job
        self._until = until  # shows "finished" once set (None: never)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._job, name)

    def poll(self) -> Any:
        progress = self._job.poll()
        if progress.status is not None and progress.status.finished and not (self._until and self._until.is_set()):
            progress = dataclasses.replace(progress, status=dataclasses.replace(progress.status, finished=False))
        return progress


def _hold_open_the_job_of_trial(tuner: Any, number: int, until: threading.Event | None = None) -> None:
    made: list[Any] = []
    real = tuner.runner.make_job

    def make_job(*args: Any, **kwargs: Any) -> Any:
        job = real(*args, **kwargs)
        made.append(job)
        return _HeldOpen(job, until) if len(made) == number + 1 else job

    tuner.runner.make_job = make_job
