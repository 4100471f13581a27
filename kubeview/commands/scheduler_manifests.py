"""`kubeview scheduler-manifests`: print the second scheduler, `kubeview-scheduler`, packing natively or
through the extender.

`--mode native` (the default here) prints kube-scheduler with a profile that packs with its own
NodeResourcesFit scoring (scheduling/native_profile.py), from a kubeview policy and weights: no
extender to run. `--mode extender` prints manifests/scheduler/second-scheduler/ as shipped. Applying
the output again with another policy rolls the scheduler (a restart: not instant). `--default-scheduler`
prints the KubeSchedulerConfiguration for the cluster's own kube-scheduler instead (a file for the
control-plane nodes, as manifests/scheduler/native/kubeview-scheduler-config.yaml).
"""

from __future__ import annotations

import argparse
import sys

from kubeview.model.server_version import parse_version
from kubeview.scheduling.scheduler_image import IMAGE_REPOSITORY, KUBE_VERSION

NAME = "scheduler-manifests"  # `kubeview scheduler-manifests`
HEADER = ("# kubeview-scheduler, a second kube-scheduler ({mode} packing), printed by\n"
          "# `kubeview scheduler-manifests{args}`. Pods opt in with spec.schedulerName: kubeview-scheduler.\n")


def _weight(text: str) -> tuple[str, float]:
    name, sep, value = text.partition("=")
    try:
        return name, float(value) if sep else float("nan")
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected RESOURCE=WEIGHT, e.g. nvidia.com/gpu=1, not {text!r}") from None


def _kube_version(text: str) -> str:
    version = text if text.startswith("v") else f"v{text}"
    if parse_version(version).minor is None or version.count(".") < 2:
        raise argparse.ArgumentTypeError(f"expected a Kubernetes version such as {KUBE_VERSION}, not {text!r}")
    return version


def add_parser(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    man = sub.add_parser(NAME, help="print the second scheduler, packing natively or with the extender",
                         description="Print kubeview-scheduler's ServiceAccount, RBAC, ConfigMap and Deployment, "
                                     "ready for `kubectl apply -f -`. Native: kube-scheduler's own "
                                     "NodeResourcesFit packs (MostAllocated), weights from the policy; "
                                     "no per-node bias/avoid, no live weights (a new policy restarts the "
                                     "scheduler). Extender: the shipped configuration calling `kubeview extender`.")
    man.add_argument("--mode", choices=["native", "extender"], default="native", help="default: native")
    man.add_argument("--policy", choices=["pack", "spread"], default="pack", help="native: pack (MostAllocated, "
                     "default) or spread (LeastAllocated)")
    man.add_argument("--weight", type=_weight, action="append", metavar="RESOURCE=WEIGHT",
                     help="native: a resource's weight, repeatable (default: nvidia.com/gpu=1; cpu and memory "
                          "join at the lowest weight unless given)")
    man.add_argument("--strategy", choices=["MostAllocated", "RequestedToCapacityRatio"],
                     help="native pack: NodeResourcesFit's scoring type (default MostAllocated)")
    man.add_argument("--kube-version", type=_kube_version, default=KUBE_VERSION, metavar="VERSION",
                     help=f"your control plane's version, the kube-scheduler image's tag (default: {KUBE_VERSION}; "
                          "`kubectl version` says yours; kubeview's header says \"kube-scheduler skew\" when "
                          "they differ)")
    man.add_argument("--image", help=f"the whole kube-scheduler image instead (default: {IMAGE_REPOSITORY}:VERSION)")
    man.add_argument("--bind", action="store_true",
                     help="extender: kube-scheduler hands GPU pods' bindings to the extender (bindVerb; it then "
                          "needs manifests/scheduler/bind/pods-binding-rbac.yaml). Off by default: kube-scheduler "
                          "binds, and the extender counts each pod where it predicted it until the watch shows it")
    man.add_argument("--default-scheduler", action="store_true",
                     help="native: only the KubeSchedulerConfiguration for the cluster's own kube-scheduler")
    return man


def run(args: argparse.Namespace) -> int:
    from kubeview.render.manifests import to_yaml  # the render's dumper: literal blocks, no anchors
    from kubeview.scheduling.config import PackingConfig
    from kubeview.scheduling.native_profile import scoring_of
    from kubeview.scheduling.scheduler_manifests import default_configuration, objects

    try:
        config = PackingConfig.from_dict({"policy": args.policy, **({"weights": dict(args.weight)} if args.weight else {})})
        scoring = scoring_of(config, args.strategy) if args.mode == "native" else None
    except ValueError as exc:
        sys.stderr.write(f"kubeview: {NAME}: {exc}\n")
        return 2
    if args.bind and args.mode != "extender":
        sys.stderr.write(f"kubeview: {NAME}: --bind goes with --mode extender (native mode has no extender)\n")
        return 2
    if args.default_scheduler:
        if scoring is None:
            sys.stderr.write(f"kubeview: {NAME}: --default-scheduler goes with --mode native (the extender's "
                             "is manifests/scheduler/default-scheduler/)\n")
            return 2
        sys.stdout.write(to_yaml([default_configuration(scoring)]).removeprefix("---\n"))
        return 0
    shown = [f" --mode {args.mode}"] + ([f" --policy {args.policy}"] if args.policy != "pack" else [])
    shown += [f" --weight {n}={w:g}" for n, w in args.weight or []]
    shown += [f" --strategy {args.strategy}"] if args.strategy else []
    shown += [" --bind"] if args.bind else []
    sys.stdout.write(HEADER.format(mode=args.mode, args="".join(shown)))
    sys.stdout.write(to_yaml(objects(args.mode, scoring, args.image or f"{IMAGE_REPOSITORY}:{args.kube_version}",
                                     bind=args.bind)))
    return 0
