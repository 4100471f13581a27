"""One request's evaluation as the extender keeps it, and the pick of one best node from its scores.

`Evaluated` maps the nodes a request names onto the rows of a `Placement` (nodes the model does not
know stay -1 and pass); `decide` breaks ties so that kube-scheduler's random tie-break never chooses.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import repeat

import numpy as np

from kubeview.scheduling.evaluate import Placement
from kubeview.scheduling.node_index import NodeIndex
from kubeview.scheduling.protocol import ExtenderArgs


@dataclass(slots=True)
class Evaluated:
    """One pod evaluated against the nodes named in one request."""

    args: ExtenderArgs
    placement: Placement
    index: NodeIndex
    rows: np.ndarray  # request position -> placement row (-1: node unknown to the model)
    all_known: bool = True

    @property
    def known(self) -> np.ndarray:
        return self.rows >= 0

    def refused(self, reasons: frozenset[str]) -> np.ndarray:
        """Per requested node: fails one of `reasons` in our view (nodes the model does not know pass)."""
        ks = [k for k, name in enumerate(self.placement.reason_names) if name in reasons]
        if not ks:
            return np.zeros(len(self.rows), dtype=bool)
        return self.placement.failed[ks][:, self.rows].any(axis=0) & self.known

    def fit_scores(self) -> np.ndarray:
        """Per requested node, its score as if the pod fits there (a fresh array; 0 for nodes the model
        does not know): kube-scheduler sends prioritize only nodes its own filters passed, and its view
        of them is the fresher one."""
        taken = self.placement.fit_scores[self.rows]
        return taken if self.all_known else np.where(self.known, taken, 0)


def decide(scores: np.ndarray, candidates: np.ndarray, rank: np.ndarray) -> int | None:
    """Make one node the unique best and return its position in `scores` (changed in place).

    Of the `candidates` (positions) with the top score, the first by `rank` (node name) wins; every
    other node with that score loses a point (when the top is 0, the winner gains one instead).
    kube-scheduler breaks ties between equal totals at random, so a tie here would leave to chance
    where the pod lands and what the extender should count for the next one; with one best node, and
    a weight that outvotes the scheduler's own score plugins (docs/scheduler.md), the pod lands there.
    """
    if candidates.size == 0:
        return None
    top = scores[candidates].max()
    ties = candidates[scores[candidates] == top]
    pick = int(ties[np.argmin(rank[ties])])
    tied = np.flatnonzero(scores == top)
    if tied.size > 1:
        if top > 0:
            scores[tied] -= 1
            scores[pick] += 1
        else:
            scores[pick] = 1
    return pick


def placement_rows(row: dict[str, int], names: list[str]) -> np.ndarray:
    """Placement rows of `names`, -1 for names the model does not know (a C-level loop either way)."""
    try:
        return np.fromiter(map(row.__getitem__, names), dtype=np.intp, count=len(names))
    except KeyError:
        return np.fromiter(map(row.get, names, repeat(-1)), dtype=np.intp, count=len(names))
