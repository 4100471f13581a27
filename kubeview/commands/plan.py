"""`kubeview plan POD|--gpus N [--pods K] [--json] [--apply --yes]`: the fewest disruptions that make a
pending pod (its whole gang, if it belongs to one) or a hypothetical request fit, shown, and applied on
request through the Eviction API; `--log` shows the audit log of applied plans.

The plan is computed by kubeview.scheduling.planner on a synced model under the policy the cluster
schedules with (cluster/packing.py); applying it is cluster/plan_apply.py. Exit codes: EXIT_CODES below.
"""

from __future__ import annotations

import argparse
import json
import sys

from kubeview import cli_types as t
from kubeview.cluster.source import ActionError, SourceError
from kubeview.commands.options import connection_options

NAME = "plan"  # `kubeview plan`


EXIT_CODES = """exit codes:
  0  a plan (or nothing to disrupt: it fits now); with --apply: applied and the target bound
  1  no plan; or the plan needs more disruptions than a PodDisruptionBudget allows; or --apply did not
     end with the target bound (an eviction refused, or the timeout)
  2  bad input (unknown or bound pod, conflicting options)
  3  the cluster could not be read"""


def add_parser(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    plan = sub.add_parser(NAME, parents=[connection_options(True, ("cluster",))],
                          help="the fewest disruptions that make a pending pod, gang or request fit",
                          description="Plan the fewest pod disruptions after which a pending pod (its gang, if it "
                                      "belongs to one) or a hypothetical request fits, under the cluster's policy; "
                                      "each moved pod with where it goes again. --apply evicts through the "
                                      "Eviction API and follows until the target is bound.",
                          epilog=EXIT_CODES, formatter_class=argparse.RawDescriptionHelpFormatter)
    plan.add_argument("pod", nargs="?", metavar="POD", help="a pending pod: NAME (with -n) or NAMESPACE/NAME")
    plan.add_argument("--gpus", type=t.int_range(1, 1024), metavar="N", help="a hypothetical request of N GPUs per pod")
    plan.add_argument("--pods", type=t.int_range(1, 10_000), metavar="K",
                      help="with --gpus: K such pods, all or nothing (a gang); default 1")
    plan.add_argument("--priority", type=int, default=0, help="with --gpus: the request's priority (default: 0)")
    plan.add_argument("--policy", choices=["pack", "spread", "balanced"],
                      help="plan under this policy (default: the one the cluster schedules with)")
    plan.add_argument("--bare", action="store_true", help="also consider bare pods (no controller recreates them)")
    plan.add_argument("--json", action="store_true", help="print the plan as JSON")
    plan.add_argument("--apply", action="store_true", help="apply the plan: evict, then follow until the target is bound")
    plan.add_argument("--yes", action="store_true", help="confirm --apply")
    plan.add_argument("--timeout", type=t.seconds, default=120.0, metavar="SECONDS",
                      help="with --apply: how long to wait for the target to be bound (default: 120)")
    plan.add_argument("--log", action="store_true", help="show the audit log of applied plans and exit")
    plan.add_argument("--log-file", metavar="FILE",
                      help="the audit log (default: $KUBEVIEW_PLAN_LOG, else ~/.local/state/kubeview/plans.sqlite)")
    return plan


def run(args: argparse.Namespace) -> int:
    if args.log:
        return _show_log(args)
    bad = _check(args)
    if bad:
        return _fail(bad, 2)
    from kubeview.cluster.packing import current_packing
    from kubeview.cluster.plan_apply import evictor_for
    from kubeview.cluster.select import open_source
    from kubeview.commands.snapshot import sync

    try:
        source = open_source(args, events=False)
    except SourceError as exc:  # a usage error (conflicting options, no such --context) is 2
        return _fail(str(exc), 2 if exc.exit_code == 2 else 3)
    try:
        try:
            model = sync(source)
            cluster = evictor_for(source)
            if cluster is None:
                return _fail("this cluster cannot evict pods (no Eviction API)", 3)
            budget_objects = cluster.budgets()
        except (SourceError, ActionError) as exc:
            return _fail(str(exc), 3)
        config, where = current_packing(source, args.policy)
        target = _target(model, args)
        if isinstance(target, str):
            return _fail(target, 2)
        from kubeview.model.disruption import budgets_of
        from kubeview.scheduling.planner import plan_for

        namespace = (getattr(args, "namespace", None) or "default") if args.gpus is not None else None
        plan = plan_for(model, target, config, budgets_of(budget_objects), allow_bare=args.bare, namespace=namespace)
        if args.json and not args.apply:
            print(json.dumps({"policy": config.policy, "policyFrom": where, **plan.to_dict()}, indent=2))
        else:
            print_plan(plan, f"{config.policy} ({where})", sys.stderr if args.json else sys.stdout)
        if not plan.found:
            return 1
        if not args.apply:
            return 1 if plan.over_budget else 0
        if plan.over_budget:
            return _fail("not applied: " + "; ".join(plan.over_budget), 1)
        if not plan.moves:
            return 0
        return _apply(cluster, plan, args, source.title)
    finally:
        source.close()


def _check(args: argparse.Namespace) -> str | None:
    if (args.pod is None) == (args.gpus is None):
        return "give a pending POD or --gpus N (one of them)"
    if args.pods is not None and args.gpus is None:
        return "--pods K goes with --gpus N"
    if args.apply and not args.yes:
        return "--apply evicts pods: add --yes to confirm"
    return None


def _target(model, args: argparse.Namespace):  # noqa: ANN001, ANN202 - a Target, or the one-line error
    from kubeview.scheduling.plan_types import Target, hypothetical
    from kubeview.scheduling.planner import target_of_gang

    if args.gpus is not None:
        return hypothetical(args.gpus, args.pods or 1, priority=args.priority)
    text = args.pod
    if "/" in text:
        ns, name = text.split("/", 1)
        matches = [p for p in model.pods.values() if p.namespace == ns and p.name == name]
    else:
        ns = getattr(args, "namespace", None)
        matches = [p for p in model.pods.values() if p.name == text and (ns is None or p.namespace == ns)]
    if not matches:
        return f"no pod {text!r} in the cluster"
    if len(matches) > 1:
        return f"pod {text!r} is in several namespaces ({', '.join(sorted(p.namespace for p in matches))}); give NS/NAME"
    pod = matches[0]
    gangs = model.gangs.of_pod(pod.namespace, pod.name)
    if gangs:
        return target_of_gang(model, gangs[0])
    if pod.node is not None:
        return f"pod {pod.namespace}/{pod.name} is bound to {pod.node}: nothing to plan"
    return Target.of_pods([pod])


def print_plan(plan, policy: str, out) -> None:  # noqa: ANN001
    from kubeview.scheduling.plan_text import describe_plan

    out.write(describe_plan(plan, policy))


def _apply(cluster, plan, args: argparse.Namespace, title: str) -> int:  # noqa: ANN001
    from kubeview.cluster.plan_apply import apply_plan
    from kubeview.cluster.plan_log import PlanLog

    try:
        log = PlanLog(args.log_file)
    except OSError as exc:
        return _fail(f"cannot open the audit log: {exc}", 2)
    out = sys.stderr if args.json else sys.stdout
    result = apply_plan(cluster, plan, args.timeout, log=log, title=title,
                        say=lambda line: print(f"  {line}", file=out, flush=True))
    if args.json:
        print(json.dumps({**plan.to_dict(), "outcome": result.outcome, "detail": result.detail,
                          "log": str(log.path)}, indent=2))
    return 0 if result.ok else 1


def _show_log(args: argparse.Namespace) -> int:
    from kubeview.cluster.plan_log import PlanLog

    try:
        entries = PlanLog(args.log_file).entries()
    except OSError as exc:
        return _fail(f"cannot open the audit log: {exc}", 2)
    if args.json:
        print(json.dumps([e.to_dict() for e in entries], indent=2))
        return 0
    if not entries:
        print("no plan applied yet")
    for e in entries:
        moves = ", ".join(m["pod"] for m in e.plan.get("moves", [])) or "nothing"
        print(f"#{e.id} {e.at} {e.who} on {e.cluster}: {e.target}: evicted {moves}: {e.outcome}"
              + (f" ({e.detail})" if e.detail else ""))
    return 0


def _fail(message: str, code: int) -> int:
    sys.stderr.write(f"kubeview: {message}\n")
    return code
