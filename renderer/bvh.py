"""Bounding volume hierarchy over spheres, built once in numpy, flattened for the kernels.

Layout (depth first): node ``i`` has bounds ``bounds[i] = (minx, miny, minz, maxx, maxy,
maxz)`` and ``info[i] = (a, count, axis)``.  A leaf has ``count > 0`` and holds spheres
``a .. a+count-1`` (the sphere arrays are reordered to match).  An inner node has
``count == 0``, its first child is ``i + 1``, its second child is ``a``, and ``axis`` is
the split axis, used to visit the nearer child first.  The build is a full-sweep
surface-area heuristic, deterministic (ties broken by sphere index), falling back to
median splits deep down so the tree is never deeper than :data:`MAX_DEPTH`.
"""

from __future__ import annotations

import numpy as np

MAX_LEAF = 4
MAX_DEPTH = 60  # the kernels' traversal stack holds 64 entries
SAH_DEPTH = 40  # below this depth, split at the median (halves the set every level)
TRAVERSAL_COST = 1.0  # relative to one sphere test


def sphere_boxes(spheres: np.ndarray) -> np.ndarray:
    """Axis-aligned boxes of spheres, padded so that rounding never drops a grazing hit."""
    c = spheres[:, :3]
    r = spheres[:, 3:4]
    pad = 1e-6 * (r + np.abs(c).max(axis=1, keepdims=True)) + 1e-6
    return np.hstack([c - r - pad, c + r + pad])


def _area(lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    d = np.maximum(hi - lo, 0.0)
    return 2.0 * (d[..., 0] * d[..., 1] + d[..., 1] * d[..., 2] + d[..., 2] * d[..., 0])


def _best_split(idx: np.ndarray, boxes: np.ndarray, cent: np.ndarray) -> tuple[float, int, np.ndarray, int]:
    """Cheapest SAH split of ``idx``: (cost, axis, idx in split order with split at the middle)."""
    n = len(idx)
    best = (np.inf, -1, idx, 0)
    for axis in range(3):
        order = idx[np.lexsort((idx, cent[idx, axis]))]
        b = boxes[order]
        llo = np.minimum.accumulate(b[:, :3], axis=0)
        lhi = np.maximum.accumulate(b[:, 3:], axis=0)
        rlo = np.minimum.accumulate(b[::-1, :3], axis=0)[::-1]
        rhi = np.maximum.accumulate(b[::-1, 3:], axis=0)[::-1]
        counts = np.arange(1, n)
        cost = _area(llo[:-1], lhi[:-1]) * counts + _area(rlo[1:], rhi[1:]) * (n - counts)
        k = int(np.argmin(cost))
        if cost[k] < best[0]:
            best = (float(cost[k]), axis, order, k + 1)
    return best[0], best[1], best[2], best[3]


def build_bvh(spheres: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Build a BVH; returns (sphere order, bounds (K, 6) float64, info (K, 3) int32)."""
    n = len(spheres)
    boxes = sphere_boxes(spheres)
    cent = spheres[:, :3]
    bounds: list[np.ndarray] = []
    info: list[list[int]] = []
    order: list[int] = []

    def node(idx: np.ndarray, depth: int) -> int:
        me = len(info)
        b = boxes[idx]
        lo, hi = b[:, :3].min(axis=0), b[:, 3:].max(axis=0)
        bounds.append(np.concatenate([lo, hi]))
        info.append([len(order), len(idx), -1])
        if len(idx) == 1:
            order.extend(idx.tolist())
            return me
        if depth < SAH_DEPTH:
            cost, axis, split_order, mid = _best_split(idx, boxes, cent)
            area = float(_area(lo, hi))
            leaf_cost = float(len(idx))
            split_cost = TRAVERSAL_COST + (cost / area if area > 0 else leaf_cost)
            if len(idx) <= MAX_LEAF and leaf_cost <= split_cost:
                order.extend(idx.tolist())
                return me
        else:
            axis = int(np.argmax(cent[idx].max(axis=0) - cent[idx].min(axis=0)))
            split_order = idx[np.lexsort((idx, cent[idx, axis]))]
            mid = len(idx) // 2
        info[me] = [0, 0, axis]
        node(split_order[:mid], depth + 1)
        info[me][0] = node(split_order[mid:], depth + 1)
        return me

    if n:
        node(np.arange(n), 0)
    return (
        np.array(order, dtype=np.int64),
        np.array(bounds, dtype=np.float64).reshape(-1, 6),
        np.array(info, dtype=np.int32).reshape(-1, 3),
    )


def single_leaf(spheres: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A one-node 'hierarchy': the brute-force variant, every ray tests every sphere."""
    boxes = sphere_boxes(spheres)
    bounds = np.concatenate([boxes[:, :3].min(axis=0), boxes[:, 3:].max(axis=0)])[None, :]
    return bounds.astype(np.float64), np.array([[0, len(spheres), -1]], dtype=np.int32)


def depth(info: np.ndarray) -> int:
    """Depth of a flattened tree (for tests)."""
    best = 0
    stack = [(0, 1)]
    while stack:
        i, d = stack.pop()
        best = max(best, d)
        if info[i, 1] == 0:
            stack += [(i + 1, d + 1), (int(info[i, 0]), d + 1)]
    return best
