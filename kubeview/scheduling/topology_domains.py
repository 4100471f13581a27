"""Topology domains: the nodes that share one value of a node label (an NVLink clique, a rack), their
free GPUs, and the one rule that picks a domain; what `domain_fit` (a manifest inside one domain) and
`gang_domain` (a gang's TopologyConstraint) both try. Pure.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Generic, TypeVar

import numpy as np

from kubeview.model.allocation import GPU, Allocation
from kubeview.scheduling.evaluate import ExtraLoad


def domains_of(alloc: Allocation, key: str) -> tuple[dict[str, list[int]], int]:
    """Domain (label value) -> its rows, and how many nodes are in none (no label, or an empty value:
    1.38's API says they belong to no domain; 1.37.2's generator still made a "" placement of them)."""
    groups: dict[str, list[int]] = {}
    outside = 0
    for i, view in enumerate(alloc.views):
        value = view.labels.get(key)
        if value:
            groups.setdefault(value, []).append(i)
        else:
            outside += 1
    return groups, outside


def free_gpus(sub: Allocation, assumed: ExtraLoad | None = None) -> int:
    """Free GPUs on a domain's nodes (less `assumed`, rows of `sub`)."""
    gpu = sub.column(GPU)
    if gpu is None:
        return 0
    free = sub.free[:, gpu].copy()
    if assumed is not None:
        free[assumed.rows] -= assumed.amounts[:, gpu]
    return int(np.maximum(free, 0).sum())


T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Tried(Generic[T]):
    """One domain's answer from the caller's fit."""

    result: T
    holds: bool  # everything fits inside it
    room: int  # how much of it fits (pods, members)
    free: int  # free GPUs in the domain
    asked: int = 0  # GPUs the placement would take there (when it holds)


@dataclass(slots=True)
class Choice(Generic[T]):
    tried: dict[str, Tried[T]] = field(default_factory=dict)  # by domain, in label-value order
    chosen: str | None = None  # of the domains that hold it, the fewest free GPUs left (then by name)
    closest: str | None = None  # else the most room, then the most free GPUs (then by name)
    domains: int = 0  # domains of the label (tried or not)
    outside: int = 0  # nodes in none


def choose_domain(alloc: Allocation, key: str, bound: set[str],
                  attempt: Callable[[Allocation, np.ndarray], Tried[T]]) -> Choice[T]:
    """`attempt` (the caller's fit on a domain's rows: `alloc.subset`, and the rows) in every domain of
    `key` that holds the members already `bound` (kube-scheduler requires their domain), and the pick:
    Kueue's BestFit among those that hold it (keep the big domains for the big jobs), else the closest."""
    groups, outside = domains_of(alloc, key)
    out: Choice[T] = Choice(domains=len(groups), outside=outside)
    best: tuple[int, str] | None = None
    near: tuple[int, int] | None = None
    for value, rows in sorted(groups.items()):
        if bound - {alloc.nodes[i] for i in rows}:
            continue  # a member is bound outside this domain: it cannot hold them all
        index = np.asarray(rows, dtype=np.intp)
        t = attempt(alloc.subset(index), index)
        out.tried[value] = t
        if t.holds:
            if best is None or (t.free - t.asked, value) < best:
                best = (t.free - t.asked, value)
        elif near is None or (t.room, t.free) > near:
            near, out.closest = (t.room, t.free), value
    if best is not None:
        out.chosen, out.closest = best[1], None
    return out
