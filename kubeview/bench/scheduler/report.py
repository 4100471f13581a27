"""How `kubeview bench scheduler` prints what it measured: throughput and latency lines beside their
targets, the extender's predicted share of kube-scheduler's throughput, the scheduler_perf results
document (`--json`) and the comparison with a previous one (`--compare`). Shared by the in-process
run (command) and the real-cluster run (kube_cli), below both.
"""

from __future__ import annotations

import json
import sys

from kubeview.bench.machine import describe
from kubeview.bench.scheduler.extender import WINDOW, LatencyResult
from kubeview.bench.scheduler.run import WorkloadResult, throughput_summary

THROUGHPUT_TARGET = 2000.0  # pods/s at 5,000 nodes (kube-scheduler's CI threshold there is 270)
# kube-scheduler's scheduling cycle is serial: the extender's prioritize round trip adds to it; its
# bind runs in the binding cycle, but its CPU time comes off the same cores. How long the plain
# cycle is comes from a plain kube-scheduler measured in the same run (`--kubeconfig`), never a constant.
UPSTREAM_BASIC_5000 = 680.0  # pods/s: upstream scheduler_perf SchedulingBasic/5000Nodes threshold (its CI)
RATIO_TARGETS = {"NodeNames": 0.9}  # full Nodes: kube-scheduler's own encoding of the list dominates (below)


def emit(items: list[dict], as_json: bool, previous: dict | None) -> None:
    """The results file on stdout with --json; the comparison beside it (stderr then) with --compare."""
    doc = {"version": "v1", "dataItems": items}
    if as_json:
        print(json.dumps(doc, indent=2))
    if previous is not None:
        out = sys.stderr if as_json else sys.stdout
        out.write(compare_table(previous, doc) + "\n")


def verdict(ok: bool) -> str:
    return "PASS" if ok else "FAIL"


def throughput_line(r: WorkloadResult, embedded: bool = True) -> str:
    """One SchedulingThroughput line; the >= 2,000 pods/s target is the embedded scheduler's, so a
    real kube-scheduler's line (`embedded` false) is judged only by a threshold its scenario sets."""
    d = r.data_item()["data"]
    figures = (f"{r.name:<28} {r.nodes:>5} nodes {r.measured_pods:>5} pods  Average {d['Average']:>8.1f}  "
               f"Perc50 {d['Perc50']:>8.1f}  Perc90 {d['Perc90']:>8.1f}  Perc99 {d['Perc99']:>8.1f}")
    if r.unschedulable:
        figures += f"  ({r.unschedulable} unschedulable)"
    default = THROUGHPUT_TARGET if embedded and r.nodes >= 5000 else None
    target = r.threshold if r.threshold is not None else default
    if not target:
        return figures + "  target -"
    return figures + f"  target >= {target:.0f}: {verdict(d['Average'] >= target)} ({d['Average'] / target:.2f}x)"


def gang_lines(results: list[WorkloadResult]) -> list[str]:
    """Each gang workload's Average beside the plain workload of the same test case, node count and
    scheduler (names `<test>/<workload>[/<scheduler>]`): what placing pods in groups costs."""
    def key(r: WorkloadResult) -> tuple[str, str, int]:
        parts = r.name.split("/")
        return parts[0], parts[2] if len(parts) > 2 else "", r.nodes
    plain = {key(r): r for r in results if not r.gang_size}
    out = []
    for r in results:
        base = plain.get(key(r)) if r.gang_size else None
        if base is None:
            continue
        now, then = throughput_summary(r.samples)["Average"], throughput_summary(base.samples)["Average"]
        ratio = f"{now / then:.2f}x" if then else "- x"
        out.append(f"    gangs of {r.gang_size} ({r.name}): {now:.1f} pods/s = {ratio} plain "
                   f"({base.name}: {then:.1f} pods/s)")
    return out


def latency_line(lat: LatencyResult) -> str:
    verbs = ", ".join(f"{v} p50 {ms:.3f}" for v, ms in lat.verb_p50_ms.items())
    figures = (f"{lat.name:<28} {lat.calls:>5} pods  p50 {lat.p50_ms:>7.3f} ms  p99 {lat.p99_ms:>7.3f} ms  ({verbs})")
    server = lat.server_ms or {}
    if all(v in server for v in lat.verbs):
        parts = [server[v] for v in lat.verbs]
        figures += "  [server side p50 " + " + ".join(f"{p.get('p50_ms', 0):.3f}" for p in parts) + " ms"
        if all("cpu_p50_ms" in p for p in parts):
            figures += ("; its CPU time p50 " + " + ".join(f"{p['cpu_p50_ms']:.3f}" for p in parts) + " ms, p99 "
                        + " + ".join(f"{p['cpu_p99_ms']:.3f}" for p in parts) + " ms")
        figures += "]"
    if lat.steal is not None:
        figures += f"  [{describe(lat.steal)}]"
    if lat.target_p99_ms is None:
        return figures + "  target -"
    judged = lat.judged_p99_ms
    windows = ", ".join(f"{w:.2f}" for w in lat.window_p99_ms or [])
    ok = judged <= lat.target_p99_ms
    return figures + (f"\n    p99 per window of {WINDOW} pods: {windows} ms; median window {judged:.3f} ms; "
                      f"target p99 <= {lat.target_p99_ms:g} ms: {verdict(ok)} ({lat.target_p99_ms / judged:.2f}x)")


def added_ms(lat: LatencyResult) -> float | None:
    """What the extender adds per pod to kube-scheduler's cost: prioritize's round trip (in the serial
    scheduling cycle) and the bind's CPU time (its wait is in the binding cycle, off the critical path)."""
    prioritize = lat.verb_p50_ms.get("prioritize")
    if prioritize is None:
        return None
    bind_cpu = ((lat.server_ms or {}).get("bind") or {}).get("cpu_p50_ms", lat.verb_p50_ms.get("bind", 0.0))
    return prioritize + bind_cpu


def predicted_ratio(lat: LatencyResult, scheduler_ms: float) -> float | None:
    """The share of a plain kube-scheduler's throughput left with the extender, given the plain
    scheduler's measured milliseconds per pod."""
    extra = added_ms(lat)
    return None if extra is None else scheduler_ms / (scheduler_ms + extra)


def prediction_line(lat: LatencyResult, scheduler_ms: float | None, source: str = "") -> str:
    """The extender's CPU and added time per pod; with `scheduler_ms` (a plain kube-scheduler measured
    in the same run, named by `source`) the share of throughput that predicts, beside its target."""
    cpu = lat.cpu_per_pod_ms
    line = f"    extender CPU per pod {cpu:.3f} ms" if cpu is not None else "    extender CPU per pod -"
    extra = added_ms(lat)
    if extra is None:
        return line
    line += f"; adds {extra:.3f} ms per pod to kube-scheduler's cycle"
    if scheduler_ms is None:
        return line + " (the share of throughput that leaves: `--kubeconfig` runs measure plain kube-scheduler)"
    ratio = scheduler_ms / (scheduler_ms + extra)
    line += f"; with plain kube-scheduler at {scheduler_ms:.1f} ms per pod ({source}) this predicts {ratio:.3f}"
    target = RATIO_TARGETS.get(lat.mode)
    if target is None:  # kube-scheduler's Go side encodes ~4 KB per Node per call: not in this figure
        return line + " (kube-scheduler's own encoding of the full Node list is not in this figure)"
    return line + f", target >= {target:.2f}: {verdict(ratio >= target)}"


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
