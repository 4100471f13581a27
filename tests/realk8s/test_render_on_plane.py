"""`kubeview --render --headless` on the real plane (issue #25, 3g: `--start-timeout`, Ctrl-C, SIGTERM).

kwok pods run nothing, so a render can never start here; what a kubelet-less cluster can show is the
start-up: the objects applied server-side (field manager `kubeview`), the reason the pods wait (the
real scheduler's message), and the clean-up when `--start-timeout` gives up. The nodes are cordoned
for these tests so the wait has a reason the scheduler writes; a producer that kwok marked Running
would instead be read through the API server's service proxy, which cannot reach a kwok pod (what
that looks like depends on the network, so it is not tested).
"""

from __future__ import annotations

import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from kubernetes import client

from .objects import add_node, api, wait_nodes_ready
from .plane import Plane
from .procs import wait_until

NS = "render-plane"
OBJECTS = [("configmaps", "render-scene"), ("secrets", "render-token"), ("services", "producer")]


@pytest.fixture(scope="module")
def core(plane: Plane) -> Iterator[client.CoreV1Api]:
    """At least one node, every node cordoned while these tests run."""
    core = client.CoreV1Api(api(plane.kubeconfig))
    add_node(core, "render-node", {"cpu": "8", "memory": "32Gi", "pods": "110"})
    wait_nodes_ready(core, ["render-node"])
    names = [n.metadata.name for n in core.list_node().items]
    for name in names:
        core.patch_node(name, {"spec": {"unschedulable": True}})
    yield core
    for name in names:
        core.patch_node(name, {"spec": {"unschedulable": None}})


def _render(plane: Plane, out: Path, *extra: str) -> subprocess.CompletedProcess:
    argv = [sys.executable, "-m", "kubeview", "--render", "spheres", "--headless", "--kubeconfig", str(plane.kubeconfig),
            "-n", NS, "--start-timeout", "6", "--replicas", "2", "--cpu", "100m", "-o", str(out), *extra]
    return subprocess.run(argv, capture_output=True, text=True, timeout=120)


def _exists(core: client.CoreV1Api, what: str, name: str) -> bool:
    read = {"configmaps": core.read_namespaced_config_map, "secrets": core.read_namespaced_secret,
            "services": core.read_namespaced_service}[what]
    try:
        read(name, NS)
        return True
    except client.ApiException as exc:
        if exc.status == 404:
            return False
        raise


def _namespace_gone(core: client.CoreV1Api) -> bool:
    try:
        core.read_namespace(NS)
        return False
    except client.ApiException as exc:
        return exc.status == 404


def test_start_timeout_says_why_and_cleans_up(plane: Plane, core, tmp_path: Path) -> None:
    done = _render(plane, tmp_path / "r.png")
    assert done.returncode == 1, done.stdout + done.stderr
    assert "the render did not start within 6 s" in done.stderr
    waiting = [line for line in done.stdout.splitlines() if line.startswith("render: waiting:")]
    assert any("unschedulable" in line for line in waiting), done.stdout  # kube-scheduler's own reason
    # kubeview created the namespace (admin), so it deletes it; the namespace controller empties it
    wait_until(lambda: _namespace_gone(core), 60, f"namespace {NS} deleted")
    assert not (tmp_path / "r.png").exists()


def test_keep_leaves_server_side_applied_objects(plane: Plane, core, tmp_path: Path) -> None:
    wait_until(lambda: _namespace_gone(core), 60, f"namespace {NS} gone from the last test")
    done = _render(plane, tmp_path / "r.png", "--keep")
    assert done.returncode == 1 and "kept its objects" in done.stdout, done.stdout + done.stderr
    try:
        for what, name in OBJECTS:
            assert _exists(core, what, name), f"{what}/{name}"
        apps = client.AppsV1Api(core.api_client)
        for obj in (apps.read_namespaced_deployment("producer", NS), apps.read_namespaced_replica_set("consumer", NS)):
            managers = {(f.manager, f.operation) for f in obj.metadata.managed_fields}
            assert ("kubeview", "Apply") in managers, managers
    finally:
        core.delete_namespace(NS)
        wait_until(lambda: _namespace_gone(core), 60, f"namespace {NS} deleted")


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
def test_interrupted_while_waiting_deletes_what_it_applied(plane: Plane, core, tmp_path: Path, sig: int) -> None:
    """Ctrl-C (SIGINT) or SIGTERM while the pods wait: kubeview deletes its objects and the namespace
    it created, and says so."""
    wait_until(lambda: _namespace_gone(core), 60, f"namespace {NS} gone from the last test")
    argv = [sys.executable, "-m", "kubeview", "--render", "spheres", "--headless", "--kubeconfig", str(plane.kubeconfig),
            "-n", NS, "--replicas", "2", "--cpu", "100m", "-o", str(tmp_path / "r.png")]
    # SIGINT is ignored by processes started in the background; give the child the default handler
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        wait_until(lambda: proc.poll() is None and _exists(core, "services", "producer"), 60,
                   "the render's objects applied")
        apps = client.AppsV1Api(core.api_client)
        wait_until(lambda: _has_replicaset(apps), 30, "the consumer ReplicaSet applied")
        proc.send_signal(sig)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert "deleted" in out, out + err
    wait_until(lambda: _namespace_gone(core), 60, f"namespace {NS} deleted after the signal")


def _has_replicaset(apps: client.AppsV1Api) -> bool:
    try:
        apps.read_namespaced_replica_set("consumer", NS)
        return True
    except client.ApiException:
        return False
