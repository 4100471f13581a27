"""Allocated but idle GPUs: the most expensive waste in a cluster, found by joining two views. PURE.

The model knows which pods hold GPUs (their `nvidia.com/gpu` requests, bound and not finished);
DCGM knows how busy each GPU was over the window and, through the kubelet's pod-resources API,
which pod holds it (`PodUsage.gpu_util`). DCGM's pod labels are often missing, so DRA devices (which
publish their `uuid`) are also joined by UUID (`Usage.gpus`): a pod's DRA GPUs come from the claims
reserved for it (`dra`, see `GpuLedger.pod_devices`). A GPU below `IDLE_BELOW` percent is idle. A pod
that holds GPUs but has no DCGM series is *unmeasured* (`idle is None`), never idle: no data is not 0%.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Protocol

from kubeview.model.usage import PodUsage

IDLE_BELOW = 5.0  # percent GPU utilization over the window
GPU_RESOURCE = "nvidia.com/gpu"


class PodLike(Protocol):
    """What this module reads of a pod (`kubeview.model.views.PodView` has it)."""

    namespace: str
    name: str
    node: str | None
    requests: dict[str, int]

    @property
    def counts_on_node(self) -> bool: ...


@dataclass(frozen=True, slots=True)
class PodGpus:
    """One GPU-holding pod: what it reserves and, when measured, how much of it sits idle."""

    namespace: str
    name: str
    node: str | None
    requested: int  # GPUs reserved (the pod's effective request)
    util: tuple[float, ...] | None  # percent per GPU DCGM attributes to the pod; None: not measured
    idle: int | None  # GPUs below the threshold; None: not measured

    @property
    def flag(self) -> str:
        """"idle" when any of its measured GPUs is idle, "" when busy, "—" when not measured."""
        if self.idle is None:
            return "—"
        return "idle" if self.idle else ""


@dataclass(frozen=True, slots=True)
class IdleReport:
    """Every GPU-holding pod, and the totals the header shows."""

    pods: dict[tuple[str, str], PodGpus] = field(default_factory=dict)
    threshold: float = IDLE_BELOW

    @property
    def idle_gpus(self) -> int:
        return sum(p.idle or 0 for p in self.pods.values())

    @property
    def idle_pods(self) -> int:
        return sum(1 for p in self.pods.values() if p.idle)

    @property
    def allocated_gpus(self) -> int:
        return sum(p.requested for p in self.pods.values())

    @property
    def unmeasured_pods(self) -> int:
        return sum(1 for p in self.pods.values() if p.idle is None)


def idle_count(util: tuple[float, ...] | None, threshold: float = IDLE_BELOW) -> int | None:
    """GPUs below `threshold` percent; None when nothing was measured (no data is not 0%)."""
    return None if not util else sum(1 for u in util if u < threshold)


def find_idle(pods: Iterable[PodLike], usage: Mapping[tuple[str, str], PodUsage],
              threshold: float = IDLE_BELOW, resource: str = GPU_RESOURCE, *,
              dra: Mapping[tuple[str, str], tuple[str | None, ...]] | None = None,
              by_uuid: Mapping[str, float | None] | None = None) -> IdleReport:
    """Join the model's GPU-holding pods with their measured GPU utilization (`Usage.pods`); `dra`:
    per pod, the UUIDs of the DRA GPUs its claims hold (None for a device without one, e.g. a MIG
    slice), joined with `by_uuid` (`Usage.gpus`) when DCGM's series carry no pod labels."""
    out: dict[tuple[str, str], PodGpus] = {}
    dra = dra or {}
    for pod in pods:
        key = (pod.namespace, pod.name)
        uuids = dra.get(key, ())
        requested = pod.requests.get(resource, 0) + len(uuids)
        if requested <= 0 or not pod.counts_on_node:
            continue
        measured = usage.get(key)
        util = measured.gpu_util if measured is not None and measured.gpu_util else None
        if util is None and uuids and by_uuid:
            joined = [by_uuid.get(u) if u else None for u in uuids]
            util = tuple(v for v in joined if v is not None) if None not in joined else None
        idle = idle_count(util, threshold)
        out[key] = PodGpus(pod.namespace, pod.name, pod.node, requested, util, idle)
    return IdleReport(pods=out, threshold=threshold)
