"""`kubeview bench cluster --kubeconfig FILE [--nodes N] [--pods M] [--duration S] [--churn-rate R]
[--json] [--yes] [--keep] [--reuse RUN] [--skip A,B]`: kubeview's read path on a real API server, beside the peers, in one run.

Fills the cluster (fill.py: N kwok nodes, a tenth with GPUs and a fifth of those publishing them as
DRA ResourceSlices, and M pods of `bench model`'s mix bound by nodeName; or, with --reuse, takes what
an earlier run kept), then measures, one after
the other so none competes with another: the raw transfer (`kubectl get --raw` of nodes and pods),
`kubectl get pods -A -o json`, `kubeview snapshot --json` and `kubeview snapshot` (wall, peak RSS of
the process), kubectl-view-allocations -g node and kube-capacity where installed, then the TUIs:
kubeview's and k9s's time to the first complete Nodes screen, peak RSS at --duration seconds after
start and CPU share while a churn of label patches runs (the Go churn, tools/churn, when
scripts/build-churn.sh built it; else the Python one, with a note), and kubeview's key-to-screen p95
under it, the achieved events/s beside the target.
Every figure is printed beside kubeview's as a ratio (report.py), with the machine's load.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Callable

from kubeview import __version__
from kubeview.bench.cluster import SKIPPABLE
from kubeview.bench.cluster.churn import Churn
from kubeview.bench.cluster.churn_go import GoChurn, make_churn
from kubeview.bench.cluster.fill import ClusterFill
from kubeview.bench.cluster.measure import BUILD, find_peer, timed, version_of
from kubeview.bench.cluster.objects import gpu_counts
from kubeview.bench.cluster.report import lines, targets
from kubeview.bench.cluster.tui_run import K9S_VIEWS, TuiError, k9s_tui, kubeview_tui
from kubeview.bench.scheduler.kube import BenchError, KubeOptions
from kubeview.cluster.kube.config import connect
from kubeview.cluster.source import SourceError

DEFAULT_NODES, DEFAULT_PODS = 5000, 150_000


def run(args: argparse.Namespace) -> int:
    kubeconfig = getattr(args, "kubeconfig", None)
    if not kubeconfig:
        sys.stderr.write("kubeview bench cluster: needs --kubeconfig FILE (it fills that cluster; it never picks "
                         "one by itself)\n")
        return 2
    as_json = bool(getattr(args, "json", False))
    def say(line: str) -> None:
        if as_json:
            sys.stderr.write(line + "\n")
        else:
            print(line, flush=True)

    try:
        conn = connect(kubeconfig, getattr(args, "context", None))
        fill = ClusterFill(conn, KubeOptions(yes=bool(getattr(args, "yes", False)), workers=16), say,
                           keep=bool(getattr(args, "keep", False)))
        with fill:
            doc = measure_all(args, conn, fill, say)
    except (BenchError, SourceError) as exc:
        sys.stderr.write(f"kubeview bench cluster: {exc}\n")
        return exc.exit_code if isinstance(exc, SourceError) else 1
    except KeyboardInterrupt:
        left = bool(getattr(args, "keep", False) or getattr(args, "reuse", None))
        sys.stderr.write("kubeview bench cluster: interrupted; " + ("its nodes and pods are left as they are\n" if left
                         else "what it created is removed\n"))
        return 130
    if as_json:
        print(json.dumps(doc, indent=1))
    else:
        for line in lines(doc):
            print(line)
    return 0


def measure_all(args: argparse.Namespace, conn, fill: ClusterFill, say: Callable[[str], None]) -> dict:  # noqa: ANN001
    nodes = getattr(args, "nodes", None) or DEFAULT_NODES
    pods = getattr(args, "pods", None) or DEFAULT_PODS
    duration = float(getattr(args, "duration", None) or 60.0)
    rate = float(getattr(args, "churn_rate", None) or 1000.0)
    kubeconfig = args.kubeconfig
    load_start = _load()
    reuse = getattr(args, "reuse", None)
    t0 = time.monotonic()
    if reuse:
        say(f"measuring on run {reuse}'s {nodes:,} nodes and {pods:,} pods, kept on {conn.title} (left as they are)")
        fill.adopt(reuse, nodes, pods)
    else:
        say(f"filling {conn.title}: {nodes:,} nodes, {pods:,} pods; run {fill.run_id} (namespace {fill.namespace})")
        fill.fill(nodes, pods)
    gpu, dra = gpu_counts(nodes)
    doc: dict = {"version": 1, "duration_s": duration,
                 "cluster": {"title": conn.title, "nodes": nodes, "gpu_nodes": gpu, "dra_nodes": dra, "pods": pods,
                             "bound": fill.bound, "fill_s": None if reuse else round(time.monotonic() - t0, 1),
                             "run": fill.run_id},
                 "machine": {"cores": os.cpu_count(), "load_start": load_start, "load_after_fill": _load()},
                 "churn": {"target": rate}, "kubeview": {"version": __version__}, "floor": {}, "peers": {},
                 "missing": {}}
    env = {"KUBECONFIG": kubeconfig}
    skip = set(getattr(args, "skip", None) or ())
    doc["skipped"] = [name for name in SKIPPABLE if name in skip]
    kubectl = find_peer("kubectl")
    if kubectl:
        say("measuring the raw transfer" + ("" if "kubectl-json" in skip else " and kubectl get pods -A -o json"))
        raw = [timed([kubectl, "get", "--raw", path], env) for path in ("/api/v1/nodes", "/api/v1/pods")]
        doc["floor"]["raw"] = {**raw[0].as_dict(), "wall_s": round(raw[0].wall + raw[1].wall, 3),
                               "peak_rss_mib": round(max(r.rss for r in raw) / 2**20, 1),
                               "rc": raw[0].rc or raw[1].rc, "version": version_of(kubectl, "kubectl")}
        doc["floor"]["raw_pods"] = raw[1].as_dict()  # #41's measure: `kubectl get --raw /api/v1/pods` alone
        if "kubectl-json" not in skip:
            doc["floor"]["kubectl_json"] = timed([kubectl, "get", "pods", "-A", "-o", "json"], env).as_dict()
    else:
        doc["missing"]["kubectl"] = BUILD["kubectl"]
    say("measuring kubeview snapshot --json and kubeview snapshot")
    snapshot = [sys.executable, "-m", "kubeview", "snapshot", "--kubeconfig", kubeconfig]
    doc["kubeview"]["snapshot_json"] = _checked(timed(snapshot + ["--json"]))
    doc["kubeview"]["snapshot_tables"] = _checked(timed(snapshot))
    for name, argv in (("kubectl-view-allocations", ["-g", "node"]), ("kube-capacity", [])):
        binary = find_peer(name)
        if name in skip:
            continue
        if binary is None:
            doc["missing"][name] = BUILD[name]
            continue
        say(f"measuring {name}")
        doc["peers"][name] = {**_checked(timed([binary, *argv], env)), "version": version_of(binary, name)}
    kind, new_churn = make_churn(conn, kubeconfig, fill.namespace, fill.pod_names, rate, say)
    doc["churn"]["by"] = kind
    churns: list[Churn | GoChurn] = []

    def churn() -> Callable[[], object]:
        c = new_churn().start()
        churns.append(c)
        return c.stop

    say(f"measuring kubeview's TUI ({duration:.0f} s, churn {rate:,.0f}/s)")
    prefix = f"kvb-{fill.run_id}-"
    try:
        tui = kubeview_tui(kubeconfig, prefix, nodes, fill.bound, duration, churn)
        doc["kubeview"]["tui"] = {**tui.as_dict(), "churn_rate": _achieved(churns), **_churn_figures(churns)}
    except TuiError as exc:
        doc["kubeview"]["tui"] = {"error": str(exc)}
    k9s = find_peer("k9s")
    if k9s is None and "k9s" not in skip:
        doc["missing"]["k9s"] = BUILD["k9s"]
    elif k9s is not None and "k9s" not in skip:
        totals = {"nodes": len(fill._list_nodes()), "pods": fill.cluster_pod_count()}
        for view in K9S_VIEWS:  # its Nodes view (no allocation), then its Pods view of every namespace
            key = "k9s" if view == "nodes" else f"k9s_{view}"
            say(f"measuring k9s's {view} view ({totals[view]:,} {view}; {duration:.0f} s, churn {rate:,.0f}/s)")
            try:
                fig = k9s_tui(k9s, kubeconfig, totals[view], duration, churn, view=view)
                doc["peers"][key] = {**fig.as_dict(), "churn_rate": _achieved(churns), **_churn_figures(churns),
                                     "version": version_of(k9s, "k9s")}
            except TuiError as exc:
                doc["peers"][key] = {"error": str(exc)}
    doc["machine"]["load_end"] = _load()
    doc["targets"] = targets(doc)
    return doc


def _checked(t) -> dict:  # noqa: ANN001
    return t.as_dict() | ({"err": t.err} if t.rc else {})


def _achieved(churns: list[Churn | GoChurn]) -> float:
    return round(churns[-1].achieved, 1) if churns else 0.0


def _churn_figures(churns: list[Churn | GoChurn]) -> dict:
    """The last churn's writes made and failed (the achieved rate is `churn_rate` beside it)."""
    return {"churn_done": churns[-1].done, "churn_errors": churns[-1].errors} if churns else {}


def _load() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]
