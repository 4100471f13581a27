"""Which extended resources are GPUs, whose, and what kind of GPU unit each one counts.

The names are the vendors' device plugins' (docs/gpu-sources.md cites the files): NVIDIA's
`nvidia.com/gpu`, `nvidia.com/gpu.shared` (time-slicing or MPS with `renameByDefault`) and
`nvidia.com/mig-<profile>` (MIG, `mixed` strategy; `.shared` when a slice is shared too), AMD's
`amd.com/gpu` and its partitions under the `mixed` naming strategy (`amd.com/cpx_nps4`:
`amd.com/<compute>_<memory>`), Intel's `gpu.intel.com/i915` and `gpu.intel.com/xe`. The list is configurable
(`KUBEVIEW_GPU_RESOURCES`): a comma list of names or `prefix*` patterns replaces it, and one that starts
with `+` adds to it (`+habana.ai/gaudi`). Pure.
"""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass
from functools import lru_cache

ENV = "KUBEVIEW_GPU_RESOURCES"
NVIDIA_GPU = "nvidia.com/gpu"
SHARED_SUFFIX = ".shared"  # the device plugin's rename of a shared resource
MIG_PREFIX = "nvidia.com/mig-"
AMD_PARTITIONS = "amd.com/*px_nps*"  # spx, dpx, tpx, qpx, cpx compute x nps1/nps2/nps4 memory partitions
DEFAULT_NAMES = (NVIDIA_GPU, "nvidia.com/gpu.shared", "nvidia.com/mig-*", "amd.com/gpu", AMD_PARTITIONS,
                 "gpu.intel.com/i915", "gpu.intel.com/xe")
VENDORS = {"nvidia.com": "nvidia", "amd.com": "amd", "gpu.intel.com": "intel"}

# kinds of unit a resource counts: whole GPUs, NVIDIA MIG slices, shared replicas, AMD partitions
WHOLE, MIG, SHARED, PARTITION = "gpu", "mig", "shared", "partition"


@dataclass(frozen=True, slots=True)
class GpuResource:
    name: str  # the extended resource, e.g. "nvidia.com/mig-1g.10gb"
    vendor: str  # "nvidia", "amd", "intel", else the name's domain
    kind: str  # WHOLE, MIG, SHARED or PARTITION by its name alone (node labels may say more: physical.py)
    profile: str | None = None  # a MIG slice's profile, "1g.10gb"; an AMD partition's, "cpx_nps4"
    shared: bool = False  # renamed `.shared`: replicas of a time-sliced or MPS-shared unit


def vendor_of(name: str) -> str:
    domain = name.split("/", 1)[0]
    return VENDORS.get(domain, domain)


def _classify(name: str) -> GpuResource:
    shared = name.endswith(SHARED_SUFFIX)
    base = name[: -len(SHARED_SUFFIX)] if shared else name
    if base.startswith(MIG_PREFIX):
        return GpuResource(name, "nvidia", MIG, base[len(MIG_PREFIX):], shared)
    if fnmatch.fnmatchcase(base, AMD_PARTITIONS):
        return GpuResource(name, "amd", PARTITION, base.split("/", 1)[1], shared)
    return GpuResource(name, vendor_of(name), SHARED if shared else WHOLE, None, shared)


@dataclass(frozen=True, slots=True)
class GpuNames:
    """The configured GPU resource names (exact names and `prefix*` patterns)."""

    patterns: tuple[str, ...] = DEFAULT_NAMES

    def classify(self, name: str) -> GpuResource | None:
        """The resource's GPU reading, None when `name` is not a GPU resource."""
        return _classify_cached(self.patterns, name)

    def gpu_columns(self, resources: list[str]) -> list[tuple[int, GpuResource]]:
        """(column, reading) of the GPU resources among an allocation's columns."""
        out = []
        for i, name in enumerate(resources):
            r = self.classify(name)
            if r is not None:
                out.append((i, r))
        return out


@lru_cache(maxsize=4096)
def _classify_cached(patterns: tuple[str, ...], name: str) -> GpuResource | None:
    if "/" not in name:
        return None
    for p in patterns:
        if name == p or ("*" in p and fnmatch.fnmatchcase(name, p)):
            return _classify(name)
    return None


def parse_names(spec: str | None) -> GpuNames:
    """`KUBEVIEW_GPU_RESOURCES`'s value: None/empty keeps the defaults; `+a,+b` adds; `a,b` replaces.
    Raises ValueError (one line) for a name without a domain."""
    if not spec or not spec.strip():
        return GpuNames()
    items = [s.strip() for s in spec.split(",") if s.strip()]
    add = all(s.startswith("+") for s in items)
    names = [s.lstrip("+") for s in items]
    bad = [n for n in names if "/" not in n]
    if bad:
        raise ValueError(f"{ENV}: {bad[0]!r} is not an extended resource name (domain/name, e.g. amd.com/gpu)")
    return GpuNames(tuple(dict.fromkeys((*DEFAULT_NAMES, *names) if add else names)))


DEFAULT = GpuNames()


def configure(spec: str | None) -> GpuNames:
    """Set the names new models use (the CLI calls it once with `KUBEVIEW_GPU_RESOURCES`)."""
    global CONFIGURED
    CONFIGURED = parse_names(spec)
    return CONFIGURED


CONFIGURED = DEFAULT  # what ClusterModel reads at construction
