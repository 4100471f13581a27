"""The Optuna study behind `kubeview tune`: stored in a database, resumable, shared between machines.

A study belongs to one scene job (scene file, size, spp) on one cluster: its attributes say which,
and opening it for another is refused, since their times are not comparable. `--trials N` is the
study's total: a resumed run runs only the missing trials (finished ones of any state count), and
several machines sharing the storage stop together at N. A new study's first trial is what
`kubeview --render` would run, so "best vs first" is the gain over the default.
"""

from __future__ import annotations

import threading
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import optuna
from optuna.samplers import TPESampler
from optuna.study import MaxTrialsCallback
from optuna.trial import FrozenTrial, TrialState

from kubeview.tune import records as rec
from kubeview.tune.pruner import SlowerThanBestPruner
from kubeview.tune.space import SearchSpace, TrialParams, suggest
from kubeview.tune.trial import TrialFailed, TrialRunner

HEARTBEAT_SECONDS = 10  # a RUNNING trial whose process died is marked FAIL after the grace period
HEARTBEAT_GRACE = 60


class _Exit(KeyboardInterrupt):
    """SystemExit (SIGTERM) carried through Optuna, which marks a trial failed only for an Exception or
    a KeyboardInterrupt and would leave it RUNNING; raised again as SystemExit after."""

    def __init__(self, code: object) -> None:
        super().__init__(code)
        self.code = code


class StudyError(Exception):
    """The study cannot be opened or used; one sentence."""


@dataclass(frozen=True, slots=True)
class StudySettings:
    storage: str
    name: str
    trials: int
    timeout: float | None
    seed: int
    margin: float
    space: SearchSpace
    baseline: TrialParams
    attrs: dict[str, Any]  # what the study is about: scene, size, spp, cluster (checked on resume)


def open_study(s: StudySettings) -> optuna.Study:
    """Create or load the study; raises StudyError (bad URL, unreachable database, another scene's study)."""
    optuna.logging.set_verbosity(optuna.logging.ERROR)  # kubeview says what happened to each trial itself
    try:
        with warnings.catch_warnings():  # Optuna still labels the heartbeat experimental
            warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
            storage = optuna.storages.RDBStorage(s.storage, heartbeat_interval=HEARTBEAT_SECONDS,
                                                 grace_period=HEARTBEAT_GRACE)
            study = optuna.create_study(storage=storage, study_name=s.name, direction="minimize",
                                        pruner=SlowerThanBestPruner(s.margin), load_if_exists=True)
    except Exception as exc:  # noqa: BLE001 - SQLAlchemy's many errors, ValueError for a bad URL
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise StudyError(f"cannot open study {s.name!r} in {rec.redact(s.storage)}: {first}") from None
    if study.directions != [optuna.study.StudyDirection.MINIMIZE]:
        raise StudyError(f"study {s.name!r} does not minimize a time; use another --study-name")
    old = study.user_attrs
    if old:
        differs = [k for k, v in s.attrs.items() if k in old and old[k] != v]
        if differs:
            k = differs[0]
            raise StudyError(f"study {s.name!r} was made for {k} {old[k]!r}, not {s.attrs[k]!r}; "
                             "use another --study-name")
    else:
        for k, v in s.attrs.items():
            study.set_user_attr(k, v)
    trials = study.get_trials(deepcopy=False)
    # a resumed run must not draw the first run's random points again
    study.sampler = TPESampler(seed=s.seed + len(trials))
    if not trials:
        study.enqueue_trial(s.baseline.as_dict())
    return study


def finished(study: optuna.Study) -> list[FrozenTrial]:
    return [t for t in study.get_trials(deepcopy=False) if t.state in rec.FINISHED]


class Tuner:
    """Runs the study's missing trials with a `TrialRunner`; `on_trial` is called after each one."""

    def __init__(self, study: optuna.Study, settings: StudySettings, runner: TrialRunner,
                 on_trial: Callable[[FrozenTrial], None] = lambda t: None) -> None:
        self.study, self.settings, self.runner, self.on_trial = study, settings, runner, on_trial
        self.stop = threading.Event()
        self.idle = threading.Event()  # set while no trial runs (the TUI's quit waits for it)
        self.idle.set()

    def cancel(self) -> None:
        """Stop after the running trial, which is itself stopped (failed: interrupted) and cleaned up."""
        self.stop.set()
        self.runner.cancel.set()

    def remaining(self) -> int:
        return max(0, self.settings.trials - len(finished(self.study)))

    def objective(self, trial: optuna.Trial) -> float:
        try:
            params = suggest(trial, self.settings.space)
        except ValueError as exc:  # e.g. a range made log-scaled differently by another kubeview version
            trial.set_user_attr(rec.ATTR_REASON, f"cannot draw its parameters: {exc}")
            raise TrialFailed(str(exc)) from None
        try:
            return self.runner.run(trial, params)
        except SystemExit as exc:
            raise _Exit(exc.code) from None

    def run(self) -> None:
        todo = self.remaining()
        if todo == 0:
            return
        states = rec.FINISHED

        def after(study: optuna.Study, trial: FrozenTrial) -> None:
            self.on_trial(trial)
            if self.stop.is_set():
                study.stop()

        self.idle.clear()
        try:
            if not self.stop.is_set():
                self.study.optimize(self.objective, n_trials=todo, timeout=self.settings.timeout,
                                    catch=(TrialFailed,),
                                    callbacks=[after, MaxTrialsCallback(self.settings.trials, states=states)],
                                    gc_after_trial=False, show_progress_bar=False)
        except _Exit as exc:
            raise SystemExit(exc.code) from None
        finally:
            self.idle.set()

    def records(self) -> list[rec.TrialRecord]:
        return [rec.TrialRecord.of(t) for t in self.study.get_trials(deepcopy=False)
                if t.state != TrialState.WAITING]
