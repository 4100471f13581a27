"""Build `Allocation`s for scheduling from node views plus what is already requested on them.

The extender needs this when kube-scheduler sends full Node objects (`nodeCacheCapable: false`): the
nodes come from the request, the pods already on them from the cluster model. Tests and benchmarks
use `from_pods` to build a cluster without a model. Pure.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from dataclasses import replace

import numpy as np

from kubeview.model.allocation import BASE_RESOURCES, GPU, Allocation
from kubeview.model.views import NodeView, PodView


def resource_columns(views: Iterable[NodeView], also: Iterable[str] = ()) -> list[str]:
    """Base resources first, then every other resource any node offers (sorted), then `also`."""
    extra: set[str] = set(also)
    for view in views:
        extra.update(view.allocatable)
        extra.update(view.capacity)
    return list(BASE_RESOURCES) + sorted(extra - set(BASE_RESOURCES))


def _matrix(views: list[NodeView], resources: list[str], attr: str) -> np.ndarray:
    out = np.zeros((len(views), len(resources)), dtype=np.int64)
    col = {r: j for j, r in enumerate(resources)}
    for i, view in enumerate(views):
        for name, value in getattr(view, attr).items():
            out[i, col[name]] = value
    return out


def from_views(views: list[NodeView], requested: dict[str, dict[str, int]] | None = None,
               resources: list[str] | None = None) -> Allocation:
    """An Allocation over `views`; `requested` maps node name -> amounts already requested there."""
    resources = resources or resource_columns(views, {r for a in (requested or {}).values() for r in a})
    req = np.zeros((len(views), len(resources)), dtype=np.int64)
    if requested:
        col = {r: j for j, r in enumerate(resources)}
        for i, view in enumerate(views):
            for name, value in (requested.get(view.name) or {}).items():
                if name in col:
                    req[i, col[name]] = value
    return Allocation(
        nodes=[v.name for v in views],
        resources=resources,
        capacity=_matrix(views, resources, "capacity"),
        allocatable=_matrix(views, resources, "allocatable"),
        requested=req,
        limits=np.zeros_like(req),
        views=list(views),
    )


def from_pods(views: list[NodeView], pods: Iterable[PodView]) -> Allocation:
    """An Allocation with the requests of the bound, non-terminal `pods` summed per node."""
    requested: dict[str, dict[str, int]] = {}
    for pod in pods:
        if pod.counts_on_node and pod.node is not None:  # counts_on_node: bound, so it has a node
            into = requested.setdefault(pod.node, {})
            for name, value in pod.requests.items():
                into[name] = into.get(name, 0) + value
    return from_views(views, requested)


def with_usage_from(views: list[NodeView], base: Allocation | None) -> Allocation:
    """An Allocation over `views` (e.g. Nodes sent by kube-scheduler) whose `requested` comes from
    the rows of `base` with the same node name; nodes `base` does not know start empty."""
    return UsageOverlay()(views, base)


class UsageOverlay:
    """`with_usage_from` for a stream of calls that mostly repeat the node set (the extender with full
    Nodes): the capacity side and the row mapping are kept while the views and `base`'s node list are
    the same objects, so a call only copies `requested` (~0.1 ms instead of ~3 ms for 500 nodes)."""

    def __init__(self) -> None:
        self._last: tuple | None = None  # (views, base nodes, base resources, capacity side, rows, src, cols)
        self._lock = threading.Lock()

    def __call__(self, views: list[NodeView], base: Allocation | None) -> Allocation:
        with self._lock:
            last = self._last
            if (last is not None and base is not None and last[1] is base.nodes and last[2] == base.resources
                    and len(last[0]) == len(views) and last[0] == views):
                _, _, _, shell, rows, src, cols = last
            else:
                shell, rows, src, cols = _overlay(views, base)
                if base is not None:
                    self._last = (list(views), base.nodes, list(base.resources), shell, rows, src, cols)
        if base is None or rows is None:
            return shell
        requested = np.zeros_like(shell.requested)
        requested[np.ix_(rows, cols)] = base.requested[src]
        if base.dra_gpus is None:
            return replace(shell, requested=requested, dra_mapped=base.dra_mapped)
        # a Node object says nothing of its DRA GPUs: they come from the model's ledger
        gpu = shell.resources.index(GPU)
        dra = np.zeros(len(shell.nodes), dtype=np.int64)
        dra[rows] = base.dra_gpus[src]
        capacity, allocatable = shell.capacity.copy(), shell.allocatable.copy()
        capacity[:, gpu] += dra
        allocatable[:, gpu] += dra
        return replace(shell, capacity=capacity, allocatable=allocatable, requested=requested, dra_gpus=dra,
                       dra_mapped=base.dra_mapped)


def _overlay(views: list[NodeView], base: Allocation | None) -> tuple[Allocation, np.ndarray | None, np.ndarray | None, np.ndarray | None]:
    """An Allocation over `views` with nothing requested, and where `base`'s rows and columns go in it."""
    resources = resource_columns(views, base.resources if base is not None else ())
    shell = from_views(views, None, resources)
    if base is None or not views:
        return shell, None, None, None
    base_row = {name: i for i, name in enumerate(base.nodes)}
    pairs = [(i, base_row[v.name]) for i, v in enumerate(views) if v.name in base_row]
    if not pairs:
        return shell, None, None, None
    rows, src = np.array(pairs, dtype=np.intp).T
    cols = np.array([resources.index(r) for r in base.resources], dtype=np.intp)
    return shell, rows, src, cols
