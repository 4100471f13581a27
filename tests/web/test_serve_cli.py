"""`kubeview serve`'s refusals: one line each, exit 2 for bad input and 1 for the environment, and
nothing listening afterwards."""

from __future__ import annotations

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
