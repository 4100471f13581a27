"""The local cluster's scheduler: one decision per pending pod, made by `kubeview.scheduling.evaluate`.

Pods are taken in the order they were created (kube-scheduler's active queue is FIFO within a
priority), highest priority first. A pod either gets the best-scoring feasible node or stays
Pending with the scheduler's FitError text. Pure: the caller binds and feeds the model between
decisions, so each decision sees the pods placed before it.

Ties: kube-scheduler picks uniformly among the nodes with the top score (`selectHost`); with a
`random.Random` the decision does so too, so a policy that scores only GPUs does not pile every
cpu-only pod onto the first node by name (the demo's Job pods all sat on gpu-node-1). The caller's
generator is seeded, so the demo stays the same run after run. Without one, the first by name.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable
from dataclasses import dataclass

import numpy as np

from kubeview.model.allocation import Allocation
from kubeview.model.views import PodView
from kubeview.scheduling.config import PackingConfig
from kubeview.scheduling.evaluate import CLAIMS, ExtraLoad, evaluate, fail_where


@dataclass(frozen=True, slots=True)
class Decision:
    node: str | None  # where to bind, None when nothing fits
    message: str  # the FitError text when node is None


def is_pending(pod: dict) -> bool:
    """Waiting for the scheduler: not bound, not finished, not being deleted."""
    meta, spec, status = pod.get("metadata") or {}, pod.get("spec") or {}, pod.get("status") or {}
    return (not spec.get("nodeName") and not meta.get("deletionTimestamp")
            and status.get("phase", "Pending") == "Pending"
            and spec.get("schedulerName", "default-scheduler") == "default-scheduler")


def queue_order(pods: Iterable[tuple[int, dict]]) -> list[dict]:
    """(creation sequence, pod) pairs -> pending pods in the order the scheduler takes them."""
    pending = [(seq, p) for seq, p in pods if is_pending(p)]
    pending.sort(key=lambda sp: (-int((sp[1].get("spec") or {}).get("priority") or 0), sp[0]))
    return [p for _, p in pending]


def decide(alloc: Allocation, pod: dict, config: PackingConfig,
           claims_fit: Callable[[str], bool] | None = None, ties: random.Random | None = None,
           nominated: ExtraLoad | None = None) -> Decision:
    """The best node for `pod`; `claims_fit(node)` is the DynamicResources filter for a pod with its own
    ResourceClaims (asked only of nodes that pass the others; failing ones say `cannot allocate all claims`).
    `nominated`: pods of at least its priority nominated to nodes (kube-scheduler counts them there)."""
    placement = evaluate(alloc, PodView.from_api(pod), config, assumed=nominated)
    if claims_fit is not None:
        rows = np.flatnonzero(placement.feasible)
        ok = np.ones(len(placement.nodes), dtype=bool)
        ok[rows] = [claims_fit(placement.nodes[r]) for r in rows.tolist()]
        placement = fail_where(placement, ok, CLAIMS)
    best = placement.best
    if best is not None and ties is not None:
        top = placement.feasible & (placement.scores == placement.scores[placement.best_row])
        rows = np.flatnonzero(top)
        if len(rows) > 1:  # in name order, so the seed alone decides
            rows = rows[np.argsort(placement.index.name_rank[rows], kind="stable")]
            best = placement.nodes[int(rows[ties.randrange(len(rows))])]
    return Decision(best, "" if best else placement.message)
