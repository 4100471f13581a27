"""Topology domains: the nodes that share one value of a node label (an NVLink clique, a rack), and
their free GPUs; what `domain_fit` (a manifest inside one domain) and `gang_domain` (a gang's
TopologyConstraint) both try. Pure.
"""

from __future__ import annotations

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
