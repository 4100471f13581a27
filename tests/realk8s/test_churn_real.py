"""The Go churn (tools/churn, scripts/build-churn.sh) against the real plane: over 100 kwok pods for a
few seconds it does what its JSON line says, checked by construction: a watch opened before it sees
exactly `done` label changes, each to a value naming the call that wrote it (call i patches pod
i mod 100 with value i), and no error. No speed is asserted; the line's `achieved` is only printed
(realk8s summary). The bench finds the binary at the path the build script prints."""

from __future__ import annotations

import subprocess
import threading
import time

import pytest
from kubernetes import client, watch
from urllib3.exceptions import ProtocolError

from kubeview.bench.cluster.churn import LABEL
from kubeview.bench.cluster.churn_go import GoChurn, churn_binary

from .objects import add_node, api, ensure_namespace
from .plane import REPO, Plane
from .procs import wait_until

NAMESPACE, PODS = "churn-go", 100


def _binary():  # noqa: ANN202
    binary = churn_binary()
    if binary is None:
        pytest.skip("no Go churn binary for this tools/churn; build it with `bash scripts/build-churn.sh`")
    return binary


def test_bench_finds_the_binary_the_script_built() -> None:
    binary = _binary()
    printed = subprocess.run(["bash", "scripts/build-churn.sh", "--print-dir"], cwd=REPO, capture_output=True,
                             text=True, check=True).stdout.strip()
    assert str(binary) == f"{printed}/churn"


def test_go_churn_writes_what_it_reports(plane: Plane, realk8s_counts: dict[str, str]) -> None:
    binary = _binary()
    core = client.CoreV1Api(api(plane.kubeconfig))
    ensure_namespace(core, NAMESPACE)
    add_node(core, "churn-go-node", {"cpu": "1000", "memory": "1Ti", "pods": "1000"})
    names = [f"churn-{i:03d}" for i in range(PODS)]
    for name in names:
        core.create_namespaced_pod(NAMESPACE, {"metadata": {"name": name}, "spec": {
            "nodeName": "churn-go-node", "terminationGracePeriodSeconds": 0,
            "containers": [{"name": "c", "image": "registry.invalid/none"}]}})
    wait_until(lambda: all(p.status.phase == "Running" for p in core.list_namespaced_pod(NAMESPACE).items),
               60, "the churn pods Running (kwok)")
    rv = core.list_namespaced_pod(NAMESPACE).metadata.resource_version
    changes: list[tuple[str, str]] = []  # (pod, new label value), in watch order
    seen: dict[str, str | None] = {}
    w, stopping = watch.Watch(), threading.Event()

    def follow() -> None:
        try:
            for event in w.stream(core.list_namespaced_pod, NAMESPACE, resource_version=rv, timeout_seconds=120):
                pod = event["object"]
                value = (pod.metadata.labels or {}).get(LABEL)
                if event["type"] == "MODIFIED" and value is not None and value != seen.get(pod.metadata.name):
                    changes.append((pod.metadata.name, value))
                seen[pod.metadata.name] = value
        except ProtocolError:  # the stream closed under the stop; before it, a failure
            if not stopping.is_set():
                raise

    watcher = threading.Thread(target=follow, daemon=True)
    watcher.start()
    churn = GoChurn(binary, str(plane.kubeconfig), NAMESPACE, names, rate=1000.0, workers=32).start()
    time.sleep(3)
    churn.stop()
    result = churn.result
    assert set(result) >= {"done", "errors", "seconds", "achieved"}, result
    assert result["errors"] == 0 and result["done"] > 0, result
    wait_until(lambda: len(changes) >= result["done"], 60, f"{result['done']} label changes on the watch")
    time.sleep(0.5)  # nothing more arrives: every change is one the churn counted
    stopping.set()
    w.stop()
    counted = list(changes)
    core.delete_namespace(NAMESPACE)  # its pods' deletions wake the watch, which then sees the stop
    core.delete_node("churn-go-node")
    watcher.join(60)
    assert not watcher.is_alive()
    assert len(counted) == result["done"]
    values = [int(v) for _, v in counted]
    assert len(set(values)) == len(values)
    assert all(names[int(v) % PODS] == pod for pod, v in counted)
    assert result["achieved"] == pytest.approx(result["done"] / result["seconds"])
    realk8s_counts["Go churn"] = (f"{result['done']} patches in {result['seconds']:.1f} s, {result['achieved']:.0f}/s "
                                  f"of 1,000/s offered (32 goroutines)")
