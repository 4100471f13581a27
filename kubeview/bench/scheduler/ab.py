"""`kubeview bench scheduler --against TREE`: the extender's round trips from this tree and another
source tree (e.g. main's checkout), alternating in one run, reported as ratios.

On a shared 2-core machine a latency measured an hour apart says more about the neighbours than
about a change; measured alternately in the same run, the ratio of two trees is steady even when the
absolute figures are not. Each measurement runs in a fresh interpreter with PYTHONPATH set to its
tree, calling that tree's own `kubeview.bench.scheduler.extender.measure` (the same client, server
and node sets on both sides), with kube-scheduler's filter + prioritize (the issue #16 targets).
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parents[3]  # the tree this module belongs to

# What runs in each child: both trees have these functions (kept stable for this reason), in the
# layout since #26 (bench/scheduler/) or the flat one before it, so older trees can be compared.
_CHILD = r"""
import json, sys
try:
    from kubeview.bench.scheduler.extender import measure, gpu_node, full_nodes as _full_nodes
except ModuleNotFoundError:
    from kubeview.bench.scheduler_extender import measure, gpu_node
    from kubeview.bench.scheduler import _full_nodes
names, full, calls_names, calls_full = (int(a) for a in sys.argv[1:5])
verbs = ("filter", "prioritize")
r1 = measure([gpu_node(f"gpu-node-{i:05d}") for i in range(names)], "NodeNames", calls_names,
             f"Extender/{names}NodeNames", verbs=verbs)
r2 = measure(_full_nodes(full), "Nodes", calls_full, f"Extender/{full}Nodes", verbs=verbs)
print(json.dumps([r.data_item() for r in (r1, r2)]))
"""


@dataclass
class Side:
    tree: Path
    runs: dict[str, list[dict]] = field(default_factory=dict)  # name -> each round's data

    def median(self, name: str, stat: str) -> float:
        values = [d[stat] for d in self.runs.get(name, []) if stat in d]
        return statistics.median(values) if values else float("nan")


def run_tree(tree: Path, sizes: tuple[int, int, int, int]) -> list[dict]:
    """One measurement from `tree` in a fresh interpreter; RuntimeError with its last words on failure."""
    env = dict(os.environ, PYTHONPATH=str(tree))
    proc = subprocess.run([sys.executable, "-c", _CHILD, *map(str, sizes)], env=env, cwd=tree,
                          capture_output=True, text=True, timeout=1800)
    if proc.returncode:
        tail = (proc.stderr.strip().splitlines() or ["no output"])[-1]
        raise RuntimeError(f"the measurement from {tree} failed: {tail}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def load_average() -> str:
    try:
        return " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return "unknown"


def compare(against: Path, rounds: int, quick: bool, say) -> tuple[Side, Side]:
    """`rounds` of (this tree, the other), alternating; each line printed as it comes."""
    sizes = (500, 50, 100, 20) if quick else (5000, 500, 600, 150)
    this, other = Side(HERE), Side(against)
    for rnd in range(rounds):
        for side in (this, other) if rnd % 2 == 0 else (other, this):
            load = load_average()
            for item in run_tree(side.tree, sizes):
                name = item["labels"]["Name"]
                side.runs.setdefault(name, []).append(item["data"])
                d = item["data"]
                say(f"  round {rnd + 1} {side.tree}: {name:<24} p50 {d['Perc50']:7.3f} ms  p99 {d['Perc99']:7.3f} ms"
                    f"  CPU/pod {d.get('CPUPerPod', float('nan')):6.3f} ms  [load {load}]")
    return this, other


def ratio_lines(this: Side, other: Side) -> list[str]:
    """Per workload: medians over the rounds on each side, and this tree's over the other's."""
    lines = []
    for name in this.runs:
        if name not in other.runs:
            continue
        parts = []
        for stat in ("Perc50", "Perc99", "CPUPerPod"):
            a, b = this.median(name, stat), other.median(name, stat)
            parts.append(f"{stat} {a:.3f} vs {b:.3f} ms ({a / b:.2f}x)")
        lines.append(f"{name:<24} this/other, medians of {len(this.runs[name])} rounds: " + "; ".join(parts))
    return lines


def run(against: str, rounds: int, quick: bool, say) -> int:
    tree = Path(against).resolve()
    bench = tree / "kubeview" / "bench"
    if not ((bench / "scheduler" / "extender.py").is_file() or (bench / "scheduler_extender.py").is_file()):
        sys.stderr.write(f"kubeview bench scheduler: --against {against} is not a kubeview source tree\n")
        return 2  # a path given on the command line: a usage error
    say(f"extender A/B: filter + prioritize round trips, {HERE} (this) against {tree}, {rounds} rounds alternating"
        + (" [--quick]" if quick else ""))
    try:
        this, other = compare(tree, rounds, quick, say)
    except (RuntimeError, subprocess.TimeoutExpired) as exc:
        sys.stderr.write(f"kubeview bench scheduler: {exc}\n")
        return 1
    for line in ratio_lines(this, other):
        say(line)
    return 0
