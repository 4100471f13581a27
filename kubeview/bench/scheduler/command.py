"""`kubeview bench scheduler [SCENARIOS.yaml] [--compare previous.json | --against TREE] [--json] [--quick]`.

Two measurements, each printed beside its target:
1. SchedulingThroughput of the embedded scheduler on every workload of a scheduler_perf-style
   scenario file (the bundled `scenarios/scheduler.yaml`: SchedulingBasic at 500 and 5,000 nodes,
   GPUPacking at 5,000), as scheduler_perf DataItems. Target: >= 2,000 pods/s at 5,000 nodes.
2. The extender's round trips per pod over loopback HTTP with the shipped verb (prioritize),
   with 5,000 `NodeNames` (target: p99 <= 3 ms) and with 500 full Node objects (`nodeCacheCapable:
   false`; target p99 <= 15 ms), its CPU time per pod, and the time it adds to kube-scheduler's
   cycle per pod. The share of throughput that leaves is only predicted where a plain kube-scheduler
   is measured in the same run (`--kubeconfig`, scheduler_kube_cli): a constant from another
   machine and load predicted 0.965 where a real plane gave 0.54-0.65 (issue #25 item 5).

With `--kubeconfig FILE` it runs the scenarios against that cluster's API server and real
kube-scheduler instead (`kubeview.bench.scheduler.kube`), once per `--schedulers` name.

`--against TREE [--rounds N]` measures only the extender (filter + prioritize), alternating this tree
and another source tree (main's checkout) in one run, and prints the ratios (`scheduler/ab.py`).

`--json` prints `{"version": "v1", "dataItems": [...]}` (scheduler_perf's result file); save it and
pass it to `--compare` next time for a previous / current / diff % table per workload.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from kubeview.bench.scheduler.extender import full_nodes, gpu_node, measure
from kubeview.bench.scheduler.report import emit, gang_lines, latency_line, prediction_line, throughput_line
from kubeview.bench.scheduler.run import WorkloadResult, run_workload
from kubeview.bench.scheduler.scenarios import ScenarioError, Workload, load, scaled

EXTENDER_P99_TARGET_MS = 3.0
FULL_NODES_P99_TARGET_MS = 15.0


def run(args: argparse.Namespace) -> int:
    quick = bool(getattr(args, "quick", False))
    try:
        workloads = load(getattr(args, "scenarios", None))
        previous = _load_previous(getattr(args, "compare", None))
    except (ScenarioError, ValueError) as exc:
        sys.stderr.write(f"kubeview bench scheduler: {exc}\n")
        return 2  # a scenarios or --compare file given on the command line
    if quick:  # a smoke run: a tenth of every count, and no verdicts (the targets are for full sizes)
        workloads = [_no_threshold(w) for w in scaled(workloads, 0.1)]
    as_json = bool(getattr(args, "json", False))
    say = (lambda *a: None) if as_json else print
    if getattr(args, "against", None):
        from kubeview.bench.scheduler.ab import run as run_ab
        return run_ab(args.against, getattr(args, "rounds", None) or 3, quick, lambda line: print(line, flush=True))
    if getattr(args, "kubeconfig", None):
        from kubeview.bench.scheduler.kube_cli import run_on_cluster
        return run_on_cluster(args, workloads, previous, say)
    if any(op.opcode == "deletePods" for w in workloads for op in w.ops):
        sys.stderr.write("kubeview bench scheduler: deletePods (pods leaving) runs only on a real cluster "
                         "(--kubeconfig FILE); the embedded scheduler has no unbinding\n")
        return 2
    if getattr(args, "context", None):
        sys.stderr.write("kubeview bench scheduler: --context needs --kubeconfig FILE (the bench never picks "
                         "a cluster by itself)\n")
        return 2
    if getattr(args, "rounds", None):
        sys.stderr.write("kubeview bench scheduler: --rounds needs --kubeconfig FILE or --against TREE (the "
                         "embedded scheduler's runs are not drawn from a shared machine's minutes)\n")
        return 2

    say("embedded scheduler: SchedulingThroughput (pods/s), scheduler_perf DataItems"
        + (" [--quick: counts x0.1, targets not judged]" if quick else ""))
    results: list[WorkloadResult] = []
    for workload in workloads:
        result = run_workload(workload)
        results.append(result)
        say(throughput_line(result))
        if result.gpu:
            say("    GPU packing: " + ", ".join(f"{k}={v}" for k, v in result.gpu.items()))

    for line in gang_lines(results):
        say(line)

    say("extender: kube-scheduler's calls for one pod over loopback HTTP, the shipped verb (prioritize)")
    latencies = [
        measure([gpu_node(f"gpu-node-{i:05d}") for i in range(500 if quick else 5000)], "NodeNames",
                100 if quick else 1000, "Extender/5000NodeNames" if not quick else "Extender/500NodeNames",
                None if quick else EXTENDER_P99_TARGET_MS),
        measure(full_nodes(50 if quick else 500), "Nodes", 20 if quick else 200,
                "Extender/50Nodes" if quick else "Extender/500Nodes", None if quick else FULL_NODES_P99_TARGET_MS),
    ]
    for lat in latencies:
        say(latency_line(lat))
        say(prediction_line(lat, None))

    emit([r.data_item() for r in results] + [lat.data_item() for lat in latencies], as_json, previous)
    return 0


def _no_threshold(workload: Workload) -> Workload:
    workload.threshold = 0.0
    return workload


def _load_previous(path: str | None) -> dict | None:
    if not path:
        return None
    try:
        doc = json.loads(Path(path).read_text())
    except OSError as exc:
        raise ValueError(f"cannot read {path}: {exc.strerror}") from exc
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path} is not JSON: {exc}") from exc
    if not isinstance(doc, dict) or not isinstance(doc.get("dataItems"), list):
        raise ValueError(f"{path} is not a results file (a JSON object with dataItems, from --json)")
    return doc


