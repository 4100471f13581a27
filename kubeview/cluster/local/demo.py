"""`kubeview --demo`: the bundled local cluster put into the field's situations, the same every time.

A fresh local cluster runs only system pods; the README's screenshots show GPU fragmentation, Pending
pods, something to scale, and two gangs (one blocked by fragmentation, one that binds under `pack`).
`open_demo` builds that state from `demo.yaml` (real local pods, whose processes are sleepers) under
the `spread` policy, with a fixed seed so that pod names repeat, and
returns once every bound pod is Running, so the first list a client gets is already the demo. The
cluster is the bundled one plus two DRA GPU nodes (`clusters/demo-dra.yaml`), so both kinds of GPU
show side by side, a time-sliced and a MIG node (`clusters/demo-gpu-shared.yaml`, #35), and an autoscaled node group (`clusters/demo-batch.yaml`, batch-pool: 0 nodes, at
most 6) that the suspended Job farm/frames outgrows once started (`z`): asked for more, got 6.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import yaml

from kubeview.cluster.local.config import ClusterConfig, load_cluster
from kubeview.cluster.local.node_groups import SCAN_INTERVAL
from kubeview.cluster.local.source import LocalSource
from kubeview.cluster.source import SourceError
from kubeview.scheduling.config import PackingConfig

DEMO_FILE = Path(__file__).parent / "demo.yaml"
DRA_NODES_FILE = Path(__file__).parent / "clusters" / "demo-dra.yaml"
SHARED_NODES_FILE = Path(__file__).parent / "clusters" / "demo-gpu-shared.yaml"
BATCH_POOL_FILE = Path(__file__).parent / "clusters" / "demo-batch.yaml"
BATCH_JOB = ("farm", "frames")  # the autoscaling story's Job (suspended: `z` starts it)
BATCH_POOL = "batch-pool"
CLAIM_KINDS = ("ResourceClaimTemplate", "ResourceClaim")
DEMO_POLICY = "spread"  # puts 1-GPU pods on different nodes: the 2-GPU pod then fits nowhere
DEMO_SEED = 15  # pod-name suffixes (the issue that asked for the demo)
SETTLE_TIMEOUT = 20.0  # seconds for the demo's processes to start
# Pods the demo leaves Pending: train-c, 3 consumers, and the two gangs' members (2 allreduce, 3 etl)
DEMO_PENDING = 1 + 3 + 2 + 3


def demo_manifests(path: Path = DEMO_FILE) -> list[dict]:
    """The demo's objects in the order they are applied (Pods, then ReplicaSets and Deployments)."""
    return [doc for doc in yaml.safe_load_all(path.read_text(encoding="utf-8")) if doc]


def demo_cluster() -> ClusterConfig:
    """The bundled cluster with the DRA nodes (and the DRA driver's DaemonSet) after its own, then the
    shared and MIG GPU nodes (and their device plugin), and the autoscaled batch-pool."""
    base, dra, batch = load_cluster(), load_cluster(DRA_NODES_FILE), load_cluster(BATCH_POOL_FILE)
    shared = load_cluster(SHARED_NODES_FILE)
    return ClusterConfig(source=base.source, nodes=base.nodes + dra.nodes + shared.nodes,
                         system=base.system + dra.system + shared.system, node_groups=batch.node_groups)


def open_demo(metrics_listen: tuple[str, int] | None = None, timeout: float = SETTLE_TIMEOUT, *,
              job_items: int | None = None, clock: Callable[[], float] = time.time,
              autoscale_every: float | None = SCAN_INTERVAL) -> LocalSource:
    """A LocalSource on the bundled cluster with the demo applied and settled; SourceError if it does not.
    `job_items`: the demo Job's completions instead of the file's 3,600 (`kubeview preempt --items`).
    `clock`, `autoscale_every`: the node groups' autoscaler's (LocalSource), for tests that drive it."""
    source = LocalSource(policy=PackingConfig(policy=DEMO_POLICY), seed=DEMO_SEED, metrics_listen=metrics_listen,
                         config=demo_cluster(), clock=clock, autoscale_every=autoscale_every)
    source.demo = True  # commands suggested on screen say --demo (render/cpu_hint.render_command)
    try:
        for manifest in demo_manifests():
            if manifest.get("kind") == "Job" and job_items is not None and manifest["metadata"]["name"] == "work-items":
                manifest["spec"]["completions"] = job_items
            if manifest.get("kind") == "Pod":
                source.create_pod(manifest)
            elif manifest.get("kind") in CLAIM_KINDS:
                source.create_claim_object(manifest)
            else:
                source.apply_workload(manifest)
        source.autoscale_now()  # its first loop: what it says of the pods waiting now is in the first list
        wait_settled(source, timeout)
    except BaseException:
        source.close()
        raise
    return source


def unsettled(source: LocalSource) -> list[str]:
    """Pods bound to a node whose container is not running yet (`namespace/name`)."""
    return [f"{p['metadata']['namespace']}/{p['metadata']['name']}" for p in source.pods()
            if (p.get("spec") or {}).get("nodeName") and (p.get("status") or {}).get("phase") != "Running"]


def wait_settled(source: LocalSource, timeout: float) -> None:
    """Return once every bound pod runs; the unbound ones stay Pending with the scheduler's reason."""
    deadline = time.monotonic() + timeout
    while waiting := unsettled(source):
        if time.monotonic() > deadline:
            raise SourceError(f"the demo did not settle within {timeout:g} s: {len(waiting)} pods not running "
                              f"(first: {waiting[0]})")
        time.sleep(0.02)
