"""`kubeview bench scheduler --kubeconfig FILE`: options in, figures out (the run is scheduler_kube's).

Printed per workload: one SchedulingThroughput line per scheduler (scheduler_perf DataItems, Name
`<test>/<workload>/<scheduler>`), its GPU packing, and every scheduler's Average as a ratio to the
first's, beside the targets (>= 0.90 with `nodeCacheCapable: true`, >= 0.50 with full Nodes).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable

from kubeview.bench.scheduler.kube import BenchError, KubeBench, KubeOptions
from kubeview.bench.scheduler.report import emit, throughput_line
from kubeview.bench.scheduler.run import WorkloadResult, throughput_summary
from kubeview.bench.scheduler.scenarios import Workload
from kubeview.cluster.kube.config import connect
from kubeview.cluster.source import SourceError


def run_on_cluster(args: argparse.Namespace, workloads: list[Workload], previous: dict | None,
                   say: Callable[[str], None]) -> int:
    as_json = bool(getattr(args, "json", False))
    progress = (lambda line: sys.stderr.write(line + "\n")) if as_json else say
    options = KubeOptions(yes=bool(getattr(args, "yes", False)))
    if getattr(args, "schedulers", None):
        options.schedulers = list(args.schedulers)
    if getattr(args, "parallel", None):
        options.workers = int(args.parallel)
    if getattr(args, "timeout", None):
        options.timeout = float(args.timeout)
    try:
        conn = connect(args.kubeconfig, getattr(args, "context", None))
        bench = KubeBench(conn, options, progress)
        progress(f"kube-scheduler on {conn.title}: SchedulingThroughput (pods/s) from the pods' bindings, "
            f"schedulers {', '.join(options.schedulers)}; run {bench.run_id} (namespace {bench.namespace})")
        results = bench.run(workloads)
    except (BenchError, SourceError) as exc:
        sys.stderr.write(f"kubeview bench scheduler: {exc}\n")
        return 1
    by_workload: dict[str, list[WorkloadResult]] = {}
    for r in results:
        by_workload.setdefault(r.name.rsplit("/", 1)[0], []).append(r)
    for group in by_workload.values():
        for r in group:
            say(throughput_line(r))
            if r.gpu:
                say("    GPU packing: " + ", ".join(f"{k}={v}" for k, v in r.gpu.items()))
        say(ratio_line(group))
    emit([r.data_item() for r in results], as_json, previous)
    return 0


def ratio_line(group: list[WorkloadResult]) -> str:
    """Each scheduler's Average against the first's."""
    base = throughput_summary(group[0].samples)["Average"]
    parts = []
    for r in group[1:]:
        now = throughput_summary(r.samples)["Average"]
        parts.append(f"{r.name.rsplit('/', 1)[1]} / {group[0].name.rsplit('/', 1)[1]}: "
                     + (f"{now / base:.2f}x" if base else "-"))
    if not parts:
        return "    (one scheduler: no ratio; pass --schedulers A,B to compare two)"
    return ("    Average ratio " + ", ".join(parts)
            + " (targets: >= 0.90 with nodeCacheCapable: true, >= 0.50 with full Nodes)")
