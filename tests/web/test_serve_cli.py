"""`kubeview serve`'s refusals: one line each, exit 2 for bad input and 1 for the environment, and
nothing listening afterwards."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest


def _serve(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "kubeview", "serve", *args], capture_output=True, text=True,
                          timeout=60)


@pytest.mark.parametrize(("args", "code", "says"), [
    (["--", "--bogus"], 2, "unrecognized arguments: --bogus"),
    (["--", "snapshot"], 2, "not a command or --headless"),
    (["--", "--demo", "--headless"], 2, "not a command or --headless"),
    (["--host", "0.0.0.0", "--", "--demo"], 2, "--host 0.0.0.0 is reachable from other hosts"),
    (["--host", "::", "--", "--demo"], 2, "pass --token-file FILE"),
    (["--token-file", "/nonexistent/token", "--", "--demo"], 1, "cannot read the token file /nonexistent/token"),
    (["--max-sessions", "0", "--", "--demo"], 2, "--max-sessions"),
])
def test_refusals_are_one_line(args: list[str], code: int, says: str) -> None:
    out = _serve(*args)
    assert out.returncode == code and says in out.stderr and out.stderr.count("\n") == 1, out.stderr


def test_an_empty_token_file_and_a_taken_port_are_refused(tmp_path: Path) -> None:
    (tmp_path / "token").write_text("\n")
    out = _serve("--token-file", str(tmp_path / "token"), "--", "--demo")
    assert out.returncode == 1 and "is empty" in out.stderr and out.stderr.count("\n") == 1, out.stderr
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        out = _serve("--port", str(taken.getsockname()[1]), "--", "--demo")
    assert out.returncode == 1 and "cannot listen on 127.0.0.1:" in out.stderr and out.stderr.count("\n") == 1, out.stderr


def test_session_options_are_checked_as_kubeview_checks_them(tmp_path: Path) -> None:
    """Issue 42 item 4: `-- --render nosuch` and `-- --context lab` (no kubeconfig) printed "serving"
    and every browser session failed. Checked once at start by kubeview's own checks (one line, the
    exit code `kubeview` itself gives them), with nothing listening."""
    (tmp_path / "cluster.yaml").write_text("- not a mapping\n")
    env = {k: v for k, v in os.environ.items() if k not in ("KUBECONFIG", "KUBERNETES_SERVICE_HOST")}
    env["HOME"] = str(tmp_path)  # no ~/.kube/config
    cases = {
        ("--render", "nosuch"): "nosuch: no such scene file or bundled scene",
        ("--context", "lab"): "--context lab needs a kubeconfig, and there is none",
        ("--demo", "--context", "lab"): "--context lab is for a real cluster, but --demo asks for the embedded one",
        ("--local", "--cluster", "cluster.yaml"): "cluster.yaml: top level: must be a mapping",
        ("--kubeconfig", "nosuch"): "No kubeconfig at nosuch",
        ("--render", "spheres", "-o", "x.jpg"): "-o x.jpg: the render writes PNG",
        ("--prometheus-queries", "q.yaml"): "--prometheus-queries q.yaml needs --prometheus URL",
    }
    for app, says in cases.items():
        out = subprocess.run([sys.executable, "-m", "kubeview", "serve", "--", *app], capture_output=True,
                             text=True, timeout=60, env=env, cwd=tmp_path)
        assert (out.returncode, out.stdout) == (2, ""), (app, out.stderr)
        assert out.stderr.startswith(f"kubeview serve: after --: {says}") and out.stderr.count("\n") == 1, out.stderr
