"""What the realk8s tests make on the plane: kwok nodes, ServiceAccount tokens, and waits on them.

Everything goes through the `kubernetes` Python client against the real API server; waits are on
conditions with deadlines (procs.wait_until).
"""

from __future__ import annotations

from pathlib import Path

from kubernetes import client, config

from .plane import KWOK_ANNOTATION, Plane
from .procs import wait_until


def ignoring(status: int, call) -> None:  # noqa: ANN001
    """`call()`, an ApiException of this status (404: already gone, 409: already there) taken as done."""
    try:
        call()
    except client.ApiException as exc:
        if exc.status != status:
            raise


def api(kubeconfig: Path) -> client.ApiClient:
    """A client for this kubeconfig (its own Configuration: tests use several identities at once)."""
    cfg = client.Configuration()
    config.load_kube_config(config_file=str(kubeconfig), client_configuration=cfg, persist_config=False)
    return client.ApiClient(configuration=cfg)


def add_node(core: client.CoreV1Api, name: str, capacity: dict[str, str], labels: dict[str, str] | None = None) -> None:
    """A node kwok manages (annotation), created with this capacity = allocatable in its status, as a
    kubelet registers. Not create-then-patch: kwok's first status write carries the capacity it read
    (its default, cpu 1k, when there was none) and overwrote a patch made in between; nor annotate
    later: kwok never picks up a node that gains the annotation after it was created."""
    meta = client.V1ObjectMeta(name=name, annotations={KWOK_ANNOTATION: "fake"},
                               labels={"kubernetes.io/hostname": name, "type": "kwok", **(labels or {})})
    core.create_node(client.V1Node(metadata=meta, status=client.V1NodeStatus(capacity=capacity, allocatable=capacity)))


def node_ready(core: client.CoreV1Api, name: str) -> bool:
    """Ready, no taints left (the node lifecycle controller's not-ready taint goes once kwok reports
    Ready), and the capacity we set still there."""
    node = core.read_node(name)
    ready = any(c.type == "Ready" and c.status == "True" for c in node.status.conditions or [])
    return ready and not node.spec.taints and bool(node.status.allocatable)


def wait_nodes_ready(core: client.CoreV1Api, names: list[str], timeout: float = 60) -> None:
    wait_until(lambda: all(node_ready(core, n) for n in names), timeout, f"nodes {names} Ready without taints")


def sa_token(core: client.CoreV1Api, namespace: str, name: str, seconds: int = 3600) -> str:
    """A token for the ServiceAccount through the TokenRequest API (what `kubectl create token` does)."""
    req = client.AuthenticationV1TokenRequest(spec=client.V1TokenRequestSpec(audiences=[], expiration_seconds=seconds))
    return core.create_namespaced_service_account_token(name, namespace, req).status.token


def sa_kubeconfig(plane: Plane, core: client.CoreV1Api, namespace: str, name: str, path: Path) -> Path:
    """A kubeconfig that is this ServiceAccount (token via TokenRequest)."""
    return plane.token_kubeconfig(path, sa_token(core, namespace, name))


def ensure_namespace(core: client.CoreV1Api, name: str) -> None:
    """The namespace and its default ServiceAccount (pods cannot be created before it exists). One an
    earlier module deleted may still be terminating (409 AlreadyExists too, and then 403 "being
    terminated" on anything created in it): wait until it is gone, then create it."""

    def created() -> bool:
        try:
            core.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name=name)))
            return True
        except client.ApiException as exc:
            if exc.status != 409:
                raise
        try:
            return core.read_namespace(name).status.phase != "Terminating"
        except client.ApiException as exc:
            if exc.status == 404:
                return False  # gone between the two calls: create it on the next try
            raise

    wait_until(created, 120, f"namespace {name} (one of that name was terminating)")

    def has_sa() -> bool:
        try:
            core.read_namespaced_service_account("default", name)
            return True
        except client.ApiException:
            return False

    wait_until(has_sa, 30, f"the default ServiceAccount in {name}")
