"""A trial that reached 100% is COMPLETE, never "pruned at 100%" (#24 item 12), and pruning reasons
read as sentences. The render job is scripted (its statuses are what a producer's /status says);
the study, the pruner and TrialRunner are the real ones."""

from __future__ import annotations

from pathlib import Path

import optuna
from optuna.trial import TrialState, create_trial
from test_tune_parts import DISTS, PARAMS

from kubeview.render.local import RenderProgress
from kubeview.render.status import RenderStatus, TaskCounts
from kubeview.tune import records as rec
from kubeview.tune.pruner import SlowerThanBestPruner
from kubeview.tune.space import TrialParams
from kubeview.tune.trial import TrialRunner


def status(fraction: float, elapsed: float, finished: bool = False) -> RenderStatus:
    return RenderStatus(scene="s", width=8, height=8, spp=100, tasks=TaskCounts(10, int(10 * fraction), 0, 0, 0),
                        samples_done=int(6400 * fraction), samples_total=6400, samples_per_second=1.0,
                        eta_seconds=None, elapsed_seconds=elapsed, finished=finished, output=None)


class ScriptedJob:
    """Answers `poll()` with the next status; the last one again once the script is spent."""

    def __init__(self, statuses: list[RenderStatus]) -> None:
        self.statuses = statuses

    def start(self) -> None:
        pass

    def poll(self) -> RenderProgress:
        s = self.statuses.pop(0) if len(self.statuses) > 1 else self.statuses[0]
        return RenderProgress(s, 1, 0, 0, None, "Running")

    def stop(self) -> None:
        pass

    def pods_left(self) -> int:
        return 0


class SameImage:
    def matches(self, raw: Path | None, png: Path) -> None:
        return None


def run_trial(tmp_path: Path, statuses: list[RenderStatus]) -> rec.TrialRecord:
    study = optuna.create_study(storage=f"sqlite:///{tmp_path / 's.db'}", pruner=SlowerThanBestPruner(1.5))
    best = {step: 0.02 * step for step in range(1, 10)}
    study.add_trial(create_trial(value=0.2, params=PARAMS, distributions=DISTS, intermediate_values=best))
    runner = TrialRunner(make_job=lambda *a: ScriptedJob(statuses), reference=SameImage, workdir=tmp_path,
                         margin=1.5, trial_timeout=60, start_timeout=60, poll_seconds=0)
    study.optimize(lambda t: runner.run(t, TrialParams(**PARAMS)), n_trials=1, catch=())
    return rec.TrialRecord.of(study.trials[-1])


def test_a_trial_at_100_percent_completes_however_slow(tmp_path: Path) -> None:
    """All samples in at 0.7 s (3.5x the best trial's whole 0.2 s), the image written after: the
    trial used to be pruned there "0.7 s before 100% is over 1.5x the best trial's 0.2 s its whole time"."""
    record = run_trial(tmp_path, [status(0.0, 0.0), status(1.0, 0.7), status(1.0, 0.7), status(1.0, 0.7, True)])
    assert (record.state, record.value) == ("COMPLETE", 0.7)


def test_a_pruning_reason_is_a_sentence(tmp_path: Path) -> None:
    record = run_trial(tmp_path, [status(0.0, 0.0), status(0.5, 0.6)])
    assert record.state == TrialState.PRUNED.name
    assert rec.outcome_text(record) == ("pruned at 50% (0.6 s): it was at 50% after 0.6 s, while the best trial "
                                        "reached 30% in 0.1 s: more than 1.5x slower.")
