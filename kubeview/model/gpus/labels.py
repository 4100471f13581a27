"""Node labels kubeview reads to tell physical GPUs from what the device plugins advertise.

gpu-feature-discovery's (NVIDIA/k8s-device-plugin; docs/gpu-sources.md cites the files): the count,
product and memory of the node's GPUs; a shared GPU's replicas and sharing strategy; the MIG strategy
and, per MIG profile, its count and replicas; the NVLink clique. Under the `single` MIG strategy GFD's
count and memory are the MIG devices', and no label gives the physical GPUs; on MIG-enabled GPUs
`nvidia.com/gpu.replicas` is 0. AMD's node labeller counts GPUs per value of a property
(`beta.amd.com/gpu.family.<family>` = N), Intel's NFD rules per device id
(`gpu.intel.com/device-id.0300-56c0.count` = N). Pure helpers over a label dict.
"""

from __future__ import annotations

GPU_COUNT = "nvidia.com/gpu.count"
GPU_PRODUCT = "nvidia.com/gpu.product"
GPU_MEMORY = "nvidia.com/gpu.memory"  # MiB
GPU_REPLICAS = "nvidia.com/gpu.replicas"
SHARING = "nvidia.com/gpu.sharing-strategy"  # "none" | "time-slicing" | "mps"
MIG_STRATEGY = "nvidia.com/mig.strategy"  # "none" | "single" | "mixed"
GPU_SLICES_GI = "nvidia.com/gpu.slices.gi"  # single strategy: GPU-instance slices of each advertised slice
CLIQUE = "nvidia.com/gpu.clique"  # "<clusterUUID>.<cliqueID>": the GPUs' NVLink domain (GB200-class)
SHARED_PRODUCT_SUFFIX = "-SHARED"
AMD_PRODUCT = "amd.com/gpu.product-name"  # opt-in in the labeller (the Helm chart does not pass it)
AMD_FAMILY_COUNTS = "beta.amd.com/gpu.family."  # + family = GPUs of that family on the node
AMD_PARTITION = "amd.com/gpu.compute-memory-partition"  # "cpx_nps4"; "spx_nps1" is a whole GPU
INTEL_PRODUCT = "gpu.intel.com/product"
INTEL_DEVICE_COUNT = "gpu.intel.com/device.count"
INTEL_ID_PREFIX = "gpu.intel.com/device-id."  # + "<class>-<device>.count" (classes 0300, 0380)

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


def counted_devices(labels: dict[str, str], vendor: str) -> int | None:
    """Physical GPUs as AMD's labeller or Intel's NFD rules count them; None where they do not say."""
    if vendor == "amd":
        counts = [int_label(labels, k) for k in labels if k.startswith(AMD_FAMILY_COUNTS)]
    elif vendor == "intel":
        total = int_label(labels, INTEL_DEVICE_COUNT)
        if total is not None:
            return total
        counts = [int_label(labels, k) for k in labels if k.startswith(INTEL_ID_PREFIX) and k.endswith(".count")]
    else:
        return None
    known = [c for c in counts if c is not None]
    return sum(known) if known else None


def mig_slices_per_gpu(profile: str, product_name: str | None) -> int | None:
    """How many slices of `profile` one GPU holds when carved into that profile alone: the GPU's
    GPU-instance slices (7 on A100/H100/H200/B200, 4 on A30) divided by the profile's (`3g.40gb`: 3).
    None for a profile name that does not start with `<n>g.`."""
    head = profile.split(".", 1)[0]
    if not head.endswith("g") or not head[:-1].isdigit() or int(head[:-1]) == 0:
        return None
    total = 4 if product_name and "A30" in product_name.upper() else 7
    return max(total // int(head[:-1]), 1)
