"""The Go churn (tools/churn, scripts/build-churn.sh) against the real plane: over 100 kwok pods for a
few seconds it does what its JSON line says, checked by construction: a watch opened before it sees
exactly `done` label changes, each to a value naming the call that wrote it (call i patches pod
i mod 100 with value RUN-i), and no error, in a second run over the same pods too. No speed is asserted; the line's `achieved` is only printed
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


def _churned(core: client.CoreV1Api, binary, kubeconfig: str, names: list[str],  # noqa: ANN001
             seconds: float) -> tuple[dict, list[tuple[str, str]]]:
    """One churn run with a watch opened before it: (its JSON line, the label changes the watch saw)."""
    rv = core.list_namespaced_pod(NAMESPACE).metadata.resource_version
    changes: list[tuple[str, str]] = []  # (pod, new label value), in watch order
    seen = {p.metadata.name: (p.metadata.labels or {}).get(LABEL) for p in core.list_namespaced_pod(NAMESPACE).items}
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
    churn = GoChurn(binary, kubeconfig, NAMESPACE, names, rate=1000.0, workers=32).start()
    time.sleep(seconds)
    churn.stop()
    result = churn.result
    assert set(result) >= {"done", "errors", "seconds", "achieved"}, result
    assert result["errors"] == 0 and result["done"] > 0, result
    wait_until(lambda: len(changes) >= result["done"], 60, f"{result['done']} label changes on the watch")
    time.sleep(0.5)  # nothing more arrives: every change is one the churn counted
    stopping.set()
    w.stop()
    counted = list(changes)
    core.patch_namespaced_pod(names[0], NAMESPACE, {"metadata": {"annotations": {"wake": str(time.time_ns())}}})
    watcher.join(60)  # the annotation's event wakes the watch, which then sees the stop
    assert not watcher.is_alive()
    return result, counted


def test_go_churn_writes_what_it_reports(plane: Plane, realk8s_counts: dict[str, str]) -> None:
    """Twice over the same pods: the second run's calls are numbered from 0 again, and still every one
    is a change (a value its run names), so a bench run on pods an earlier one churned gets events."""
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
    runs = [_churned(core, binary, str(plane.kubeconfig), names, seconds) for seconds in (3.0, 1.5)]
    core.delete_namespace(NAMESPACE)
    core.delete_node("churn-go-node")
    prefixes = set()
    for result, counted in runs:
        assert len(counted) == result["done"]
        prefix = {v.rsplit("-", 1)[0] for _, v in counted}
        assert len(prefix) == 1  # one run, one prefix
        prefixes |= prefix
        calls = [int(v.rsplit("-", 1)[1]) for _, v in counted]
        assert len(set(calls)) == len(calls) and min(calls) == 0
        assert all(names[int(v.rsplit("-", 1)[1]) % PODS] == pod for pod, v in counted)
        assert result["achieved"] == pytest.approx(result["done"] / result["seconds"])
    assert len(prefixes) == 2
    result = runs[0][0]
    realk8s_counts["Go churn"] = (f"{result['done']} patches in {result['seconds']:.1f} s, {result['achieved']:.0f}/s "
                                  f"of 1,000/s offered (32 goroutines)")
