"""`kubeview bench scheduler --kubeconfig FILE`: options in, figures out (the run is scheduler_kube's).

Printed per workload: one SchedulingThroughput line per scheduler (scheduler_perf DataItems, Name
`<test>/<workload>/<scheduler>`), its GPU packing, the pods it left Pending and what a kubeview plan
would place of them (plan_recovery), then every scheduler's Average as a ratio to the first's beside
the targets (the native profile ≈ 1.0; the extender >= 0.90 with `nodeCacheCapable: true`, >= 0.60
with full Nodes) and the pods each left Pending, side by side. With `--rounds N` every workload runs N
times per scheduler, in an order reversed each round, and each round's ratios and their median are
printed too: one 1,000-pod run moves by ±0.1 on this 2-core machine with nothing changed.
No throughput target is judged: the embedded scheduler's >= 2,000 pods/s is not a real
kube-scheduler's; upstream's SchedulingBasic threshold is shown beside the first line for scale.
Then the prediction made honest: the in-process extender round trip (scheduler_extender.measure, as
many GPU nodes as the workload has, both modes) against the plain scheduler's milliseconds per pod
measured in this run, beside the ratio that was measured.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from collections.abc import Callable

from kubeview.bench.scheduler.extender import full_nodes, gpu_node, measure
from kubeview.bench.scheduler.kube import BenchError, KubeBench, KubeOptions
from kubeview.bench.scheduler.report import (
    UPSTREAM_BASIC_5000,
    emit,
    gang_lines,
    prediction_line,
    throughput_line,
)
from kubeview.bench.scheduler.run import WorkloadResult, throughput_summary
from kubeview.bench.scheduler.scenarios import Workload
from kubeview.cluster.kube.config import connect
from kubeview.cluster.source import SourceError


def run_on_cluster(args: argparse.Namespace, workloads: list[Workload], previous: dict | None,
                   say: Callable[[str], None]) -> int:
    as_json = bool(getattr(args, "json", False))
    def to_stderr(line: str) -> None:
        sys.stderr.write(line + "\n")

    progress = to_stderr if as_json else say
    options = KubeOptions(yes=bool(getattr(args, "yes", False)))
    if getattr(args, "schedulers", None):
        options.schedulers = list(args.schedulers)
    if getattr(args, "parallel", None):
        options.workers = int(args.parallel)
    if getattr(args, "timeout", None):
        options.timeout = float(args.timeout)
    if getattr(args, "rounds", None):
        options.rounds = int(args.rounds)
    try:
        conn = connect(args.kubeconfig, getattr(args, "context", None))
        bench = KubeBench(conn, options, progress)
        progress(f"kube-scheduler on {conn.title}: SchedulingThroughput (pods/s) from the pods' bindings, "
            f"schedulers {', '.join(options.schedulers)}; run {bench.run_id} (namespace {bench.namespace})")
        results = bench.run(workloads)
    except (BenchError, SourceError) as exc:
        sys.stderr.write(f"kubeview bench scheduler: {exc}\n")
        return exc.exit_code if isinstance(exc, SourceError) else 1
    by_workload: dict[str, list[WorkloadResult]] = {}
    for r in results:
        by_workload.setdefault(r.name.rsplit("/", 1)[0], []).append(r)
    for group in by_workload.values():
        for i, r in enumerate(group):
            say(throughput_line(r, embedded=False)
                + (f" (upstream SchedulingBasic/5000Nodes threshold {UPSTREAM_BASIC_5000:.0f} on its CI)"
                   if i == 0 and r.nodes >= 5000 else ""))
            if r.gpu:
                say("    GPU packing: " + ", ".join(f"{k}={v}" for k, v in r.gpu.items()))
                say(pending_line(r))
                if r.recovery:
                    say(f"    kubeview plan: {r.recovery}")
        say(ratio_line(group))
        if len(group) > 1 and any(r.gpu for r in group):
            say(pending_summary(group))
        if len(group) > 1 and not getattr(args, "no_predict", False):
            for line in predictions(group):
                say(line)
    for line in gang_lines(results):
        say(line)
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
    line = ("    Average ratio " + ", ".join(parts)
            + " (targets: native profile ≈ 1.0; extender >= 0.90 with nodeCacheCapable: true, >= 0.60 with full Nodes)")
    rounds = round_ratios(group)
    return line + "".join(f"\n    {name} / {group[0].name.rsplit('/', 1)[1]} per round: "
                          + " ".join(f"{x:.2f}" for x in ratios) + f"; median {statistics.median(ratios):.2f}"
                          for name, ratios in rounds.items())


def round_ratios(group: list[WorkloadResult]) -> dict[str, list[float]]:
    """Each scheduler's Average against the first's, round by round (runs with --rounds 2 or more):
    the two ran minutes apart at most, in an order that alternates, so a round's ratio is the fair one."""
    base = group[0].round_rates
    if len(base) < 2:
        return {}
    return {r.name.rsplit("/", 1)[1]: [now / then for now, then in zip(r.round_rates, base, strict=True) if then]
            for r in group[1:] if len(r.round_rates) == len(base)}


def pending_summary(group: list[WorkloadResult]) -> str:
    """The measured pods each scheduler left Pending, on one line: what packing is for."""
    return "    left Pending side by side: " + ", ".join(
        f"{r.name.rsplit('/', 1)[1]} {r.unschedulable} of {r.measured_pods}" for r in group)


def predictions(group: list[WorkloadResult], calls: int = 200) -> list[str]:
    """The in-process prediction with the plain scheduler's cost per pod from this very run."""
    base = throughput_summary(group[0].samples)["Average"]
    gpu_nodes = int(group[0].gpu.get("gpu_nodes", 0)) if group[0].gpu else 0
    if not base or not gpu_nodes:
        return ["    prediction: - (no plain throughput or no GPU nodes measured)"]
    ms = 1000.0 / base
    source = f"{group[0].name.rsplit('/', 1)[1]} in this run"
    names = measure([gpu_node(f"gpu-node-{i:05d}") for i in range(gpu_nodes)], "NodeNames", calls,
                    f"Extender/{gpu_nodes}NodeNames")
    full = measure(full_nodes(gpu_nodes), "Nodes", max(20, calls // 4), f"Extender/{gpu_nodes}Nodes")
    return ["    in-process prediction, " + lat.name + ":" + prediction_line(lat, ms, source)[3:] for lat in (names, full)]


def pending_line(r: WorkloadResult) -> str:
    """The measured pods left Pending beside the GPUs left free: Pending with enough free GPUs in
    total is Pending by fragmentation (GPUPacking's 8-GPU wave, scenarios/scheduler-realk8s.yaml)."""
    return (f"    left Pending: {r.unschedulable} of {r.measured_pods} measured pods, with {r.gpu.get('gpus_free', 0)} "
            f"GPUs free ({r.gpu.get('gpu_nodes_empty', 0)} GPU nodes wholly free, "
            f"{r.gpu.get('stranded_gpus', 0)} GPUs stranded on nodes in use)")
