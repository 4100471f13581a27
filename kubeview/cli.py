"""Argument parsing only: every command's work lives in `kubeview.commands.*`, imported on demand."""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence

from kubeview import __version__
from kubeview.hostport import parse_listen

DESCRIPTION = """\
kubeview watches a Kubernetes cluster's nodes and pods and shows cpu, memory and GPU allocation per
node (the way kube-state-metrics counts it), GPU fragmentation, pending pods and live utilization;
it scales workloads, tunes the GPU packing score of its scheduler extender, and drives a distributed
ray-traced render. With no kubeconfig it runs an embedded local cluster whose pods are real processes.
"""

EPILOG = """\
examples:
  kubeview                                  TUI on $KUBECONFIG, or the embedded local cluster
  kubeview --demo                           the local cluster in the README's screenshots' state
  kubeview --render spheres --headless      render a bundled scene on the local cluster, print progress
  kubeview snapshot --json                  the cluster's allocation as one JSON document
  kubeview extender --listen 127.0.0.1:8888 serve the GPU-packing scheduler extender
  kubeview bench model                      model throughput on a synthetic 5,000-node cluster
"""


class _Parser(argparse.ArgumentParser):
    """One line on bad usage, exit 2: no usage dump, never a traceback."""

    def error(self, message: str) -> None:  # type: ignore[override]
        sys.stderr.write(f"{self.prog}: error: {message} (see {self.prog} --help)\n")
        raise SystemExit(2)


def _listen(flag: str):  # noqa: ANN202 - an argparse type
    def parse(text: str) -> tuple[str, int]:
        try:
            return parse_listen(text, flag)
        except ValueError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from exc

    return parse


def _names(text: str) -> list[str]:
    names = [n.strip() for n in text.split(",")]
    if not all(names) or len(set(names)) != len(names):
        raise argparse.ArgumentTypeError(f"expected distinct scheduler names separated by commas, not {text!r}")
    return names


def _count(low: int, high: int):  # noqa: ANN202 - an argparse type
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            value = low - 1
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"expected a whole number from {low} to {high}, not {text!r}")
        return value

    return parse


def _positive_seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0 < value < 1e6:
        raise argparse.ArgumentTypeError(f"expected a number of seconds > 0, not {text!r}")
    return value


def _connection_options(suppress: bool = False) -> argparse.ArgumentParser:
    """Cluster options, accepted before or after a command.

    The copy given to subcommands suppresses defaults, or argparse would reset what was given before
    the command (`kubeview --context x snapshot`) to the subcommand's default.
    """
    p = argparse.ArgumentParser(add_help=False, argument_default=argparse.SUPPRESS if suppress else None)
    g = p.add_argument_group("cluster")
    g.add_argument("--kubeconfig", metavar="FILE", help="kubeconfig file (default: $KUBECONFIG, ~/.kube/config)")
    g.add_argument("--context", help="kubeconfig context (default: the current context)")
    g.add_argument("-n", "--namespace", help="only this namespace's pods and workloads (default: all)")
    g.add_argument("--local", action="store_true", help="use the embedded local cluster even if a kubeconfig exists")
    g.add_argument("--demo", action="store_true",
                   help="the embedded local cluster with demo workloads: GPU fragmentation, Pending pods, "
                        "something to scale (what the README's screenshots show)")
    g.add_argument("--cluster", metavar="FILE", help="local cluster YAML (default: the bundled 5-node cluster)")
    g.add_argument("--local-metrics", metavar="HOST:PORT", type=_listen("--local-metrics"),
                   help="serve the local cluster's node-exporter/cAdvisor-named metrics here for a Prometheus")
    g.add_argument("--prometheus", metavar="URL", help="Prometheus server to read utilization from")
    g.add_argument("--prometheus-token-file", metavar="FILE", help="bearer token for --prometheus")
    g.add_argument("--prometheus-insecure", action="store_true", help="do not verify --prometheus TLS certificates")
    g.add_argument("--prometheus-queries", metavar="FILE", help="YAML overriding kubeview's PromQL and label names")
    g.add_argument("--window", default="5m", help="utilization window for Prometheus queries (default: 5m)")
    g.add_argument("--extender", metavar="URL", help="kubeview extender to send packing changes to (real cluster)")
    g.add_argument("--extender-token-file", metavar="FILE", help="token for the extender's /config")
    return p


def build_parser() -> argparse.ArgumentParser:
    conn = _connection_options()
    sub_conn = _connection_options(suppress=True)
    parser = _Parser(
        prog="kubeview",
        description=DESCRIPTION,
        epilog=EPILOG,
        parents=[conn],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"kubeview {__version__}")
    r = parser.add_argument_group("render")
    r.add_argument("--render", metavar="SCENE", help="run the bundled ray tracer on SCENE (a YAML path or a bundled name)")
    r.add_argument("-o", "--output", default="render.png", help="where the rendered PNG goes (default: render.png)")
    r.add_argument("--raw", metavar="NPY", help="also write the linear float image (H, W, 3) as .npy")
    r.add_argument("--replicas", type=int, help="render consumers (default: usable cores)")
    r.add_argument("--cpu", default="1000m", help="cpu request of each consumer (default: 1000m)")
    r.add_argument("--headless", action="store_true", help="print progress lines instead of the TUI")
    r.add_argument("--keep", action="store_true", help="real cluster: keep the render's objects afterwards")
    r.add_argument("--image", help="real cluster: the renderer image (built from the Dockerfile; default: kubeview:latest)")
    r.add_argument("--gpu", type=int, choices=[0, 1], help="real cluster: 1 = consumers request nvidia.com/gpu: 1")
    parser.set_defaults(command="tui")

    sub = parser.add_subparsers(title="commands", metavar="COMMAND", parser_class=_Parser)

    snap = sub.add_parser("snapshot", parents=[sub_conn], help="print the cluster's allocation once, headless",
                          description="Print the cluster's allocation once, for scripts and CI.")
    fmt = snap.add_mutually_exclusive_group()
    fmt.add_argument("--json", action="store_true", help="one JSON document (see --schema)")
    fmt.add_argument("--schema", action="store_true", help="print the JSON Schema of --json and exit")
    fmt.add_argument("--metrics", action="store_true",
                     help="kube-state-metrics-named series in Prometheus text format")
    snap.set_defaults(command="snapshot")

    ext = sub.add_parser("extender", parents=[sub_conn], help="serve the kube-scheduler extender (GPU packing)",
                         description="Serve kube-scheduler's extender API (filter, prioritize) with kubeview's scoring.")
    ext.add_argument("--listen", default="127.0.0.1:8888", help="HOST:PORT (default: 127.0.0.1:8888)")
    ext.add_argument("--token-file", metavar="FILE", help="token required by PUT /config")
    ext.add_argument("--policy", default="pack", help="initial policy: pack, spread or balanced (default: pack)")
    ext.set_defaults(command="extender")

    bench = sub.add_parser("bench", help="benchmarks that print figures (not tests)",
                           description="Benchmarks: each prints its figures and the targets they are judged by.")
    bench.add_argument("what", choices=["model", "scheduler", "tui", "render"], help="what to measure")
    bench.add_argument("scenarios", nargs="?", help="scheduler: scenarios YAML (default: the bundled one)")
    bench.add_argument("--compare", metavar="JSON", help="scheduler: previous results to compare against")
    bench.add_argument("--json", action="store_true", help="print the figures as JSON")
    bench.add_argument("--quick", action="store_true", help="smaller sizes, for a smoke run")
    real = bench.add_argument_group("scheduler on a real cluster (creates fake nodes and pods, removes them after)")
    real.add_argument("--kubeconfig", metavar="FILE", default=argparse.SUPPRESS,
                      help="run the scenarios against this cluster's API server and kube-scheduler")
    real.add_argument("--context", default=argparse.SUPPRESS, help="kubeconfig context (default: the current one)")
    real.add_argument("--schedulers", metavar="A,B", type=_names,
                      help="scheduler names to run each workload with, the first is the baseline "
                           "(default: default-scheduler,kubeview-scheduler)")
    real.add_argument("--timeout", metavar="SECONDS", type=_positive_seconds,
                      help="give up on pods not placed this long after their op started (default: 600)")
    real.add_argument("--parallel", metavar="N", type=_count(1, 64),
                      help="create calls in flight (default: 8; 1 creates pods in the scenario's order)")
    real.add_argument("--yes", action="store_true", help="run even if the cluster has nodes kubeview did not create")
    bench.set_defaults(command="bench")

    man = sub.add_parser("render-manifests", help="print the YAML that runs a render on a real cluster",
                         description="Print Namespace, ConfigMap, Secret, producer and consumers, RBAC: "
                                     "ready for `kubectl apply -f -`.")
    man.add_argument("scene", help="scene YAML path or bundled name")
    man.add_argument("--replicas", type=int, default=4, help="consumer replicas (default: 4)")
    man.add_argument("--cpu", default="1000m", help="consumer cpu request (default: 1000m)")
    man.add_argument("--gpu", type=int, choices=[0, 1], default=0, help="1: consumers request nvidia.com/gpu: 1")
    man.add_argument("--image", default="kubeview:latest", help="container image (default: kubeview:latest)")
    man.add_argument("--namespace", dest="render_namespace", default="kubeview-render",
                     help="namespace for the render (default: kubeview-render)")
    man.set_defaults(command="render-manifests")
    return parser


COMMANDS = {
    "tui": "kubeview.commands.main",
    "snapshot": "kubeview.commands.snapshot",
    "extender": "kubeview.commands.extender",
    "bench": "kubeview.commands.bench",
    "render-manifests": "kubeview.commands.render_manifests",
}


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    module = importlib.import_module(COMMANDS[args.command])
    try:
        code = int(module.run(args) or 0)
        sys.stdout.flush()  # here, where a closed pipe can still be caught, not at interpreter exit
        return code
    except KeyboardInterrupt:
        sys.stderr.write("kubeview: interrupted\n")
        return 130
    except BrokenPipeError:
        # the reader went away (`| head -1`): stop quietly, as Unix tools do; everything kubeview
        # started was stopped by the `finally` blocks on the way out
        _discard_stdout()
        return 141  # 128 + SIGPIPE, what a shell shows for a tool the closed pipe killed


def _discard_stdout() -> None:
    """Point stdout at /dev/null so the interpreter's last flush does not fail again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass
