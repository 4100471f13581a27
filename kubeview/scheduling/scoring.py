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

Native mode (`native_scores`, the profile of native_profile.py) is kube-scheduler's NodeResourcesFit
score itself, 0..100 in its integer arithmetic: per resource `min(requested, allocatable) * 100 //
allocatable` (MostAllocated), `(allocatable - requested) * 100 // allocatable` (LeastAllocated, 0 when
over) or the shape's broken line at that utilization (RequestedToCapacityRatio), then the weighted mean,
truncated (rounded for RequestedToCapacityRatio, which also leaves out resources scoring 0). Resources
a node has none of are left out. The plugin has no NormalizeScore and the profile's other score
plugins are equal on every node for a plain GPU pod, so the highest Fit score is the scheduler's pick.
"""

from __future__ import annotations

from typing import cast

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


def policy_scores(used: list[np.ndarray], allocatable: list[np.ndarray], weights: list[float],
                  policy: str) -> np.ndarray:
    """Float scores 0..10 (N,) from, per scored resource, `used` (requested on the node plus the pod)
    and `allocatable`, each an (N,) array. Resources a node has none of are left out of its mean.

    Works one resource column at a time on (N,) arrays: a few small arrays are much cheaper than one
    (k, N) block (which at 5,000 nodes is big enough to come from fresh, page-faulting memory)."""
    fractions: list[np.ndarray] = []
    valids: list[np.ndarray | None] = []  # None: every node has some of this resource
    for u, a in zip(used, allocatable, strict=True):
        valid = a > 0
        if valid.all():
            f = u / a
            valids.append(None)
        else:
            f = np.divide(u, a, out=np.zeros(len(u)), where=valid)
            valids.append(valid)
        np.minimum(f, 1.0, out=f)  # requests are never negative, so f >= 0
        fractions.append(f)
    everywhere = all(v is None for v in valids)
    if policy == "balanced":
        count = len(fractions) if everywhere else sum(np.ones(len(f)) if v is None else v
                                                      for f, v in zip(fractions, valids, strict=True))
        safe = np.maximum(count, 1)
        mean = sum(fractions) / safe  # invalid entries are 0 in f
        var = sum(((f - mean) ** 2) if v is None else ((f - mean) ** 2) * v
                  for f, v in zip(fractions, valids, strict=True)) / safe
        out = MAX_SCORE * (1.0 - np.sqrt(var))
        return out if everywhere else np.where(count > 0, out, 0.0)
    if everywhere:
        total = sum(weights)
        mean = sum(f * (w / total) for f, w in zip(fractions, weights, strict=True))
        has = None
    else:
        den = sum(np.full(len(f), w) if v is None else v * w for f, v, w in zip(fractions, valids, weights, strict=True))
        has = den > 0
        mean = sum(f * w for f, w in zip(fractions, weights, strict=True)) / np.where(has, den, 1.0)
    if policy == "spread":
        mean = 1.0 - mean
        if has is not None:
            cast(np.ndarray, mean)[~has] = 0.0  # not everywhere: a sum of per-node arrays
    return cast(np.ndarray, mean * MAX_SCORE)  # fractions are per-node arrays, so is their mean


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


def native_scores(used: list[np.ndarray], allocatable: list[np.ndarray], weights: list[int], strategy: str,
                  shape: tuple[tuple[int, int], ...] = ()) -> np.ndarray:
    """Int64 scores 0..100 (N,): NodeResourcesFit's scorer for `strategy` (noderesources/most_allocated.go,
    least_allocated.go, requested_to_capacity_ratio.go), `used` already holding the pod's request."""
    n = len(used[0]) if used else 0
    num = np.zeros(n, dtype=np.int64)
    den = np.zeros(n, dtype=np.int64)
    for u, a, w in zip(used, allocatable, weights, strict=True):
        valid = a > 0
        safe = np.where(valid, a, 1)
        if strategy == "MostAllocated":
            s = np.minimum(u, a) * 100 // safe
        elif strategy == "LeastAllocated":
            s = np.where(u > a, 0, (a - u) * 100 // safe)
        else:  # RequestedToCapacityRatio: over capacity counts as full; resources scoring 0 are left out
            s = _broken_line(np.where(u > a, 100, u * 100 // safe), shape)
            valid = valid & (s > 0)
        num += np.where(valid, s * w, 0)
        den += np.where(valid, w, 0)
    has = den > 0
    safe_den = np.where(has, den, 1)
    if strategy == "RequestedToCapacityRatio":
        out = (2 * num + safe_den) // (2 * safe_den)  # math.Round of a non-negative quotient
    else:
        out = num // safe_den
    return np.where(has, out, 0).astype(np.int64)


def _broken_line(p: np.ndarray, shape: tuple[tuple[int, int], ...]) -> np.ndarray:
    """helper.BuildBrokenLinearFunction with the plugin's x10 score scaling, on integer utilizations."""
    points = [(u, s * 10) for u, s in shape]
    out = np.full(len(p), points[-1][1], dtype=np.int64)
    done = np.zeros(len(p), dtype=bool)
    for i, (u, s) in enumerate(points):
        here = ~done & (p <= u)
        if i == 0:
            out[here] = s
        else:
            u0, s0 = points[i - 1]
            step = (s - s0) * (p[here] - u0)
            out[here] = s0 + np.sign(step) * (np.abs(step) // (u - u0))  # Go's division truncates toward 0
        done |= here
    return out
