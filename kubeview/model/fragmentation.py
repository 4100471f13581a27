"""GPU fragmentation: how many k-GPU pods still fit, against how many the free total would allow.

Two nodes with one free GPU each have 2 GPUs free but no room for a 2-GPU pod. For each size k the
placeable count is sum over nodes of floor(free_i / k); the ideal is floor(sum(free) / k); the
difference is what fragmentation costs. Pure arithmetic on an int array, so it can be tested by hand.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

SIZES = (1, 2, 4, 8)


@dataclass(frozen=True, slots=True)
class SizeFit:
    size: int  # GPUs per pod (k)
    placeable: int  # sum floor(free_i / k): pods of this size that could still be placed
    ideal: int  # floor(total free / k): what an unfragmented cluster would allow

    @property
    def stranded(self) -> int:
        """k-GPU pods lost to fragmentation."""
        return self.ideal - self.placeable


@dataclass(frozen=True, slots=True)
class Fragmentation:
    resource: str  # "nvidia.com/gpu"
    free_total: int  # free units over the nodes counted
    largest_fit: int  # the largest request of this resource one node can still take
    nodes: int  # nodes counted (schedulable ones)
    sizes: tuple[SizeFit, ...]

    def size(self, k: int) -> SizeFit:
        return next(s for s in self.sizes if s.size == k)


def fragmentation(free: np.ndarray, resource: str = "nvidia.com/gpu", sizes: tuple[int, ...] = SIZES) -> Fragmentation:
    """Fragmentation of `free` (free units per node; negatives, i.e. overcommit, count as 0)."""
    free = np.maximum(np.asarray(free, dtype=np.int64), 0)
    total = int(free.sum())
    fits = tuple(SizeFit(k, int((free // k).sum()), total // k) for k in sizes)
    return Fragmentation(
        resource=resource,
        free_total=total,
        largest_fit=int(free.max()) if free.size else 0,
        nodes=int(free.size),
        sizes=fits,
    )
