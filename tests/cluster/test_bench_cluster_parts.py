"""`kubeview bench cluster`'s parts that need no real plane: its cleanup when the API server is gone
(#41: it retried a dead server for max(settle, 300) s without a word), against the test API server (a
small fill, then the server stopped before the cleanup: it must say what it could not remove at once,
and try nothing more); and `--skip`, which leaves peers out and says so."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

from kubeapi import KubeAPI
from kubeapi.live import LiveCluster

from kubeview.bench.cluster import SKIPPABLE
from kubeview.bench.cluster.fill import ClusterFill
from kubeview.bench.cluster.report import lines, targets
from kubeview.bench.cluster.tui_run import K9S_VIEWS, k9s_title
from kubeview.bench.scheduler.kube import BenchError, KubeOptions
from kubeview.cluster.kube.config import connect


def test_a_cleanup_facing_a_stopped_api_server_says_so_at_once(tmp_path: Path) -> None:
    live = LiveCluster([])
    api = KubeAPI(live=live).start()
    said: list[str] = []
    try:
        conn = connect(str(api.write_kubeconfig(tmp_path / "kubeconfig")))
        fill = ClusterFill(conn, KubeOptions(yes=True, workers=4), said.append)
        with fill:
            fill.fill(4, 20)
            assert len(live.pods) == 20 and live.namespaces
            made = len(api.requests)
            api.stop()  # the process gone: its port refuses, and its open connections go with it
            conn.api_client.rest_client.pool_manager.clear()
            t0 = time.monotonic()
    finally:
        api.stop()
    took = time.monotonic() - t0
    problems = [line for line in said if line.startswith("cleanup incomplete: ")]
    assert len(problems) == 1 and "Deleting the pods in" in problems[0], said
    assert "Deleting the bench's nodes" not in problems[0]  # nothing more asked of a server that is gone
    assert took < 15, took  # was max(settle, 300) s of retries
    assert len(api.requests) == made  # it never answered again: nothing reached it


def test_skipped_peers_are_said_and_a_bad_name_is_one_line() -> None:
    doc = {"cluster": {"title": "t", "nodes": 5, "gpu_nodes": 0, "dra_nodes": 0, "pods": 10, "bound": 10, "fill_s": 1},
           "machine": {"cores": 2, "load_start": [1, 1, 1], "load_end": [1, 1, 1]}, "churn": {"target": 10},
           "duration_s": 5, "floor": {}, "kubeview": {}, "peers": {}, "missing": {}, "skipped": ["kubectl-json", "k9s"]}
    doc["targets"] = targets(doc)
    said = lines(doc)
    assert "  peer kubectl-json: skipped (--skip)" in said and "  peer k9s: skipped (--skip)" in said
    done = subprocess.run([sys.executable, "-m", "kubeview", "bench", "cluster", "--skip", "kubectl-json,top"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert all(name in done.stderr for name in SKIPPABLE) and "'kubectl-json,top'" in done.stderr


def test_reuse_measures_a_kept_run_and_leaves_it(tmp_path: Path) -> None:
    """--reuse RUN: a run kept with --keep is taken as it is (its pod names and bound count from the same
    plan, its counts checked against the API server), and left as it was; the wrong size is one line."""
    live = LiveCluster([])
    api = KubeAPI(live=live).start()
    said: list[str] = []
    try:
        conn = connect(str(api.write_kubeconfig(tmp_path / "kubeconfig")))
        with ClusterFill(conn, KubeOptions(yes=True, workers=4), said.append, keep=True) as first:
            first.fill(4, 20)
        run, names, bound = first.run_id, list(first.pod_names), first.bound
        assert len(live.pods) == 20 and 0 < bound <= 20
        again = ClusterFill(conn, KubeOptions(yes=True, workers=4), said.append)
        with again:
            again.adopt(run, 4, 20)
            assert (again.run_id, again.pod_names, again.bound, again.cluster_pod_count()) == (run, names, bound, 20)
        assert len(live.pods) == 20 and any(n.startswith("kubeview-bench-") for n in live.namespaces)
        wrong = ClusterFill(conn, KubeOptions(yes=True, workers=4), said.append)
        with wrong:
            try:
                wrong.adopt(run, 4, 30)
            except BenchError as exc:
                assert "lists 4 nodes and 20 pods" in str(exc) and "\n" not in str(exc)
            else:
                raise AssertionError("a kept run of another size was taken")
        assert len(live.pods) == 20
    finally:
        api.stop()
    done = subprocess.run([sys.executable, "-m", "kubeview", "bench", "cluster", "--reuse", "zz"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and "6 hex digits" in done.stderr and len(done.stderr.strip().splitlines()) == 1


def test_k9s_titles_count_its_views() -> None:
    assert {v: k9s_title(v).search(t).group(1) for v, t in (("nodes", " Nodes[5,000] "),
                                                            ("pods", " Pods(all)[150,000] "))} == \
        {"nodes": "5,000", "pods": "150,000"}
    assert k9s_title("pods").search(" Nodes[5,000] ") is None and K9S_VIEWS == ("nodes", "pods")
