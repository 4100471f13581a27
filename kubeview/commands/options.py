"""Parser parts several commands share: the cluster options (`connection_options`), the scene
overrides and the bundled scenes' names. Each command module builds its own subparser
(`add_parser(sub)`) from these; `kubeview/cli.py` lists the command modules.

Light on purpose: `cli.py` imports every command module to build its parser, so nothing here (nor
at the top of a command module) imports the work a command does: that waits for its `run`.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable

from kubeview import cli_types as t
from kubeview.hostport import parse_listen

CONNECTION_PARTS = ("cluster", "local-metrics", "prometheus", "extender")


def listen(flag: str) -> Callable[[str], tuple[str, int]]:
    """An argparse type: HOST:PORT for `flag`."""
    def parse(text: str) -> tuple[str, int]:
        try:
            return parse_listen(text, flag)
        except ValueError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from exc

    return parse


def connection_options(suppress: bool = False, parts: tuple[str, ...] = CONNECTION_PARTS) -> argparse.ArgumentParser:
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
        g.add_argument("--local-metrics", metavar="HOST:PORT", type=listen("--local-metrics"),
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
        eg.add_argument("--native-scheduler", action="store_true",
                        help="packing is kube-scheduler's own, the second scheduler's native profile (`kubeview "
                             "scheduler-manifests`): the what-if scores as it does; applying rewrites the profile "
                             "and restarts that scheduler (real cluster)")
    return p


def scene_names() -> str:
    from renderer.scene import BUNDLED

    return ", ".join(sorted(p.stem for p in BUNDLED.glob("*.yaml")))


def scene_overrides(group: argparse._ActionsContainer) -> None:
    """--spp and --width, the same for `--render`, `render-manifests` and `tune` (checked by render/inputs.py)."""
    group.add_argument("--spp", type=t.int_range(1, 1_000_000), help="samples per pixel (default: the scene's)")
    group.add_argument("--width", type=t.int_range(1, 16_384),
                       help="image width in pixels; the height keeps the scene's aspect (default: the scene's)")

