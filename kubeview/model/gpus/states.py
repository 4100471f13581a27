"""What the GPU ledger (ledger.py) says per device and per node, and what counts in the GPU column.

A device counts in the `nvidia.com/gpu` column when a DeviceClass mapping `nvidia.com/gpu` selects it
(with no such class: devices whose `type` attribute is `gpu` or `mig`, NVIDIA's convention);
`add_dra_gpus` adds a node's column units to the model's dense matrices. Pure.
"""

from __future__ import annotations

from bisect import bisect_left
from dataclasses import dataclass

import numpy as np

from kubeview.model.gpus.dra import ClaimKey, Device, DeviceClassView, Taint

GPU = "nvidia.com/gpu"
GPU_TYPES = ("gpu", "mig")


@dataclass(frozen=True, slots=True)
class ShareHold:
    """A claim's share of a device that allows multiple allocations."""

    claim: ClaimKey
    share_id: str | None
    consumed: dict[str, int]  # capacity name -> plain units
    pods: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class DeviceState:
    device: Device
    gpu: bool  # counts in the nvidia.com/gpu column
    state: str  # "allocated" | "free" | "unavailable" (counters used by siblings, or pool incomplete)
    # | "tainted" (a NoSchedule/NoExecute taint, nobody holds it) | "gone" (its node was deleted: the
    # slice outlives it until garbage collection, nothing is free)
    claim: ClaimKey | None  # the allocated claim holding it (the first, by name, of a shared device's)
    pods: tuple[str, ...]  # the holding claims' reservedFor pods (in the claim's namespace)
    taints: tuple[Taint, ...] = ()  # the slice's and the DeviceTaintRules'
    shares: tuple[ShareHold, ...] = ()  # a shared device: every claim holding a share
    admin: tuple[ClaimKey, ...] = ()  # adminAccess claims on it (not counted as use)

    @property
    def consumed(self) -> dict[str, int]:
        """A shared device's capacity consumed by all its shares (compare `device.capacity`)."""
        out: dict[str, int] = {}
        for share in self.shares:
            for name, amount in share.consumed.items():
                out[name] = out.get(name, 0) + amount
        return out


@dataclass(frozen=True, slots=True)
class NodeGpus:
    node: str
    devices: tuple[DeviceState, ...]
    gpu_total: int  # column units (see the module doc)
    gpu_allocated: int

    @property
    def gpu_free(self) -> int:
        return self.gpu_total - self.gpu_allocated


def is_gpu(device: Device, gpu_classes: list[DeviceClassView]) -> bool:
    if gpu_classes:
        return any(c.matches(device) for c in gpu_classes)
    return device.type in GPU_TYPES


def add_dra_gpus(matrices: dict, names: list[str], resources: list[str],
                 nodes: dict[str, NodeGpus]) -> np.ndarray | None:
    """Count the ledger's DRA GPUs (`nodes`: `GpuLedger.nodes()`) in the `nvidia.com/gpu` column of
    the model's dense matrices (rows follow `names`, sorted): capacity and allocatable gain the devices, requested and limits
    the allocated ones. Nodes the model does not know (a slice before its Node) are left out.
    Returns the DRA units per row (Allocation.dra_gpus)."""
    if GPU not in resources:
        return None
    col = resources.index(GPU)
    dra = np.zeros(len(names), dtype=np.int64)
    for node, ng in nodes.items():
        r = bisect_left(names, node)
        if r == len(names) or names[r] != node:
            continue
        dra[r] = ng.gpu_total
        matrices["capacity"][r, col] += ng.gpu_total
        matrices["allocatable"][r, col] += ng.gpu_total
        matrices["requested"][r, col] += ng.gpu_allocated
        matrices["limits"][r, col] += ng.gpu_allocated
    return dra
