"""GPU fragmentation: how many k-GPU pods still fit, against how many the free total would allow.

Two nodes with one free GPU each have 2 GPUs free but no room for a 2-GPU pod. For each size k the
placeable count is sum over nodes of floor(free_i / k); the ideal is floor(sum(free_i) / k) over the
nodes big enough to hold k at all (allocatable >= k); the difference is what fragmentation costs.
A pod bigger than every node is not lost to fragmentation: it can never fit (`fits_a_node` False,
ideal and stranded 0). Pure arithmetic on int arrays, so it can be tested by hand.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

SIZES = (1, 2, 4, 8)


@dataclass(frozen=True, slots=True)
class SizeFit:
    size: int  # GPUs per pod (k)
    placeable: int  # sum floor(free_i / k): pods of this size that could still be placed
    ideal: int  # floor(free on nodes that can hold k / k): what an unfragmented cluster would allow
    fits_a_node: bool = True  # False: k is more than any node has (allocatable), it can never fit

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


def fragmentation(free: np.ndarray, resource: str = "nvidia.com/gpu", sizes: tuple[int, ...] = SIZES,
                  allocatable: np.ndarray | None = None) -> Fragmentation:
    """Fragmentation of `free` (free units per node; negatives, i.e. overcommit, count as 0);
    `allocatable` per node (None: every node could hold any size)."""
    free = np.maximum(np.asarray(free, dtype=np.int64), 0)
    total = int(free.sum())
    cap = None if allocatable is None else np.asarray(allocatable, dtype=np.int64)

    def size_fit(k: int) -> SizeFit:
        room = free if cap is None else free[cap >= k]  # free units on nodes that can hold k at all
        return SizeFit(k, int((free // k).sum()), int(room.sum()) // k, room.size > 0)

    fits = tuple(size_fit(k) for k in sizes)
    return Fragmentation(
        resource=resource,
        free_total=total,
        largest_fit=int(free.max()) if free.size else 0,
        nodes=int(free.size),
        sizes=fits,
    )
