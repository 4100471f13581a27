"""`kubeview preempt NODE`: the demo's batch story, headless: an Indexed Job survives a preempted node.

Opens the demo (the embedded cluster, `--demo`), resumes its Job `jobs/work-items` (3,600 short work
items, `--items` for fewer), preempts NODE once `--after` of the indexes have succeeded (its pods
killed with `DisruptionTarget`, the node removed), waits for the Job to end and prints a line per
second, then which pods were disrupted and what became of their indexes. Exit 0 when the Job is
Complete and every index succeeded exactly once; 1 otherwise; 2 for a bad node name (one line).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from typing import TYPE_CHECKING

from kubeview import cli_types as t
from kubeview.cluster.source import SourceError

if TYPE_CHECKING:  # the work's imports wait for `run`: cli.py imports this module to build its parser
    from kubeview.cluster.local.source import LocalSource

NAMESPACE, JOB = "jobs", "work-items"


NAME = "preempt"  # `kubeview preempt`


def add_parser(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    pre = sub.add_parser(NAME, help="demo: preempt a node under the demo's Indexed Job, headless",
                         description="On the embedded demo cluster: run the Job jobs/work-items, preempt NODE "
                                     "mid-way, and show that every index succeeds exactly once.")
    pre.add_argument("node", help="the node to preempt, e.g. gpu-node-2")
    pre.add_argument("--after", type=t.fraction, default=0.25, metavar="FRACTION",
                     help="preempt once this share of the indexes succeeded (default: 0.25)")
    pre.add_argument("--items", type=t.int_range(1, 100_000), default=3600, help="work items (default: 3600)")
    pre.add_argument("--timeout", type=t.seconds, default=600.0, metavar="SECONDS",
                     help="give up after this long (default: 600)")
    pre.add_argument("--json", action="store_true", help="print the outcome as JSON")
    return pre


def run(args: argparse.Namespace) -> int:
    from kubeview.cluster.local.demo import open_demo

    try:
        source = open_demo(job_items=args.items)
    except SourceError as exc:
        sys.stderr.write(f"kubeview: {exc}\n")
        return exc.exit_code
    try:
        if source.get("Node", "", args.node) is None:
            names = ", ".join(source.model().node_names())
            sys.stderr.write(f"kubeview: no node {args.node!r} in the demo cluster; try one of {names}\n")
            return 2  # a name given on the command line: usage, as `plan`'s unknown pod
        return drive(source, args)
    finally:
        source.close()


def drive(source: LocalSource, args: argparse.Namespace) -> int:
    out = sys.stderr if args.json else sys.stdout  # with --json, stdout is the JSON document only
    source.suspend_job(NAMESPACE, JOB, False)
    started = time.monotonic()
    deadline = started + args.timeout
    preempted = False
    last_line = 0.0
    total = args.items
    while True:
        status = (source.get("Job", NAMESPACE, JOB) or {}).get("status") or {}
        succeeded = int(status.get("succeeded") or 0)
        if not preempted and succeeded >= args.after * total:
            print(f"{time.monotonic() - started:6.1f}s  {succeeded}/{total} succeeded: "
                  f"{source.preempt_node(args.node)}", file=out, flush=True)
            preempted = True
        done = next((c["type"] for c in status.get("conditions") or []
                     if c["type"] in ("Complete", "Failed") and c["status"] == "True"), None)
        now = time.monotonic()
        if done or now - last_line >= 1.0:
            last_line = now
            print(f"{now - started:6.1f}s  succeeded {succeeded}/{total}  active {status.get('active', 0)}  "
                  f"failed {status.get('failed', 0)}", file=out, flush=True)
        if done:
            break
        if now > deadline:
            print(f"kubeview: the Job did not finish within {args.timeout:g} s", file=sys.stderr)
            return 1
        time.sleep(0.1)
    return report(source, done, total, args.json)


def report(source: LocalSource, done: str, total: int, as_json: bool) -> int:
    """The end: indexes succeeded once each (from the pods), the disrupted pods and their indexes."""
    from kubeview.model.jobs.progress import disrupted_pods
    from kubeview.model.jobs.views import INDEX_KEY, format_indexes

    pods = source.pods(NAMESPACE)
    wins = Counter(int(p["metadata"]["annotations"][INDEX_KEY]) for p in pods
                   if p["status"].get("phase") == "Succeeded" and INDEX_KEY in (p["metadata"].get("annotations") or {}))
    missing = [i for i in range(total) if wins[i] == 0]
    twice = [i for i, n in wins.items() if n > 1]
    model = source.model()
    job = model.jobs.jobs[(NAMESPACE, JOB)]
    gone = disrupted_pods(job, model.jobs.history_of(NAMESPACE, JOB))
    ok = done == "Complete" and not missing and not twice
    if as_json:
        print(json.dumps({"state": done, "items": total, "succeededOnce": len(wins) - len(twice),
                          "missing": format_indexes(set(missing)), "twice": format_indexes(set(twice)),
                          "disrupted": [{"pod": d.pod, "index": d.index, "node": d.node,
                                         "reason": d.disruption.reason, "outcome": d.outcome} for d in gone]},
                         indent=2))
        return 0 if ok else 1
    print(f"Job {NAMESPACE}/{JOB} {done}: {len(wins)} of {total} indexes succeeded"
          + (" exactly once" if not twice else f", {len(twice)} more than once ({format_indexes(set(twice))})")
          + (f"; never: {format_indexes(set(missing))}" if missing else ""))
    print(f"{len(gone)} pod(s) ended by disruption"
          + (f" (ignored by the podFailurePolicy, failed {job.failed}):" if gone else "."))
    for d in gone:
        print(f"  index {d.index:>5}  {d.pod}  on {d.node}  {d.disruption.reason}  -> {d.outcome}")
    return 0 if ok else 1
