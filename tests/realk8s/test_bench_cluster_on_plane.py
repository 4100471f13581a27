"""`kubeview bench cluster --kubeconfig` on the real plane at a small size (50 nodes, 500 pods,
short TUI runs): the mechanics the full-size figures rest on. Every kubeview figure is in --json
(snapshot --json and tables, the TUI's first complete screen, peak RSS, CPU share and key p95 under
the churn, the Go one whenever scripts/build-churn.sh built it), the peers are either measured or
listed with how to build them, the targets are judged from those figures, and nothing the bench
created is left: no node, ResourceSlice, pod or namespace of the run. Peers are not required here.
"""

from __future__ import annotations

import json
import subprocess
import sys

from kubernetes import client

from kubeview.bench.cluster.churn_go import churn_binary
from kubeview.bench.scheduler.kube_plan import RUN_LABEL
from kubeview.cluster.kube.config import connect

from .plane import REPO, Plane


def _bench(plane: Plane, *extra: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "kubeview", "bench", "cluster", "--kubeconfig", str(plane.kubeconfig),
                           *extra], capture_output=True, text=True, cwd=REPO, timeout=900)


def _leftovers(plane: Plane) -> dict[str, list[str]]:
    api = connect(str(plane.kubeconfig)).api_client
    core, custom = client.CoreV1Api(api), client.CustomObjectsApi(api)
    return {
        "nodes": [n.metadata.name for n in core.list_node(label_selector=RUN_LABEL).items],
        "namespaces": [n.metadata.name for n in core.list_namespace(label_selector=RUN_LABEL).items],
        "pods": [p.metadata.name for p in core.list_pod_for_all_namespaces(label_selector=RUN_LABEL).items],
        "slices": [s["metadata"]["name"] for s in custom.list_cluster_custom_object(
            "resource.k8s.io", "v1", "resourceslices", label_selector=RUN_LABEL)["items"]],
    }


def test_bench_cluster_small_every_figure_and_clean(plane: Plane) -> None:
    done = _bench(plane, "--nodes", "50", "--pods", "500", "--duration", "8", "--churn-rate", "50", "--json")
    assert done.returncode == 0, done.stderr[-2000:]
    doc = json.loads(done.stdout)
    assert doc["cluster"]["nodes"] == 50 and doc["cluster"]["pods"] == 500 and doc["cluster"]["dra_nodes"] == 1
    ours = doc["kubeview"]
    for name in ("snapshot_json", "snapshot_tables"):
        assert ours[name]["rc"] == 0 and ours[name]["wall_s"] > 0 and ours[name]["peak_rss_mib"] > 10, ours[name]
    tui = ours["tui"]
    assert "error" not in tui, tui
    assert 0 < tui["first_screen_s"] < 8 + 120 and tui["peak_rss_mib"] > 10 and tui["cpu_share"] > 0
    assert tui["keys"] == 27 and tui["key_p95_ms"] > 0 and tui["churn_rate"] > 0 and tui["churn_done"] > 0
    assert doc["churn"]["by"] == ("go" if churn_binary() else "python")  # the Go churn whenever it is built
    assert doc["floor"]["raw"]["rc"] == 0 and doc["floor"]["kubectl_json"]["rc"] == 0
    for peer in ("kubectl-view-allocations", "kube-capacity", "k9s"):
        assert peer in doc["peers"] or "build-peers.sh" in doc["missing"][peer]
    judged = {t["what"]: t for t in doc["targets"]}
    assert judged["snapshot (tables) wall / snapshot --json wall"]["ratio"] > 0
    assert judged["TUI key-to-screen p95 under churn, ms"]["met"] is not None
    assert all(len(doc["machine"][k]) == 3 for k in ("load_start", "load_end"))
    assert _leftovers(plane) == {"nodes": [], "namespaces": [], "pods": [], "slices": []}


def test_bench_cluster_refuses_foreign_nodes_and_needs_kubeconfig(plane: Plane) -> None:
    api = connect(str(plane.kubeconfig)).api_client
    core = client.CoreV1Api(api)
    core.create_node({"metadata": {"name": "not-the-bench-s"}})
    try:
        done = _bench(plane, "--nodes", "5", "--pods", "10")
        assert done.returncode == 1
        assert "kubeview bench did not create" in done.stderr and "--yes" in done.stderr
        assert "Traceback" not in done.stderr
    finally:
        core.delete_node("not-the-bench-s")
    done = subprocess.run([sys.executable, "-m", "kubeview", "bench", "cluster"], capture_output=True, text=True,
                          cwd=REPO, timeout=120)
    assert done.returncode == 2 and "needs --kubeconfig FILE" in done.stderr
