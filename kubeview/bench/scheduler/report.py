"""How `kubeview bench scheduler` prints what it measured: throughput lines beside their targets,
the scheduler_perf results document (`--json`) and the comparison with a previous one
(`--compare`). Shared by the in-process run (command) and the real-cluster run (kube_cli), below both.
"""

from __future__ import annotations

import json
import sys

from kubeview.bench.scheduler.run import WorkloadResult

THROUGHPUT_TARGET = 2000.0  # pods/s at 5,000 nodes (kube-scheduler's CI threshold there is 270)


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


def throughput_line(r: WorkloadResult) -> str:
    d = r.data_item()["data"]
    figures = (f"{r.name:<28} {r.nodes:>5} nodes {r.measured_pods:>5} pods  Average {d['Average']:>8.1f}  "
               f"Perc50 {d['Perc50']:>8.1f}  Perc90 {d['Perc90']:>8.1f}  Perc99 {d['Perc99']:>8.1f}")
    if r.unschedulable:
        figures += f"  ({r.unschedulable} unschedulable)"
    target = r.threshold if r.threshold is not None else (THROUGHPUT_TARGET if r.nodes >= 5000 else None)
    if not target:
        return figures + "  target -"
    return figures + f"  target >= {target:.0f}: {verdict(d['Average'] >= target)} ({d['Average'] / target:.2f}x)"


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
