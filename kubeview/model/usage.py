"""Utilization (what is *used*, as opposed to requested), as sources report it to the model.

Prometheus (real clusters) and the local cluster (its pods are processes) fill a `UsageUpdate` and
emit it like any other source event; `ClusterModel.apply` merges it. A figure nobody measured is
`None` and stays `None` all the way to the snapshot's JSON (`null`): "not measured" must never read
as "idle".

Units follow the model: cpu in millicores (a float: 250.5 = a quarter core), memory in bytes,
GPU utilization in percent (0..100) per GPU, ordered by the GPU's index on its node.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class NodeUsage:
    """What one node uses right now; `None` where not measured."""

    cpu: float | None = None  # millicores in use (`node_cpu_seconds_total` rate x 1000)
    memory: int | None = None  # bytes in use (working set)
    gpu_util: tuple[float, ...] | None = None  # percent per GPU (DCGM_FI_DEV_GPU_UTIL), by GPU index
    gpu_memory: int | None = None  # framebuffer bytes used over the node's GPUs (DCGM_FI_DEV_FB_USED)


@dataclass(frozen=True, slots=True)
class PodUsage:
    """What one pod's containers use right now; `None` where not measured."""

    cpu: float | None = None  # millicores
    memory: int | None = None  # bytes (working set)
    gpu_util: tuple[float, ...] | None = None  # percent per GPU the pod holds
    gpu_memory: int | None = None  # framebuffer bytes used on the GPUs the pod holds


@dataclass(frozen=True, slots=True)
class UsageUpdate:
    """One reading of utilization, emitted by a usage source into the model like a watch event.

    `replace=True` (a full scrape) replaces everything known; `replace=False` merges, e.g. one
    node's reading from the local cluster. `error` (one sentence) says the reading failed; the
    model keeps the previous figures and shows the error.
    """

    nodes: dict[str, NodeUsage] = field(default_factory=dict)
    pods: dict[tuple[str, str], PodUsage] = field(default_factory=dict)  # (namespace, name)
    source: str = ""  # "prometheus", "local"
    at: float = 0.0  # time.time() of the reading
    window: str = ""  # the rate window, e.g. "5m"
    replace: bool = True
    error: str | None = None
    gpus: dict[str, float | None] = field(default_factory=dict)  # GPU UUID -> percent (DRA devices join by it)


@dataclass(slots=True)
class Usage:
    """The model's current picture of utilization (merged `UsageUpdate`s)."""

    nodes: dict[str, NodeUsage] = field(default_factory=dict)
    pods: dict[tuple[str, str], PodUsage] = field(default_factory=dict)
    source: str | None = None
    at: float | None = None
    window: str | None = None
    error: str | None = None
    gpus: dict[str, float | None] = field(default_factory=dict)  # GPU UUID -> percent over the window

    def merge(self, update: UsageUpdate) -> None:
        """Fold one update in (see `UsageUpdate.replace` and `.error`)."""
        self.source = update.source or self.source
        self.error = update.error
        if update.error is not None:
            return
        if update.replace:
            self.nodes = dict(update.nodes)
            self.pods = dict(update.pods)
            self.gpus = dict(update.gpus)
        else:
            self.nodes.update(update.nodes)
            self.pods.update(update.pods)
            self.gpus.update(update.gpus)
        self.at = update.at or self.at
        self.window = update.window or self.window

    def node_cpu(self, node: str) -> float | None:
        u = self.nodes.get(node)
        return None if u is None else u.cpu

    def node_memory(self, node: str) -> int | None:
        u = self.nodes.get(node)
        return None if u is None else u.memory


def finite_or_none(value: float | int | None) -> float | int | None:
    """NaN and infinities (Prometheus returns them for empty rates) become None, never 0."""
    if value is None:
        return None
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value
