"""Argument parsing only: every command's work lives in `kubeview.commands.*`, imported on demand."""

from __future__ import annotations

import argparse
import importlib
import os
import re
import shutil
import sys
import textwrap
from collections.abc import Sequence
from typing import Any

from kubeview import __version__
from kubeview import cli_types as t
from kubeview.hostport import parse_listen

CONNECTION_PARTS = ("cluster", "local-metrics", "prometheus", "extender")

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
  kubeview fit gang.yaml                    would this gang (or Pod, Deployment, Job) fit now, and where
  kubeview preempt gpu-node-1               the demo's Indexed Job survives a preempted node, headless
  kubeview extender --listen 127.0.0.1:8888 serve the GPU-packing scheduler extender
  kubeview tune three-spheres --headless    find the fastest replicas / cpu / task size (Optuna)
  kubeview bench model                      model throughput on a synthetic 5,000-node cluster
  kubeview serve -- --demo                  the TUI in web browsers, on http://127.0.0.1:8000/
"""


HELP_WIDTH = 100  # --help never wider than this, however wide the terminal


class HelpFormatter(argparse.RawDescriptionHelpFormatter):
    """Description, epilog and options wrapped at one width: the terminal's, at most HELP_WIDTH
    (descriptions were pre-wrapped at ~100 while options followed the terminal). Paragraphs of
    unindented lines are refilled; indented lines (examples), headings ending in ':' and blank
    lines are kept as written."""

    def __init__(self, prog: str, indent_increment: int = 2, max_help_position: int = 24,
                 width: int | None = None) -> None:
        if width is None:
            width = min(shutil.get_terminal_size().columns, HELP_WIDTH) - 2
        super().__init__(prog, indent_increment, max_help_position, width)

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        out: list[str] = []
        paragraph: list[str] = []

        def flush() -> None:
            if paragraph:
                out.extend(textwrap.wrap(" ".join(paragraph), width, initial_indent=indent,
                                         subsequent_indent=indent, break_on_hyphens=False))
                paragraph.clear()

        for line in text.splitlines():
            if line.strip() and not line[0].isspace() and not line.rstrip().endswith(":"):
                paragraph.append(line.strip())
            else:
                flush()
                out.extend(_hang(indent + line, width + len(indent)) if line.strip() else [""])
        flush()
        return "\n".join(out) + ("\n" if text.endswith("\n") else "")


def _hang(line: str, width: int) -> list[str]:
    """An indented line (an example: command, then its note after 2+ spaces) cut to `width`, the
    rest aligned under the note."""
    if len(line) <= width:
        return [line]
    match = re.match(r"(\s*\S.*?\s{2,})\S", line)
    hang = " " * (len(match.group(1)) if match and len(match.group(1)) < width // 2 else len(line) - len(line.lstrip()) + 4)
    return textwrap.wrap(line, width, subsequent_indent=hang, break_on_hyphens=False, drop_whitespace=True) or [line]


class _Parser(argparse.ArgumentParser):
    """One line on bad usage, exit 2: no usage dump, never a traceback; help at one width."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", HelpFormatter)
        super().__init__(*args, **kwargs)

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


def _connection_options(suppress: bool = False, parts: tuple[str, ...] = CONNECTION_PARTS) -> argparse.ArgumentParser:
    """Cluster options, accepted before or after a command; `parts` picks the groups a command uses
    (its --help lists only flags it reads).

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
    if "local-metrics" in parts:
        g.add_argument("--local-metrics", metavar="HOST:PORT", type=_listen("--local-metrics"),
                       help="serve the local cluster's node-exporter/cAdvisor-named metrics here for a Prometheus")
    if "prometheus" in parts:
        pg = p.add_argument_group("utilization")
        pg.add_argument("--prometheus", metavar="URL", type=t.http_url, help="Prometheus server to read utilization from")
        pg.add_argument("--prometheus-token-file", metavar="FILE", help="bearer token for --prometheus")
        pg.add_argument("--prometheus-insecure", action="store_true", help="do not verify --prometheus TLS certificates")
        pg.add_argument("--prometheus-queries", metavar="FILE", help="YAML overriding kubeview's PromQL and label names")
        pg.add_argument("--window", default="5m", type=t.duration,
                        help="utilization window for Prometheus queries (default: 5m)")
    if "extender" in parts:
        eg = p.add_argument_group("packing")
        eg.add_argument("--extender", metavar="URL", type=t.http_url,
                        help="kubeview extender to send packing changes to (real cluster)")
        eg.add_argument("--extender-token-file", metavar="FILE", help="token for the extender's /config")
    return p


def _scene_names() -> str:
    from renderer.scene import BUNDLED

    return ", ".join(sorted(p.stem for p in BUNDLED.glob("*.yaml")))


def _extender_limit_options(ext: argparse.ArgumentParser) -> None:
    """`kubeview extender`'s TLS files and connection limits (defaults: ServerLimits)."""
    from kubeview.scheduling.server_limits import ServerLimits

    d = ServerLimits()
    tls = ext.add_argument_group("TLS (kube-scheduler's enableHTTPS and tlsConfig)")
    tls.add_argument("--tls-cert", metavar="FILE", help="serve HTTPS with this PEM certificate (needs --tls-key)")
    tls.add_argument("--tls-key", metavar="FILE", help="the certificate's PEM private key")
    tls.add_argument("--client-ca", metavar="FILE",
                     help="require a client certificate signed by this PEM CA (tlsConfig certData/keyData)")
    lim = ext.add_argument_group("limits against hostile clients")
    lim.add_argument("--max-connections", type=t.int_range(1, 1_000_000), default=d.max_connections,
                     help=f"open connections at most; at the cap the longest-idle one is closed (default {d.max_connections})")
    lim.add_argument("--header-timeout", type=t.seconds, default=d.header_timeout,
                     help=f"seconds for a request head or TLS handshake to arrive (default {d.header_timeout:g})")
    lim.add_argument("--body-timeout", type=t.seconds, default=d.body_timeout,
                     help=f"seconds for a request body to arrive after its head (default {d.body_timeout:g})")
    lim.add_argument("--idle-timeout", type=t.seconds, default=d.idle_timeout,
                     help=f"seconds a keep-alive connection may wait for its next request (default {d.idle_timeout:g})")
    lim.add_argument("--max-body-mib", type=t.int_range(1, 4096), default=d.max_body // 2**20,
                     help=f"MiB in one request body (default {d.max_body // 2**20})")
    lim.add_argument("--max-bodies-in-flight-mib", type=t.int_range(1, 65536), default=d.max_bodies_in_flight // 2**20,
                     help=f"MiB of request bodies held at once (default {d.max_bodies_in_flight // 2**20})")
    lim.add_argument("--node-cache-mib", type=t.int_range(1, 65536), default=64,
                     help="MiB of full Node encodings kept decoded (nodeCacheCapable: false; default 64)")


def _prog() -> str:
    """`kubectl kubeview` when kubectl ran the plugin (kubectl-kubeview), so errors and --help name
    what the user typed."""
    return "kubectl kubeview" if os.path.basename(sys.argv[0]) == "kubectl-kubeview" else "kubeview"


def build_parser() -> argparse.ArgumentParser:
    conn = _connection_options()
    parser = _Parser(
        prog=_prog(),
        description=DESCRIPTION,
        epilog=EPILOG,
        parents=[conn],
    )
    parser.add_argument("--version", action="version", version=f"kubeview {__version__}")
    r = parser.add_argument_group("render")
    r.add_argument("--render", metavar="SCENE",
                   help=f"run the bundled ray tracer on SCENE: a YAML path or a bundled name ({_scene_names()})")
    r.add_argument("-o", "--output", default="render.png", help="where the rendered PNG goes (default: render.png)")
    r.add_argument("--raw", metavar="NPY", help="also write the linear float image (H, W, 3) as .npy")
    _scene_overrides(r)
    r.add_argument("--replicas", type=t.int_range(1, 10_000), help="render consumers (default: usable cores)")
    r.add_argument("--cpu", default="1000m", type=t.cpu_amount, help="cpu request of each consumer (default: 1000m)")
    r.add_argument("--start-timeout", type=t.seconds, default=300.0, metavar="SECONDS",
                   help="real cluster: give up if the render's pods are not running after this long (default: 300)")
    r.add_argument("--headless", action="store_true", help="print progress lines instead of the TUI")
    r.add_argument("--keep", action="store_true", help="real cluster: keep the render's objects afterwards")
    r.add_argument("--image", help="real cluster: the renderer image (built from the Dockerfile; default: kubeview:latest)")
    r.add_argument("--gpu", type=int, choices=[0, 1], help="real cluster: 1 = consumers request nvidia.com/gpu: 1")
    parser.set_defaults(command="tui")

    sub = parser.add_subparsers(title="commands", metavar="COMMAND", parser_class=_Parser)

    snap = sub.add_parser("snapshot", parents=[_connection_options(True, ("cluster", "prometheus"))], help="print the cluster's allocation once, headless",
                          description="Print the cluster's allocation once, for scripts and CI.")
    fmt = snap.add_mutually_exclusive_group()
    fmt.add_argument("--json", action="store_true", help="one JSON document (see --schema)")
    fmt.add_argument("--schema", action="store_true", help="print the JSON Schema of --json and exit")
    fmt.add_argument("--metrics", action="store_true",
                     help="kube-state-metrics-named series in Prometheus text format")
    snap.set_defaults(command="snapshot")

    fit = sub.add_parser("fit", parents=[_connection_options(True, ("cluster",))],
                         help="would a Pod, Deployment, Job or gang manifest fit now, and where",
                         description="Would the pods of MANIFEST fit on the cluster now, where (one placement), and "
                                     "why not, without applying it. A gang (pods of a PodGroup, a Job with "
                                     "spec.scheduling) is placed all or nothing, as kube-scheduler does. Exit 0: "
                                     "it fits; 1: it does not (or the cluster could not be read); 2: bad input.")
    fit.add_argument("manifest", metavar="MANIFEST", help="YAML or JSON file, one or more documents ('-' for stdin)")
    fit.add_argument("--json", action="store_true", help="one JSON document instead of text")
    fit.add_argument("--policy", choices=["pack", "spread", "balanced"],
                     help="score nodes with this policy (default: the embedded scheduler's, else spread)")
    fit.set_defaults(command="fit")

    ext = sub.add_parser("extender", parents=[_connection_options(True, ("cluster",))], help="serve the kube-scheduler extender (GPU packing)",
                         description="Serve kube-scheduler's extender API (prioritize and bind, so it knows where "
                                     "every GPU pod went; filter too) with kubeview's scoring.")
    ext.add_argument("--listen", default="127.0.0.1:8888", help="HOST:PORT (default: 127.0.0.1:8888)")
    ext.add_argument("--token-file", metavar="FILE", help="token required by PUT /config")
    ext.add_argument("--insecure-allow-unauthenticated", action="store_true",
                     help="listen on a non-loopback address with neither --token-file nor --client-ca "
                          "(anyone who reaches it can change GPU placement)")
    ext.add_argument("--policy", default="pack", help="initial policy: pack, spread or balanced (default: pack)")
    ext.add_argument("--scheduler-ignores", metavar="RES[,RES]", type=t.distinct_names, default=[],
                     help="resources the scheduler configuration lists with ignoredByScheduler: true, the only ones "
                          "the filter verb refuses nodes on (default: none; see docs/scheduler.md)")
    _extender_limit_options(ext)
    ext.set_defaults(command="extender")

    bench = sub.add_parser("bench", help="benchmarks that print figures (not tests)",
                           description="Benchmarks: each prints its figures and the targets they are judged by.")
    bench.add_argument("what", choices=["model", "scheduler", "tui", "render", "plan", "cluster"],
                       help="what to measure")
    bench.add_argument("scenarios", nargs="?", help="scheduler: scenarios YAML (default: the bundled one)")
    bench.add_argument("--compare", metavar="JSON", help="scheduler: previous results to compare against")
    bench.add_argument("--json", action="store_true", help="print the figures as JSON")
    bench.add_argument("--quick", action="store_true", help="smaller sizes, for a smoke run")
    bench.add_argument("--dra", action="store_true",
                       help="model: 1,000 GPU nodes publish 8 DRA GPUs each (ResourceSlices), 8,000 ResourceClaims")
    bench.add_argument("--against", metavar="TREE", help="scheduler: the extender's round trips from this tree and "
                       "another kubeview source tree (e.g. main's checkout), alternating in one run, as ratios")
    bench.add_argument("--rounds", metavar="N", type=t.int_range(1, 20), help="with --against: rounds (default: 3)")
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
    bench.set_defaults(command="bench")

    _tune_parser(sub)
    _serve_parser(sub)
    pre = sub.add_parser("preempt", help="demo: preempt a node under the demo's Indexed Job, headless",
                         description="On the embedded demo cluster: run the Job jobs/work-items, preempt NODE "
                                     "mid-way, and show that every index succeeds exactly once.")
    pre.add_argument("node", help="the node to preempt, e.g. gpu-node-2")
    pre.add_argument("--after", type=t.fraction, default=0.25, metavar="FRACTION",
                     help="preempt once this share of the indexes succeeded (default: 0.25)")
    pre.add_argument("--items", type=t.int_range(1, 100_000), default=3600, help="work items (default: 3600)")
    pre.add_argument("--timeout", type=t.seconds, default=600.0, metavar="SECONDS",
                     help="give up after this long (default: 600)")
    pre.add_argument("--json", action="store_true", help="print the outcome as JSON")
    pre.set_defaults(command="preempt")

    _plan_parser(sub)
    man = sub.add_parser("render-manifests", help="print the YAML that runs a render on a real cluster",
                         description="Print Namespace, ConfigMap, Secret, producer and consumers, RBAC: "
                                     "ready for `kubectl apply -f -`.")
    man.add_argument("scene", help="scene YAML path or bundled name")
    man.add_argument("--replicas", type=t.int_range(1, 10_000), default=4, help="consumer replicas (default: 4)")
    man.add_argument("--cpu", default="1000m", type=t.cpu_amount, help="consumer cpu request (default: 1000m)")
    man.add_argument("--gpu", type=int, choices=[0, 1], default=0, help="1: consumers request nvidia.com/gpu: 1")
    man.add_argument("--image", default="kubeview:latest", help="container image (default: kubeview:latest)")
    man.add_argument("--namespace", dest="render_namespace", default="kubeview-render",
                     help="namespace for the render (default: kubeview-render)")
    _scene_overrides(man)
    man.set_defaults(command="render-manifests")
    return parser


def _serve_parser(sub: argparse._SubParsersAction) -> None:
    srv = sub.add_parser(
        "serve", help="serve the TUI to web browsers, one kubeview per session",
        description="Serve the TUI to web browsers (textual-serve): each browser session runs its own\n"
                    "kubeview with the options after --. Listens on 127.0.0.1 unless --host says otherwise;\n"
                    "any other address needs --token-file (browsers open /?token=TOKEN).",
        epilog="examples:\n  kubeview serve -- --demo\n  kubeview serve --port 8080 -- --context lab\n"
               "  kubeview serve --host 0.0.0.0 --token-file token.txt -- --context lab")
    srv.add_argument("--host", default="127.0.0.1", help="address to listen on (default: 127.0.0.1)")
    srv.add_argument("--port", type=t.int_range(1, 65535), default=8000, help="port (default: 8000)")
    srv.add_argument("--token-file", metavar="FILE",
                     help="browsers must present this file's token (needed off loopback)")
    srv.add_argument("--max-sessions", type=t.int_range(1, 1000), default=4, metavar="N",
                     help="browser sessions open at once, each a kubeview process (default: 4)")
    srv.add_argument("--idle-timeout", type=t.seconds, default=1800.0, metavar="SECONDS",
                     help="close a session with no input for this long (default: 1800)")
    srv.add_argument("app_args", nargs=argparse.REMAINDER, metavar="-- KUBEVIEW-OPTIONS",
                     help="options for each session's kubeview, e.g. -- --demo")
    srv.set_defaults(command="serve")


PLAN_EXIT_CODES = """exit codes:
  0  a plan (or nothing to disrupt: it fits now); with --apply: applied and the target bound
  1  no plan; or the plan needs more disruptions than a PodDisruptionBudget allows; or --apply did not
     end with the target bound (an eviction refused, or the timeout)
  2  bad input (unknown or bound pod, conflicting options)
  3  the cluster could not be read"""


def _plan_parser(sub: argparse._SubParsersAction) -> None:
    plan = sub.add_parser("plan", parents=[_connection_options(True, ("cluster",))],
                          help="the fewest disruptions that make a pending pod, gang or request fit",
                          description="Plan the fewest pod disruptions after which a pending pod (its gang, if it "
                                      "belongs to one) or a hypothetical request fits, under the cluster's policy; "
                                      "each moved pod with where it goes again. --apply evicts through the "
                                      "Eviction API and follows until the target is bound.",
                          epilog=PLAN_EXIT_CODES, formatter_class=argparse.RawDescriptionHelpFormatter)
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
    plan.set_defaults(command="plan")


def _scene_overrides(group: argparse._ActionsContainer) -> None:
    """--spp and --width, the same for `--render` and `render-manifests` (checked by render/inputs.py)."""
    group.add_argument("--spp", type=t.int_range(1, 1_000_000), help="samples per pixel (default: the scene's)")
    group.add_argument("--width", type=t.int_range(1, 16_384),
                       help="image width in pixels; the height keeps the scene's aspect (default: the scene's)")


TUNE_EPILOG = """\
Each trial applies the render job with its parameters (the producer and a ReplicaSet of consumers,
as `kubeview --render` does), takes the producer's own elapsed time as the objective, checks that
the image is bit-identical to a one-process reference render (made once per task size and cached
in the state directory), deletes the job and waits for its pods to go. A failed, timed-out or
interrupted trial is kept in the study as failed, with its reason. A range is MIN:MAX or one value.

examples:
  kubeview tune three-spheres --trials 12 --headless
  kubeview tune spheres --replicas 1:8 --cpu 250m:1000m --samples-per-task 4:100 --tile 16:64
  kubeview tune spheres --storage postgresql://tuner@db/kubeview --study-name lab --kubeconfig ~/.kube/lab
  kubeview tune spheres --json > study.json      # the study: trials, params, states, values, best
"""


def _tune_parser(sub: argparse._SubParsersAction) -> None:
    tune = sub.add_parser(
        "tune", parents=[_connection_options(True, ("cluster",))],
        help="find the fastest replicas / cpu / task size for a render (Optuna)",
        description="Search consumer replicas, their cpu request, samples per task and tile size for the\n"
                    "fastest render of SCENE with an Optuna study, on the embedded local cluster (a real\n"
                    "cluster only with --kubeconfig or --context). The study is stored (SQLite by default)\n"
                    "and resumable: run the same command again to finish it. Without --headless the TUI\n"
                    "opens on its Tune screen: the trials, the best so far, wall time plotted live.",
        epilog=TUNE_EPILOG)
    tune.add_argument("scene", help=f"scene YAML path or bundled name ({_scene_names()})")
    s = tune.add_argument_group("study")
    s.add_argument("--trials", type=t.int_range(1, 100_000), default=20,
                   help="trials the study should have in all; a resumed study runs the missing ones (default: 20)")
    s.add_argument("--timeout", type=t.seconds, metavar="SECONDS",
                   help="start no new trial after this long (default: none)")
    s.add_argument("--trial-timeout", type=t.seconds, default=600.0, metavar="SECONDS",
                   help="a trial still running after this long fails as timed out (default: 600)")
    s.add_argument("--start-timeout", type=t.seconds, default=300.0, metavar="SECONDS",
                   help="a trial whose producer has not answered after this long fails (default: 300)")
    s.add_argument("--storage", metavar="URL",
                   help="any database URL Optuna takes, e.g. postgresql://u@host/db to share a study between "
                        "machines (default: sqlite:///$XDG_STATE_HOME/kubeview/tune.db)")
    s.add_argument("--study-name", metavar="NAME", help="default: SCENE-WxH-sppN-local|kube")
    s.add_argument("--seed", type=t.int_range(0, 2**31 - 1), default=0, help="sampler seed (default: 0)")
    s.add_argument("--prune-margin", type=t.ratio_at_least_one, default=1.5, metavar="X",
                   help="prune a trial X times slower than the best was at the same progress (default: 1.5)")
    p = tune.add_argument_group("search ranges (MIN:MAX, or one value to fix it)")
    p.add_argument("--replicas", metavar="RANGE", help="consumer replicas (default: 1:2x cores local, 1:64 real)")
    p.add_argument("--cpu", metavar="RANGE", help="cpu request per consumer (default: 100m:1000m)")
    p.add_argument("--samples-per-task", metavar="RANGE", help="samples per pixel per task (default: 1:SPP)")
    p.add_argument("--tile", metavar="RANGE", help="task tile size in pixels (default: 8:64)")
    j = tune.add_argument_group("the render job")
    _scene_overrides(j)
    j.add_argument("--image", help="real cluster: the renderer image (default: kubeview:latest)")
    j.add_argument("--gpu", type=int, choices=[0, 1], help="real cluster: 1 = consumers request nvidia.com/gpu: 1")
    o = tune.add_argument_group("output")
    o.add_argument("--headless", action="store_true", help="a line per trial and the best at the end, no TUI")
    o.add_argument("--json", action="store_true", help="print the study as JSON at the end (progress to stderr)")
    tune.set_defaults(command="tune")


COMMANDS = {
    "tui": "kubeview.commands.main",
    "snapshot": "kubeview.commands.snapshot",
    "fit": "kubeview.commands.fit",
    "extender": "kubeview.commands.extender",
    "bench": "kubeview.commands.bench",
    "render-manifests": "kubeview.commands.render_manifests",
    "tune": "kubeview.commands.tune",
    "preempt": "kubeview.commands.preempt",
    "serve": "kubeview.commands.serve",
    "plan": "kubeview.commands.plan",
}


def _check_queries(args: argparse.Namespace) -> str | None:
    """`--prometheus-queries` is read only with `--prometheus`: without it, or unreadable, it was
    silently ignored. The file is loaded (and validated) here, before anything starts."""
    path = getattr(args, "prometheus_queries", None)
    if not path:
        return None
    if not getattr(args, "prometheus", None):
        return f"--prometheus-queries {path} needs --prometheus URL (the queries are sent there)."
    from kubeview.cluster.prometheus.queries import QueryConfigError, load_queries

    try:
        load_queries(path)
    except QueryConfigError as exc:
        return str(exc)
    return None


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    bad = _check_queries(args)
    if bad:
        sys.stderr.write(f"kubeview: {bad}\n")
        return 2
    from kubeview.terminate import Terminated, sigterm_raises

    try:
        with sigterm_raises():
            module = importlib.import_module(COMMANDS[args.command])
            code = int(module.run(args) or 0)
            sys.stdout.flush()  # here, where a closed pipe can still be caught, not at interpreter exit
            return code
    except KeyboardInterrupt:
        sys.stderr.write("kubeview: interrupted\n")
        return 130
    except Terminated as exc:  # SIGTERM, as Ctrl-C: everything was stopped on the way out
        sys.stderr.write("kubeview: terminated\n")
        return int(exc.code or 143)
    except BrokenPipeError:
        # the reader went away (`| head -1`): stop quietly, as Unix tools do; everything kubeview
        # started was stopped by the `finally` blocks on the way out
        discard_stdout()
        return 141  # 128 + SIGPIPE, what a shell shows for a tool the closed pipe killed


def discard_stdout() -> None:
    """Point stdout at /dev/null so the interpreter's last flush does not fail again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass
