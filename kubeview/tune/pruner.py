"""Pruning: stop a trial that is clearly slower than the best one so far.

A trial reports, at step k (k = 1..STEPS-1), the producer's elapsed seconds when k/STEPS of the
samples were done. It is stopped when it is `margin` times slower than the best complete trial was
at the same step (at STEPS: the best trial's whole time), from step `warmup` on: the first steps of
a render are mostly consumer start-up, which says little about the rest. Optuna's median and
percentile pruners compare with typical trials; a tuner wants to stop spending minutes on a setting
already known to lose, and nothing else.
"""

from __future__ import annotations

import optuna
from optuna.pruners import BasePruner
from optuna.trial import FrozenTrial, TrialState

STEPS = 10  # a report each 10% of the samples
WARMUP_STEPS = 3  # no pruning before 30%
DEFAULT_MARGIN = 1.5


def best_at(study: optuna.Study, step: int) -> float | None:
    """The best complete trial's elapsed seconds at `step` (its whole time at STEPS); None before any
    trial completed."""
    done = [t for t in study.get_trials(deepcopy=False, states=(TrialState.COMPLETE,)) if t.value is not None]
    if not done:
        return None
    best = min(done, key=lambda t: (t.value, t.number))
    return best.value if step >= STEPS else best.intermediate_values.get(step)


def overdue(study: optuna.Study, step: int, elapsed: float, margin: float, warmup: int = WARMUP_STEPS) -> float | None:
    """The best trial's time at `step` when `elapsed` there is over `margin` times it, else None."""
    if step < warmup:
        return None
    best = best_at(study, step)
    return best if best is not None and elapsed > margin * best else None


class SlowerThanBestPruner(BasePruner):
    """Prune when the last reported value is above `margin` x the best complete trial's at that step."""

    def __init__(self, margin: float = DEFAULT_MARGIN, warmup: int = WARMUP_STEPS) -> None:
        if not margin >= 1.0:
            raise ValueError("the pruning margin must be 1 or more")
        self.margin, self.warmup = margin, warmup

    def prune(self, study: optuna.Study, trial: FrozenTrial) -> bool:
        step = trial.last_step
        if step is None:
            return False
        return overdue(study, step, trial.intermediate_values[step], self.margin, self.warmup) is not None
