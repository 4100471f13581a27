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
