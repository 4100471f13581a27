"""kubeview's watches across a kube-apiserver restart and an etcd compaction (issue #25, 3f).

kubeview's real source and model (live_view.LiveView) watch the plane while its API server is
killed and started again. Afterwards the view must equal a fresh list, and the connection state must
have said "reconnecting" in between. In the compaction case a pod is also removed from etcd while the
API server is down, so no watch will ever deliver its DELETED: only the relist that the 410 forces
can drop it.
"""

from __future__ import annotations

import base64
from collections.abc import Iterator

import pytest
from kubernetes import client

from .live_view import LiveView, wait_equal
from .objects import add_node, api, ensure_namespace, wait_nodes_ready
from .plane import Plane
from .procs import wait_until

NS = "watch-test"


@pytest.fixture(scope="module")
def admin(plane: Plane) -> client.ApiClient:
    return api(plane.kubeconfig)


@pytest.fixture(scope="module")
def core(plane: Plane, admin: client.ApiClient) -> client.CoreV1Api:
    core = client.CoreV1Api(admin)
    ensure_namespace(core, NS)
    add_node(core, "watch-node", {"cpu": "16", "memory": "64Gi", "pods": "110"})
    wait_nodes_ready(core, ["watch-node"])
    return core


@pytest.fixture
def view(plane: Plane, core: client.CoreV1Api) -> Iterator[LiveView]:  # noqa: ARG001
    v = LiveView(plane.kubeconfig).start()
    yield v
    v.stop()


def _pod(name: str) -> client.V1Pod:
    c = client.V1Container(name="c", image="registry.k8s.io/pause:3.10",
                           resources=client.V1ResourceRequirements(requests={"cpu": "100m"}))
    return client.V1Pod(metadata=client.V1ObjectMeta(name=name, labels={"app": "watch-test"}),
                        spec=client.V1PodSpec(containers=[c], termination_grace_period_seconds=0))


def _restart(plane: Plane, view: LiveView, between=None) -> None:
    """Kill the API server (SIGKILL: connections cut, no goodbye), wait for kubeview to say
    reconnecting, run `between` (etcd only), start it again."""
    plane.stop_apiserver(sig=9)
    wait_until(lambda: view.check() or view.state() == "reconnecting", 30, "kubeview's state 'reconnecting'")
    if between is not None:
        between()
    plane.start_apiserver()


def test_apiserver_restart_mid_watch(plane: Plane, core, admin, view: LiveView) -> None:
    for i in range(4):
        core.create_namespaced_pod(NS, _pod(f"before-{i}"))
    wait_equal(view, admin)
    _restart(plane, view)
    core.delete_namespaced_pod("before-0", NS, grace_period_seconds=0)
    core.create_namespaced_pod(NS, _pod("after-0"))
    core.patch_node("watch-node", {"metadata": {"labels": {"restarted": "yes"}}})
    wait_equal(view, admin)
    assert view.model.nodes["watch-node"].labels.get("restarted") == "yes"
    wait_until(lambda: view.state() == "live", 30, "kubeview's state 'live' again")
    states = view.states
    assert "reconnecting" in states and states[-1] == "live", states


def test_compacted_while_down_gives_410_and_a_relist(plane: Plane, core, admin, view: LiveView) -> None:
    core.create_namespaced_pod(NS, _pod("vanishes"))
    core.create_namespaced_pod(NS, _pod("stays"))
    wait_equal(view, admin)
    lists_before = view.lists["Pod"]

    def behind_its_back() -> None:
        key = base64.b64encode(f"/registry/pods/{NS}/vanishes".encode()).decode()
        assert plane.etcd("/v3/kv/deleterange", {"key": key}).get("deleted") == "1"
        # one more revision than anything the API server (and so kubeview) has seen, then compact
        # up to it: a watch from kubeview's resourceVersion is now below the compacted revision
        plane.etcd("/v3/kv/put", {"key": base64.b64encode(b"kubeview-realk8s/bump").decode(), "value": "eA=="})
        plane.compact_etcd()

    _restart(plane, view, between=behind_its_back)
    wait_equal(view, admin)
    assert (NS, "vanishes") not in view.seen()[1] and (NS, "stays") in view.seen()[1]
    assert view.lists["Pod"] > lists_before, "no relist: the watch was not answered 410"
    wait_until(lambda: view.state() == "live", 30, "kubeview's state 'live' again")
    assert "reconnecting" in view.states
