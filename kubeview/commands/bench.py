"""`kubeview bench WHAT`: dispatches to `kubeview.bench.WHAT.run(args)` (a sub-package's `command`)."""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import re

from kubeview import cli_types as t
from kubeview.bench.cluster import SKIPPABLE

NAME = "bench"  # `kubeview bench`


def add_parser(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    bench = sub.add_parser(NAME, help="benchmarks that print figures (not tests)",
                           description="Benchmarks: each prints its figures and the targets they are judged by.")
    bench.add_argument("what", choices=["model", "scheduler", "tui", "render", "plan", "cluster"],
                       help="what to measure")
    bench.add_argument("scenarios", nargs="?", help="scheduler: scenarios YAML (default: the bundled one)")
    bench.add_argument("--compare", metavar="JSON", help="scheduler: previous results to compare against")
    bench.add_argument("--json", action="store_true", help="print the figures as JSON")
    bench.add_argument("--quick", action="store_true", help="smaller sizes, for a smoke run")
    bench.add_argument("--quota", action="store_true",
                       help="model: 500 namespaces with a ResourceQuota each, a Job held by quota in every tenth: "
                            "what the quota views add to the build and the snapshot (target: at most 10%%)")
    bench.add_argument("--dra", action="store_true",
                       help="model: 1,000 GPU nodes publish 8 DRA GPUs each (ResourceSlices), 8,000 ResourceClaims")
    bench.add_argument("--against", metavar="TREE", help="scheduler: the extender's round trips from this tree and "
                       "another kubeview source tree (e.g. main's checkout), alternating in one run, as ratios")
    bench.add_argument("--rounds", metavar="N", type=t.int_range(1, 20),
                       help="with --against: rounds (default: 3); with --kubeconfig: runs of each workload per "
                            "scheduler, the order reversed every round, with each round's ratios (default: 1)")
    real = bench.add_argument_group("scheduler on a real cluster (creates fake nodes and pods, removes them after)")
    real.add_argument("--kubeconfig", metavar="FILE", default=argparse.SUPPRESS,
                      help="run the scenarios against this cluster's API server and kube-scheduler")
    real.add_argument("--context", default=argparse.SUPPRESS, help="kubeconfig context (default: the current one)")
    real.add_argument("--schedulers", metavar="A,B", type=t.distinct_names,
                      help="scheduler names to run each workload with, the first is the baseline "
                           "(default: default-scheduler,kubeview-scheduler)")
    real.add_argument("--timeout", metavar="SECONDS", type=t.seconds,
                      help="give up on pods not placed this long after their op started (default: 600)")
    real.add_argument("--parallel", metavar="N", type=t.int_range(1, 64),
                      help="create calls in flight (default: 8; 1 creates pods in the scenario's order)")
    real.add_argument("--yes", action="store_true", help="run even if the cluster has nodes kubeview did not create")
    filled = bench.add_argument_group("cluster: kubeview and its peers on a real API server it fills (--kubeconfig)")
    filled.add_argument("--nodes", metavar="N", type=t.int_range(1, 100_000), help="kwok nodes to create (default: 5000)")
    filled.add_argument("--pods", metavar="M", type=t.int_range(1, 1_000_000),
                        help="pods to create, bound by nodeName (default: 150000)")
    filled.add_argument("--duration", metavar="SECONDS", type=t.seconds,
                        help="each TUI's run: peak RSS is read this long after start (default: 60)")
    filled.add_argument("--churn-rate", metavar="N", type=t.int_range(0, 100_000),
                        help="pod label patches per second while the TUIs run (default: 1000)")
    filled.add_argument("--keep", action="store_true", help="leave the nodes and pods created (prints how to remove them)")
    filled.add_argument("--reuse", metavar="RUN", type=_run_id,
                        help="measure on the nodes and pods that run RUN left with --keep, instead of filling "
                             "(--nodes and --pods must be that run's; left as they are afterwards)")
    filled.add_argument("--skip", metavar="A,B", type=_skips, default=(),
                        help=f"peers not to measure, of: {', '.join(SKIPPABLE)} (each is said skipped; kubeview's own "
                             "figures and the raw transfer are always measured)")
    return bench


def _run_id(text: str) -> str:
    if not re.fullmatch(r"[0-9a-f]{6}", text):
        raise argparse.ArgumentTypeError(f"takes a run id of 6 hex digits, as bench cluster printed it; not {text!r}")
    return text


def _skips(text: str) -> tuple[str, ...]:
    names = tuple(dict.fromkeys(n.strip() for n in text.split(",") if n.strip()))
    bad = [n for n in names if n not in SKIPPABLE]
    if bad or not names:
        raise argparse.ArgumentTypeError(f"takes a comma-separated list of {', '.join(SKIPPABLE)}; not {text!r}")
    return names


def run(args: argparse.Namespace) -> int:
    name = f"kubeview.bench.{args.what}"
    if _is_package(name):  # bench/scheduler/: its entry point is command.py
        name += ".command"
    module = importlib.import_module(name)
    return int(module.run(args) or 0)


def _is_package(name: str) -> bool:
    spec = importlib.util.find_spec(name)
    return spec is not None and spec.submodule_search_locations is not None
