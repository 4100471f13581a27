"""`kubeview bench scheduler [SCENARIOS.yaml] [--compare previous.json] [--json] [--quick]`.

Two measurements, each printed beside its target:
1. SchedulingThroughput of the embedded scheduler on every workload of a scheduler_perf-style
   scenario file (the bundled `scenarios/scheduler.yaml`: SchedulingBasic at 500 and 5,000 nodes,
   GPUPacking at 5,000), as scheduler_perf DataItems. Target: >= 2,000 pods/s at 5,000 nodes.
2. The extender's filter+prioritize round trip over loopback HTTP, with 5,000 `NodeNames` (target:
   p99 <= 3 ms) and with 500 full Node objects (`nodeCacheCapable: false`; no target).

`--json` prints `{"version": "v1", "dataItems": [...]}` (scheduler_perf's result file); save it and
pass it to `--compare` next time for a previous / current / diff % table per workload.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import yaml

from kubeview.bench.machine import describe
from kubeview.bench.scheduler_extender import WINDOW, LatencyResult, gpu_node, measure
from kubeview.bench.scheduler_run import WorkloadResult, run_workload
from kubeview.bench.scheduler_scenarios import ScenarioError, Workload, load, scaled

THROUGHPUT_TARGET = 2000.0  # pods/s at 5,000 nodes (kube-scheduler's CI threshold there is 270)
EXTENDER_P99_TARGET_MS = 3.0
NODE_TEMPLATE = Path(__file__).resolve().parent / "scenarios" / "node-gpu-recorded.yaml"


def run(args: argparse.Namespace) -> int:
    quick = bool(getattr(args, "quick", False))
    try:
        workloads = load(getattr(args, "scenarios", None))
        previous = _load_previous(getattr(args, "compare", None))
    except (ScenarioError, ValueError) as exc:
        sys.stderr.write(f"kubeview bench scheduler: {exc}\n")
        return 1
    if quick:  # a smoke run: a tenth of every count, and no verdicts (the targets are for full sizes)
        workloads = [_no_threshold(w) for w in scaled(workloads, 0.1)]
    as_json = bool(getattr(args, "json", False))
    say = (lambda *a: None) if as_json else print

    say("embedded scheduler: SchedulingThroughput (pods/s), scheduler_perf DataItems"
        + (" [--quick: counts x0.1, targets not judged]" if quick else ""))
    results: list[WorkloadResult] = []
    for workload in workloads:
        result = run_workload(workload)
        results.append(result)
        say(_throughput_line(result))
        if result.gpu:
            say("    GPU packing: " + ", ".join(f"{k}={v}" for k, v in result.gpu.items()))

    say("extender: filter+prioritize round trip over loopback HTTP (kube-scheduler's calls for one pod)")
    latencies = [
        measure([gpu_node(f"gpu-node-{i:05d}") for i in range(500 if quick else 5000)], "NodeNames",
                100 if quick else 1000, "Extender/5000NodeNames" if not quick else "Extender/500NodeNames",
                None if quick else EXTENDER_P99_TARGET_MS),
        measure(_full_nodes(50 if quick else 500), "Nodes", 20 if quick else 200,
                "Extender/50Nodes" if quick else "Extender/500Nodes"),
    ]
    for lat in latencies:
        say(_latency_line(lat))

    items = [r.data_item() for r in results] + [lat.data_item() for lat in latencies]
    doc = {"version": "v1", "dataItems": items}
    if as_json:
        print(json.dumps(doc, indent=2))
    if previous is not None:
        out = sys.stderr if as_json else sys.stdout
        out.write(compare_table(previous, doc) + "\n")
    return 0


def _no_threshold(workload: Workload) -> Workload:
    workload.threshold = 0.0
    return workload


def _full_nodes(count: int) -> list[dict]:
    """Full Node objects as kube-scheduler sends them (recorded gpu-node-1, managedFields and all)."""
    template = yaml.safe_load(NODE_TEMPLATE.read_text())
    return [gpu_node(f"gpu-node-{i:05d}", template) for i in range(count)]


def _verdict(ok: bool) -> str:
    return "PASS" if ok else "FAIL"


def _throughput_line(r: WorkloadResult) -> str:
    d = r.data_item()["data"]
    figures = (f"{r.name:<28} {r.nodes:>5} nodes {r.measured_pods:>5} pods  Average {d['Average']:>8.1f}  "
               f"Perc50 {d['Perc50']:>8.1f}  Perc90 {d['Perc90']:>8.1f}  Perc99 {d['Perc99']:>8.1f}")
    if r.unschedulable:
        figures += f"  ({r.unschedulable} unschedulable)"
    target = r.threshold if r.threshold is not None else (THROUGHPUT_TARGET if r.nodes >= 5000 else None)
    if not target:
        return figures + "  target -"
    return figures + f"  target >= {target:.0f}: {_verdict(d['Average'] >= target)} ({d['Average'] / target:.2f}x)"


def _latency_line(lat: LatencyResult) -> str:
    figures = (f"{lat.name:<28} {lat.calls:>5} pods  p50 {lat.p50_ms:>7.3f} ms  p99 {lat.p99_ms:>7.3f} ms  "
               f"(filter p50 {lat.filter_p50_ms:.3f}, prioritize p50 {lat.prioritize_p50_ms:.3f})")
    server = lat.server_ms or {}
    if "filter" in server and "prioritize" in server:
        f, p = server["filter"], server["prioritize"]
        figures += f"  [server side p50 {f.get('p50_ms', 0):.3f} + {p.get('p50_ms', 0):.3f} ms"
        if "cpu_p50_ms" in f and "cpu_p50_ms" in p:
            figures += (f"; its CPU time p50 {f['cpu_p50_ms']:.3f} + {p['cpu_p50_ms']:.3f} ms, "
                        f"p99 {f['cpu_p99_ms']:.3f} + {p['cpu_p99_ms']:.3f} ms")
        figures += "]"
    if lat.steal is not None:
        figures += f"  [{describe(lat.steal)}]"
    if lat.target_p99_ms is None:
        return figures + "  target -"
    judged = lat.judged_p99_ms
    windows = ", ".join(f"{w:.2f}" for w in lat.window_p99_ms or [])
    ok = judged <= lat.target_p99_ms
    return figures + (f"\n    p99 per window of {WINDOW} pods: {windows} ms; median window {judged:.3f} ms; "
                      f"target p99 <= {lat.target_p99_ms:g} ms: {_verdict(ok)} ({lat.target_p99_ms / judged:.2f}x)")


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


def _key(item: dict) -> tuple[str, str]:
    labels = item.get("labels") or {}
    return labels.get("Metric", ""), labels.get("Name", "")


def compare_table(previous: dict, current: dict) -> str:
    """previous / current / diff % per workload, as release notes show scheduler_perf results."""
    before = {_key(i): i for i in previous.get("dataItems", []) if isinstance(i, dict)}
    rows = [("Metric", "Name", "stat", "previous", "current", "diff %")]
    for item in current["dataItems"]:
        old = before.get(_key(item))
        stat = "Average" if "Average" in item["data"] else "Perc99"
        now = item["data"][stat]
        if old is None or stat not in (old.get("data") or {}):
            rows.append((*_key(item), stat, "-", f"{now:.2f}", "new"))
            continue
        was = float(old["data"][stat])
        diff = f"{(now - was) / was * 100:+.1f}" if was else "-"
        rows.append((*_key(item), stat, f"{was:.2f}", f"{now:.2f}", diff))
    widths = [max(len(str(r[i])) for r in rows) for i in range(6)]
    lines = ["  ".join(str(c).ljust(w) if i < 3 else str(c).rjust(w) for i, (c, w) in enumerate(zip(r, widths, strict=True)))
             for r in rows]
    unit_note = "(SchedulingThroughput in pods/s, higher is better; latency in ms, lower is better)"
    return "\n".join(["compared with the previous run " + unit_note, *lines])
