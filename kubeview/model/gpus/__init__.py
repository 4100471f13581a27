"""GPUs: the GPU ledger over device-plugin GPUs and DRA devices, and which allocated GPUs sit idle. Pure.

`dra.py` types the DRA objects (`resource.k8s.io/v1` DeviceClass, ResourceSlice, ResourceClaim);
`ledger.py` keeps per node the devices and who holds them, `states.py` what the ledger says per device
and per node and what counts in the `nvidia.com/gpu` column, `counters.py` the shared counters of
partitionable devices (MIG), `pools.py` upstream's pool status beside kubeview's; `idle.py` joins the
model's GPU-holding pods with DCGM utilization (allocated but idle GPUs).

May import the rest of `kubeview.model` (and the standard library); never the cluster sources, the
scheduler, the TUI or the snapshot (tests/test_boundaries.py).
"""
