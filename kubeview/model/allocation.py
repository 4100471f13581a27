"""The allocation matrix: nodes x resources as int64 numpy arrays, in model units.

cpu is in millicores and everything else in plain units, as kube-scheduler's NodeResourcesFit counts
them, so fit checks are exact integer comparisons (no 0.1 + 0.2 surprises at a node's last core).
This is the contract between the model (which keeps it up to date) and scheduling/TUI/snapshot (which
read it).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from kubeview.model.views import NodeView

BASE_RESOURCES = ("cpu", "memory", "pods", "ephemeral-storage")
GPU = "nvidia.com/gpu"


@dataclass(slots=True)
class Allocation:
    """Rows follow `nodes`, columns follow `resources` (base resources first, then extended ones)."""

    nodes: list[str]
    resources: list[str]
    capacity: np.ndarray  # int64 (N, R)
    allocatable: np.ndarray  # int64 (N, R)
    requested: np.ndarray  # int64 (N, R): bound, non-terminal pods, scheduler arithmetic
    limits: np.ndarray  # int64 (N, R)
    views: list[NodeView]  # aligned with rows: labels, taints, conditions for filtering and display
    # DRA (model/gpus/ledger.py): per row, the GPU column units that are DRA devices (in capacity and
    # allocatable beside the device plugin's), None when no node publishes any; and the extended
    # resources a DeviceClass maps to DRA devices (kube-scheduler's messages differ for them)
    dra_gpus: np.ndarray | None = None
    dra_mapped: frozenset[str] = frozenset()

    @property
    def free(self) -> np.ndarray:
        return self.allocatable - self.requested

    def column(self, resource: str) -> int | None:
        try:
            return self.resources.index(resource)
        except ValueError:
            return None

    def vector(self, amounts: dict[str, int]) -> np.ndarray:
        """A request dict as a row over `resources`; resources no node has are dropped (see `missing`)."""
        out = np.zeros(len(self.resources), dtype=np.int64)
        for name, value in amounts.items():
            col = self.column(name)
            if col is not None:
                out[col] = value
        return out

    def subset(self, rows: np.ndarray) -> Allocation:
        """The same figures for the nodes at `rows` only (an NVLink domain's: scheduling/domain_fit.py)."""
        return Allocation([self.nodes[i] for i in rows], self.resources, self.capacity[rows], self.allocatable[rows],
                          self.requested[rows], self.limits[rows], [self.views[i] for i in rows],
                          None if self.dra_gpus is None else self.dra_gpus[rows], self.dra_mapped)

    def missing(self, amounts: dict[str, int]) -> list[str]:
        """Requested resources with a positive amount that no node offers at all."""
        return [n for n, v in amounts.items() if v > 0 and n not in self.resources]
