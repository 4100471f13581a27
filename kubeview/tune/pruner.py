"""Pruning: stop a trial that is clearly slower than the best one so far.

A trial reports, at step k (k = 1..STEPS), the producer's elapsed seconds when k/STEPS of the samples
were done. It is pruned when it is `margin` times slower than the fastest complete trial was at the
same step (the best trial is the fastest complete one). Optuna's median and percentile pruners compare with typical trials; a tuner wants to stop
spending minutes on a setting already known to lose, and nothing else.
"""

from __future__ import annotations

import optuna
from optuna.pruners import BasePruner
from optuna.trial import FrozenTrial, TrialState

STEPS = 10  # a report each 10% of the samples
DEFAULT_MARGIN = 1.5


def best_at(study: optuna.Study, step: int) -> float | None:
    """The best complete trial's elapsed seconds at `step` (None before any trial completed)."""
    done = [t for t in study.get_trials(deepcopy=False, states=(TrialState.COMPLETE,)) if t.value is not None]
    if not done:
        return None
    best = min(done, key=lambda t: (t.value, t.number))
    return best.intermediate_values.get(step)


def clearly_slower(elapsed: float, best: float | None, margin: float) -> bool:
    return best is not None and elapsed > margin * best


class SlowerThanBestPruner(BasePruner):
    """Prune when the last reported value is above `margin` x the best complete trial's at that step."""

    def __init__(self, margin: float = DEFAULT_MARGIN) -> None:
        if not margin >= 1.0:
            raise ValueError("the pruning margin must be 1 or more")
        self.margin = margin

    def prune(self, study: optuna.Study, trial: FrozenTrial) -> bool:
        step = trial.last_step
        if step is None:
            return False
        return clearly_slower(trial.intermediate_values[step], best_at(study, step), self.margin)
