"""The command line's contract: help, version, and one-line errors with exit code 2."""

from __future__ import annotations

import subprocess
import sys

from kubeview import __version__


def kubeview(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "kubeview", *args], capture_output=True, text=True, timeout=120)


def test_help_names_every_command() -> None:
    out = kubeview("--help")
    assert out.returncode == 0
    for word in ("snapshot", "extender", "bench", "render-manifests", "--render", "--context", "--namespace"):
        assert word in out.stdout


def test_version() -> None:
    out = kubeview("--version")
    assert out.returncode == 0
    assert out.stdout.strip() == f"kubeview {__version__}"


def test_unknown_flag_is_one_line_exit_2() -> None:
    out = kubeview("--frobnicate")
    assert out.returncode == 2
    assert out.stderr.count("\n") == 1
    assert "--frobnicate" in out.stderr
    assert "Traceback" not in out.stderr


def test_unknown_command_is_one_line_exit_2() -> None:
    out = kubeview("frobnicate")
    assert out.returncode == 2
    assert out.stderr.count("\n") == 1
    assert "frobnicate" in out.stderr


def test_options_before_the_command_survive() -> None:
    from kubeview.cli import build_parser

    args = build_parser().parse_args(["--context", "lab", "snapshot", "--json"])
    assert (args.command, args.context, args.json) == ("snapshot", "lab", True)


def test_a_closed_pipe_ends_quietly() -> None:
    """`kubeview snapshot --schema | head -1`: no traceback, ever (it came 5 times in 6)."""
    import subprocess
    import sys

    for _ in range(6):
        proc = subprocess.run(f"{sys.executable} -m kubeview snapshot --schema | head -c 1", shell=True,
                              capture_output=True, text=True, timeout=60)
        assert proc.stdout == "{"
        assert proc.stderr == "", proc.stderr


def _no_kubeconfig(tmp_path) -> dict:
    import os

    env = {k: v for k, v in os.environ.items() if k not in ("KUBECONFIG", "KUBERNETES_SERVICE_HOST")}
    env["HOME"] = str(tmp_path)  # no ~/.kube/config
    return env


def test_cluster_options_without_a_kubeconfig_are_one_line_and_exit_2(tmp_path) -> None:
    """`snapshot --json --context nope` used to print the embedded cluster and exit 0. Options that
    cannot apply are a usage error: exit 2 (issue 42 item 9; they were 1)."""
    cases = {
        ("snapshot", "--json", "--context", "nope"):
            "kubeview: --context nope needs a kubeconfig, and there is none ($KUBECONFIG unset, no "
            "~/.kube/config, not in a pod); pass --kubeconfig FILE, or --local for the embedded cluster.\n",
        ("-n", "render", "snapshot"):
            "kubeview: -n render needs a kubeconfig, and there is none ($KUBECONFIG unset, no "
            "~/.kube/config, not in a pod); pass --kubeconfig FILE, or --local for the embedded cluster.\n",
        ("snapshot", "--local", "--context", "lab"):
            "kubeview: --context lab is for a real cluster, but --local asks for the embedded one; drop one of them.\n",
        ("--render", "three-spheres", "--headless", "--context", "nope"):
            "kubeview: --context nope needs a kubeconfig, and there is none ($KUBECONFIG unset, no "
            "~/.kube/config, not in a pod); pass --kubeconfig FILE, or --local for the embedded cluster.\n",
    }
    for args, message in cases.items():
        out = subprocess.run([sys.executable, "-m", "kubeview", *args], capture_output=True, text=True,
                             timeout=120, env=_no_kubeconfig(tmp_path), cwd=tmp_path)
        assert (out.returncode, out.stdout, out.stderr) == (2, "", message), args
        assert not list(tmp_path.glob("*.png"))  # no render was started


def test_a_render_whose_reader_goes_away_stops_quietly(tmp_path) -> None:
    """`kubeview --render ... --headless | head -1` printed a traceback every time."""
    out = subprocess.run(["bash", "-c", f"{sys.executable} -m kubeview --render three-spheres --headless --local "
                          f"-o {tmp_path}/x.png | head -1; echo ${{PIPESTATUS[0]}} >&2"],
                         capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert out.stdout.startswith("render: ")
    assert out.stderr == "141\n", out.stderr  # quiet, with the status of a tool the closed pipe ended


def test_each_command_module_owns_its_parser_and_cli_lists_them() -> None:
    """#34 item 4: a command is one module in kubeview/commands/ (NAME, add_parser, run) plus one entry
    in cli.SUBCOMMANDS; every module there with a `run` is listed, and `args.command` leads to it."""
    import argparse
    import importlib
    from pathlib import Path

    from kubeview import cli

    folder = Path(cli.__file__).parent / "commands"
    with_run = {f"kubeview.commands.{p.stem}" for p in folder.glob("*.py")
                if hasattr(importlib.import_module(f"kubeview.commands.{p.stem}"), "run")}
    assert with_run == set(cli.COMMANDS.values())
    sub = next(a for a in cli.build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    assert list(sub.choices) == [c.NAME for c in cli.SUBCOMMANDS]
    for command in cli.SUBCOMMANDS:
        assert sub.choices[command.NAME].get_default("command") == command.NAME
        assert cli.COMMANDS[command.NAME] == command.__name__


def test_building_the_parser_imports_no_command_work() -> None:
    """cli.py imports every command module to build its parser, so those modules keep their work's imports
    in `run`: `kubeview --help` and a usage error never load the TUI, rich, the extender's server, the
    cluster sources or the snapshot document."""
    import json
    import subprocess
    import sys

    probe = ("import json, sys\nfrom kubeview.cli import build_parser\nbuild_parser()\n"
             "print(json.dumps(sorted(sys.modules)))")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=True)
    loaded = json.loads(out.stdout)
    heavy = ["textual", "rich", "kubernetes", "optuna", "prometheus_client", "asyncio", "kubeview.tui",
             "kubeview.snapshot", "kubeview.model.cluster", "kubeview.cluster.local", "kubeview.cluster.kube",
             "kubeview.scheduling.extender", "kubeview.scheduling.server", "kubeview.render.manifests"]
    assert [m for m in heavy if m in loaded] == []
