"""Node labels kubeview reads to tell physical GPUs from what the device plugins advertise.

gpu-feature-discovery's (NVIDIA/k8s-device-plugin; docs/gpu-sources.md cites the files): the count,
product and memory of the node's GPUs; a shared GPU's replicas and sharing strategy; the MIG strategy
and, per MIG profile, its count and replicas; the NVLink clique. Pure helpers over a label dict.
"""

from __future__ import annotations

GPU_COUNT = "nvidia.com/gpu.count"
GPU_PRODUCT = "nvidia.com/gpu.product"
GPU_MEMORY = "nvidia.com/gpu.memory"  # MiB
GPU_REPLICAS = "nvidia.com/gpu.replicas"
SHARING = "nvidia.com/gpu.sharing-strategy"  # "none" | "time-slicing" | "mps"
MIG_STRATEGY = "nvidia.com/mig.strategy"  # "none" | "single" | "mixed"
MIG_CONFIG = "nvidia.com/mig.config"  # mig-parted's layout name, e.g. "all-1g.10gb", "all-balanced"
GPU_SLICES_GI = "nvidia.com/gpu.slices.gi"  # single strategy: GPU-instance slices of each advertised slice
CLIQUE = "nvidia.com/gpu.clique"  # "<clusterUUID>.<cliqueID>": the GPUs' NVLink domain (GB200-class)
SHARED_PRODUCT_SUFFIX = "-SHARED"
AMD_PRODUCT = "amd.com/gpu.product-name"
INTEL_PRODUCT = "gpu.intel.com/product"

PRODUCT_LABELS = {"nvidia": GPU_PRODUCT, "amd": AMD_PRODUCT, "intel": INTEL_PRODUCT}


def mig_label(profile: str, what: str) -> str:
    """`nvidia.com/mig-1g.10gb.count` (what: count, replicas, memory, slices.gi, ...)."""
    return f"nvidia.com/mig-{profile}.{what}"


def int_label(labels: dict[str, str], key: str) -> int | None:
    """A label's non-negative integer value, None when absent or not a number."""
    raw = labels.get(key)
    if raw is None:
        return None
    try:
        value = int(raw.strip())
    except ValueError:
        return None
    return value if value >= 0 else None


def sharing(labels: dict[str, str]) -> str | None:
    """"time-slicing" or "mps" where GFD says the node's GPUs are shared; an older GFD writes no
    strategy, only replicas > 1 (time-slicing was the only sharing then)."""
    value = (labels.get(SHARING) or "").strip().lower()
    if value in ("time-slicing", "mps"):
        return value
    if not value and (int_label(labels, GPU_REPLICAS) or 1) > 1:
        return "time-slicing"
    return None


def product(labels: dict[str, str], vendor: str) -> str | None:
    key = PRODUCT_LABELS.get(vendor)
    value = labels.get(key) if key else None
    if value and vendor == "nvidia" and value.endswith(SHARED_PRODUCT_SUFFIX):
        value = value[: -len(SHARED_PRODUCT_SUFFIX)]
    return value or None


def mig_slices_per_gpu(profile: str, product_name: str | None) -> int | None:
    """How many slices of `profile` one GPU holds when carved into that profile alone: the GPU's
    GPU-instance slices (7 on A100/H100/H200/B200, 4 on A30) divided by the profile's (`3g.40gb`: 3).
    None for a profile name that does not start with `<n>g.`."""
    head = profile.split(".", 1)[0]
    if not head.endswith("g") or not head[:-1].isdigit() or int(head[:-1]) == 0:
        return None
    total = 4 if product_name and "A30" in product_name.upper() else 7
    return max(total // int(head[:-1]), 1)
