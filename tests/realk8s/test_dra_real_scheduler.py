"""DRA with the real kube-scheduler v1.37.2 (issue #25, 3c): kubeview's GPU ledger equals the claims'
allocations after every step.

No feature gate: in 1.37.2 `DRAExtendedResource` (KEP-5004, the `extendedResourceName` mapping) is
GA and locked on (`--feature-gates=DRAExtendedResource=false` is refused), and partitionable devices
(KEP-4815) are beta, on by default. Three kwok nodes (no kubelet: the scheduler allocates and
reserves, kwok makes the pods Running): two with two full H100s each, one with a partitionable H100.
The step sequence runs ROUNDS times; after each step kubeview's ledger (its real kube source and
model, live_view.py) must hold every claim at the API server's resourceVersion, the same allocated
devices held by the same claims for the same pods, and per node the GPU column's requested figure
must be the number of allocated devices: a pod's `nvidia.com/gpu` served by a claim, or a claim
shared by two pods, counted once. On the partitionable GPU, kubeview's free figure is checked as the
scheduler's answer: one GPU more than it stays Pending, exactly that many is placed.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from kubernetes import client

from kubeview.model.cluster import ClusterModel

from .dra_objects import (
    DRIVER,
    GPU,
    POOL_LABEL,
    api_ledger,
    claim,
    claim_template,
    device_classes,
    list_claims,
    pod,
    slices_for,
)
from .live_view import LiveView
from .objects import add_node, api, ensure_namespace, wait_nodes_ready
from .plane import Plane
from .procs import wait_until

NS = "dra-real"
FULL, MIG = ("dra-full-a", "dra-full-b"), "dra-mig"
ROUNDS = 3
TIMEOUT = 30.0


@pytest.fixture(scope="module")
def dra(plane: Plane) -> Iterator[tuple[client.ApiClient, LiveView]]:
    api_client = api(plane.kubeconfig)
    core, res = client.CoreV1Api(api_client), client.ResourceV1Api(api_client)
    ensure_namespace(core, NS)
    for name in (*FULL, MIG):
        add_node(core, name, {"cpu": "8", "memory": "32Gi", "pods": "110"},
                 {POOL_LABEL: "dra-mig" if name == MIG else "dra"})
    wait_nodes_ready(core, [*FULL, MIG])
    for dc in device_classes():
        res.create_device_class(dc)
    for name in (*FULL, MIG):
        for s in slices_for(name, name == MIG):
            res.create_resource_slice(s)
    res.create_namespaced_resource_claim_template(NS, claim_template(NS, "gpu", DRIVER))
    res.create_namespaced_resource_claim_template(NS, claim_template(
        NS, "mig-1g", "mig.nvidia.com", f"device.attributes['{DRIVER}'].profile == '1g.10gb'"))
    view = LiveView(plane.kubeconfig, dra=True).start()
    yield api_client, view
    view.stop()
    core.delete_collection_namespaced_pod(NS, grace_period_seconds=0)
    res.delete_collection_namespaced_resource_claim(NS)
    res.delete_collection_namespaced_resource_claim_template(NS)
    for name in (*FULL, MIG):
        res.delete_collection_resource_slice(field_selector=f"spec.nodeName={name}")
        core.delete_node(name)
    for dc in device_classes():
        res.delete_device_class(dc["metadata"]["name"])


def _kubeview(model: ClusterModel) -> tuple:
    """What kubeview holds: claim versions, allocated devices -> (claim, pods), GPU requested per node,
    and each pod's DRA GPUs."""
    gpus = model.gpus
    versions = {k: c.resource_version for k, c in gpus.claims.items() if k[0] == NS}
    held = {s.device.key: (s.claim, tuple(sorted(s.pods))) for ng in gpus.nodes().values() for s in ng.devices
            if s.state == "allocated" and s.claim and s.claim[0] == NS}
    alloc = model.allocation()
    col = alloc.resources.index(GPU)
    requested = {n: int(alloc.requested[i, col]) for i, n in enumerate(alloc.nodes) if n in (*FULL, MIG)}
    pod_gpus = {k[1]: tuple(sorted(d.key for d in v)) for k, v in gpus.pod_gpus().items() if k[0] == NS}
    return versions, held, requested, pod_gpus


def _api(api_client: client.ApiClient) -> tuple:
    """The same from the API server now (pools are named after their node)."""
    claims = list_claims(api_client, NS)
    versions = {(NS, c["metadata"]["name"]): c["metadata"]["resourceVersion"] for c in claims}
    held = api_ledger(claims)
    requested = {n: sum(1 for key in held if key[1] == n) for n in (*FULL, MIG)}
    pod_gpus: dict[str, list] = {}
    for key, (_, pods) in held.items():
        for p in pods:
            pod_gpus.setdefault(p, []).append(key)
    return versions, held, requested, {p: tuple(sorted(v)) for p, v in pod_gpus.items()}


class Steps:
    """The step sequence; `check` after each one counts the steps kubeview got right."""

    def __init__(self, api_client: client.ApiClient, view: LiveView) -> None:
        self.api_client, self.view = api_client, view
        self.core, self.res = client.CoreV1Api(api_client), client.ResourceV1Api(api_client)
        self.checked = 0

    def check(self, what: str) -> None:
        last: list[str] = []

        def equal() -> bool:
            mine, theirs = self.view.read(_kubeview), _api(self.api_client)
            last[:] = [f"kubeview {mine}", f"API {theirs}"]
            return mine == theirs

        try:
            wait_until(equal, TIMEOUT, f"kubeview's ledger to equal the claims after {what}", interval=0.1)
        except AssertionError as exc:
            raise AssertionError(f"{exc}:\n" + "\n".join(last)) from None
        held, requested = _api(self.api_client)[1:3]
        assert sum(requested.values()) == len(held), "a device counted twice"
        self.checked += 1

    def running(self, *names: str) -> list[dict]:
        def ok() -> list[dict] | None:
            pods = [self.core.read_namespaced_pod(n, NS) for n in names]
            return pods if all(p.spec.node_name and p.status.phase == "Running" for p in pods) else None

        try:
            pods = wait_until(ok, TIMEOUT, f"pods {names} bound and Running")
        except AssertionError as exc:
            raise AssertionError(f"{exc}: {self._why(names)}") from None
        return [self.api_client.sanitize_for_serialization(p) for p in pods]

    def _why(self, names: tuple[str, ...]) -> str:
        """The pods' PodScheduled conditions and the namespace's claims, for a failure message."""
        pods = [self.core.read_namespaced_pod(n, NS) for n in names]
        conds = {p.metadata.name: [(c.type, c.status, c.reason, c.message) for c in p.status.conditions or ()
                                   if c.type == "PodScheduled"] for p in pods}
        claims = {c["metadata"]["name"]: ((c.get("status") or {}).get("allocation") is not None,
                                          [r["name"] for r in (c.get("status") or {}).get("reservedFor") or ()])
                  for c in list_claims(self.api_client, NS)}
        return f"scheduling {conds}; claims (allocated, reservedFor) {claims}"

    def create(self, *pods: dict) -> None:
        for p in pods:
            self.core.create_namespaced_pod(NS, p)

    def unschedulable(self, name: str) -> str:
        def why() -> str | None:
            p = self.core.read_namespaced_pod(name, NS)
            cond = next((c for c in p.status.conditions or () if c.type == "PodScheduled"), None)
            return cond.message if cond is not None and cond.reason == "Unschedulable" else None

        return wait_until(why, TIMEOUT, f"pod {name} Unschedulable")

    def clear(self) -> None:
        """Pending pods first, then the rest. Deleted together (2 runs in 5), the Pending 2-GPU pod was
        retried as the others' devices came free and deleted mid-cycle (scheduler log: "Failed to update
        the nominated node name in the binding cycle ... not found"); kube-scheduler v1.37.2 then refused
        the next round's pods ("cannot allocate all claims") while the API and kubeview showed two free
        devices, and placed them only at its 5-minute unschedulable-queue flush (docs/architecture.md,
        real-plane section)."""
        self.core.delete_collection_namespaced_pod(NS, grace_period_seconds=0, field_selector="status.phase=Pending")
        wait_until(lambda: not self.core.list_namespaced_pod(NS, field_selector="status.phase=Pending").items,
                   TIMEOUT, "Pending pods gone")
        self.core.delete_collection_namespaced_pod(NS, grace_period_seconds=0)
        self.res.delete_collection_namespaced_resource_claim(NS)
        wait_until(lambda: not self.core.list_namespaced_pod(NS).items and not list_claims(self.api_client, NS),
                   TIMEOUT, "pods and claims gone")


def _round(s: Steps, r: int) -> None:
    s.create(pod(NS, f"tpl-{r}", "dra", template="gpu"))
    s.running(f"tpl-{r}")
    s.check("a template claim")
    s.create(pod(NS, f"ext-{r}", "dra", gpus=1))
    (ext,) = s.running(f"ext-{r}")
    name = (ext["status"].get("extendedResourceClaimStatus") or {}).get("resourceClaimName")
    assert name, f"no extendedResourceClaimStatus on {ext['metadata']['name']}: {ext['status']}"
    s.check("nvidia.com/gpu: 1 served by a claim")
    assert s.view.read(lambda m: m.gpus.claims[(NS, name)].extended), "the scheduler's claim not seen as extended"
    s.res.create_namespaced_resource_claim(NS, claim(NS, f"shared-{r}"))
    s.create(*(pod(NS, f"shared-{r}-{i}", "dra", claim_name=f"shared-{r}") for i in (1, 2)))
    s.running(f"shared-{r}-1", f"shared-{r}-2")
    s.check("a claim shared by two pods")
    s.create(pod(NS, f"two-{r}", "dra", gpus=2))  # one GPU left on the two nodes: stays Pending
    assert "cannot allocate all claims" in s.unschedulable(f"two-{r}")
    s.check("nvidia.com/gpu: 2 unschedulable (no claim)")
    s.create(pod(NS, f"mig-{r}", "dra-mig", template="mig-1g"))
    s.running(f"mig-{r}")
    s.check("a MIG slice from a template")
    s.create(pod(NS, f"mig-ext-{r}", "dra-mig", gpus=1))
    s.running(f"mig-ext-{r}")
    s.check("nvidia.com/gpu: 1 on the partitionable GPU")
    states = s.view.read(lambda m: {d.device.name: d.state for d in m.gpus.node(MIG).devices})
    assert states["gpu-0"] == "unavailable", states  # the scheduler gave a slice, not the whole GPU
    _fill_mig(s, r)
    s.clear()
    s.check("everything deleted")


def _fill_mig(s: Steps, r: int) -> None:
    """kubeview's free GPUs on the partitionable GPU are what the scheduler can still hand out to one
    `nvidia.com/gpu: N` pod: one more stays Pending, exactly that many is placed."""
    free = s.view.read(lambda m: m.gpus.node(MIG).gpu_free)
    assert free > 0
    s.create(pod(NS, f"mig-over-{r}", "dra-mig", gpus=free + 1))
    assert "cannot allocate all claims" in s.unschedulable(f"mig-over-{r}")
    s.core.delete_namespaced_pod(f"mig-over-{r}", NS, grace_period_seconds=0)
    s.create(pod(NS, f"mig-fill-{r}", "dra-mig", gpus=free))
    s.running(f"mig-fill-{r}")
    s.check(f"nvidia.com/gpu: {free} (kubeview's free figure) filling the partitionable GPU")
    assert s.view.read(lambda m: m.gpus.node(MIG).gpu_free) == 0


def test_ledger_equals_claims_after_every_step(dra, realk8s_counts: dict[str, str]) -> None:
    api_client, view = dra
    steps = Steps(api_client, view)
    steps.clear()
    for r in range(ROUNDS):
        _round(steps, r)
    realk8s_counts["DRA steps checked"] = f"{steps.checked} ({ROUNDS} rounds; ledger = claims' allocations each time)"
