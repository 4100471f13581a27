"""Node scores 0..10 for one pod under a packing policy, vectorised over nodes.

For each node and resource, the fraction it would be allocated with the pod placed there:
`f = (requested_on_node + pod_request) / allocatable`, capped at 1. The resources are the config's
weighted resources that the pod requests; a pod requesting none of them is scored on cpu and memory.

- `pack`: `round(10 * weighted mean of f)`; for GPUs alone, `round(10 * (used + requested) / allocatable)`,
  the formula that packs 1, 1, 2-GPU pods onto two 2-GPU nodes so all three fit.
- `spread`: `round(10 * (1 - weighted mean of f))`, kube's LeastAllocated.
- `balanced`: `round(10 * (1 - std of f))` over cpu, memory and the pod's weighted resources, kube's
  BalancedAllocation: prefers nodes whose resources fill evenly.

Then per-node bias is added and the result clipped to 0..10; avoided nodes score 0. Rounding is half
up (Go's math.Round), with a hair of slack so 10 * 0.35 is 4, not 3.
"""

from __future__ import annotations

import numpy as np

from kubeview.model.allocation import Allocation
from kubeview.scheduling.config import FALLBACK_RESOURCES, MAX_SCORE, PackingConfig
from kubeview.scheduling.node_index import NodeIndex

_EPS = 1e-9


def score_columns(alloc: Allocation, request: np.ndarray, config: PackingConfig) -> tuple[list[int], list[float]]:
    """(columns, weights) the pod is scored on under the config's policy."""
    cols: list[int] = []
    weights: list[float] = []
    for resource, weight in config.weights.items():
        col = alloc.column(resource)
        if weight > 0 and col is not None and request[col] > 0:
            cols.append(col)
            weights.append(weight)
    if not cols or config.policy == "balanced":
        for resource in FALLBACK_RESOURCES:
            col = alloc.column(resource)
            if col is not None and col not in cols:
                cols.append(col)
                weights.append(1.0)
    return cols, weights


def policy_scores(used: np.ndarray, allocatable: np.ndarray, weights: list[float], policy: str) -> np.ndarray:
    """Float scores 0..10 (N,) from `used` (requested on the node plus the pod) and `allocatable`,
    both (k, N) over the scored columns. Resources a node has none of are left out of its mean."""
    valid = allocatable > 0
    everywhere = bool(valid.all())  # the common case (cpu, memory, GPUs on GPU-only candidates): fewer passes
    if everywhere:
        f = used / allocatable
    else:
        f = np.divide(used, allocatable, out=np.zeros(used.shape), where=valid)
    np.minimum(f, 1.0, out=f)  # requests are never negative, so f >= 0
    if policy == "balanced":
        if everywhere:
            return MAX_SCORE * (1.0 - f.std(axis=0))
        count = valid.sum(axis=0)
        safe = np.maximum(count, 1)
        mean = f.sum(axis=0) / safe  # invalid entries are 0 in f
        var = (((f - mean) ** 2) * valid).sum(axis=0) / safe
        return np.where(count > 0, MAX_SCORE * (1.0 - np.sqrt(var)), 0.0)
    w = np.asarray(weights)
    if everywhere:
        mean = (w / w.sum()) @ f
    else:
        wv = w[:, None] * valid
        total = wv.sum(axis=0)
        mean = (f * wv).sum(axis=0) / np.maximum(total, 1e-300)  # no valid resource: 0 / tiny = 0
    if policy == "spread":
        mean = 1.0 - mean
        if not everywhere:
            mean[total == 0] = 0.0
    mean *= MAX_SCORE
    return mean


def finish(raw: np.ndarray, config: PackingConfig, index: NodeIndex) -> np.ndarray:
    """Int64 scores 0..10: rounded half up after adding bias, clipped; avoided nodes 0."""
    if config.bias:
        raw = raw.copy()
        for node, points in config.bias.items():
            row = index.row.get(node)
            if row is not None:
                raw[row] += points
    scores = np.floor(raw + (0.5 + _EPS)).astype(np.int64)
    np.minimum(scores, MAX_SCORE, out=scores)
    np.maximum(scores, 0, out=scores)
    for node in config.avoid:
        row = index.row.get(node)
        if row is not None:
            scores[row] = 0
    return scores
