"""Argument parsing only: the list of commands. Each command module in `kubeview/commands/` builds its
own subparser (`add_parser(sub)`, `NAME`) and does its work (`run(args) -> int`); the modules are light
to import, and a command's work is imported only when `run` runs (tests/test_cli.py checks both)."""

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
from kubeview.commands import (
    bench,
    extender,
    fit,
    plan,
    preempt,
    render_manifests,
    scheduler_manifests,
    serve,
    snapshot,
    tune,
)
from kubeview.commands import main as main_command
from kubeview.commands.options import connection_options
from kubeview.commands.query_check import check_queries
from kubeview.terminate import Terminated, discard_stdout, sigterm_raises

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


def _prog() -> str:
    """`kubectl kubeview` when kubectl ran the plugin (kubectl-kubeview), so errors and --help name
    what the user typed."""
    return "kubectl kubeview" if os.path.basename(sys.argv[0]) == "kubectl-kubeview" else "kubeview"


# `kubeview COMMAND`, in the order --help lists them: each module builds its subparser (`add_parser`)
# and does its work (`run(args) -> int`); a new command is a module in kubeview/commands/ and a line here
SUBCOMMANDS = (snapshot, fit, extender, bench, tune, serve, preempt, plan, render_manifests, scheduler_manifests)

# `args.command` -> the module whose `run` it calls ("tui": `kubeview` with no command)
COMMANDS = {"tui": main_command.__name__} | {command.NAME: command.__name__ for command in SUBCOMMANDS}


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog=_prog(),
        description=DESCRIPTION,
        epilog=EPILOG,
        parents=[connection_options()],
    )
    parser.add_argument("--version", action="version", version=f"kubeview {__version__}")
    main_command.add_arguments(parser)
    parser.set_defaults(command="tui")
    sub = parser.add_subparsers(title="commands", metavar="COMMAND", parser_class=_Parser)
    for command in SUBCOMMANDS:
        command.add_parser(sub).set_defaults(command=command.NAME)
    # `kubeview serve -- OPTIONS` checks each session's options with this very parser (given, not
    # imported: serve is one of the commands it lists)
    sub.choices[serve.NAME].set_defaults(kubeview_parser=build_parser)
    return parser


def _gpu_names() -> str | None:
    """Which resources are GPUs: `KUBEVIEW_GPU_RESOURCES` (model/gpus/vendors.py), or why it is bad."""
    from kubeview.model.gpus import vendors

    try:
        vendors.configure(os.environ.get(vendors.ENV))
    except ValueError as exc:
        return str(exc)
    return None


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    bad = check_queries(args) or _gpu_names()
    if bad:
        sys.stderr.write(f"kubeview: {bad}\n")
        return 2
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

