"""The Go churn (tools/churn, built by scripts/build-churn.sh): the same label patches as churn.py's
`Churn`, made by a Go program with many goroutines over HTTP/2, so the events offered are not paid
for by Python threads on the cores the measured TUI needs (issue #41 item 4). `make_churn` picks it
when its binary is built and falls back to the Python `Churn`, saying so."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import tempfile
from collections.abc import Callable
from pathlib import Path

from kubeview.bench.cluster.churn import Churn
from kubeview.cluster.kube.config import Connection

SOURCE = Path(__file__).resolve().parents[3] / "tools" / "churn"
BUILD_CHURN = "bash scripts/build-churn.sh"


def churn_cache() -> Path:
    """build-churn.sh's cache: $KUBEVIEW_CHURN_CACHE, else ${XDG_CACHE_HOME:-~/.cache}/kubeview/churn."""
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return Path(os.environ.get("KUBEVIEW_CHURN_CACHE") or base / "kubeview" / "churn")


def churn_binary(source: Path = SOURCE, cache: Path | None = None) -> Path | None:
    """The binary built from this checkout's tools/churn (the key is build-churn.sh's: a hash of go.mod,
    go.sum and the .go files in name order), or None when it is not built or there is no source."""
    try:
        files = [source / "go.mod", source / "go.sum", *sorted(source.glob("*.go"), key=lambda p: p.name)]
        digest = hashlib.sha256(b"".join(f.read_bytes() for f in files)).hexdigest()[:16]
    except OSError:
        return None
    binary = (cache or churn_cache()) / digest / "churn"
    return binary if os.access(binary, os.X_OK) else None


class GoChurn:
    """The Go churn as a child process: `start` runs it (stdin held open), `stop` closes its stdin
    and reads its JSON line. The figures are the program's own: writes made, errors, achieved/s."""

    def __init__(self, binary: Path, kubeconfig: str, namespace: str, names: list[str], rate: float,
                 workers: int = 64) -> None:
        self.argv = [str(binary), "--kubeconfig", kubeconfig, "--namespace", namespace, "--rate", f"{rate:g}",
                     "--workers", str(workers), "--stdin"]
        self.names, self.rate = names, rate
        self.done = self.errors = 0
        self.achieved = 0.0  # events per second, once stopped
        self.result: dict = {}
        self._proc: subprocess.Popen[str] | None = None
        self._names_file: str | None = None

    def start(self) -> GoChurn:
        if not self.names or self.rate <= 0:
            return self
        fd, self._names_file = tempfile.mkstemp(prefix="kubeview-churn-names-")
        with os.fdopen(fd, "w") as f:
            f.write("\n".join(self.names) + "\n")
        self._proc = subprocess.Popen([*self.argv, "--names", self._names_file], stdin=subprocess.PIPE,
                                      stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        return self

    def stop(self) -> float:
        """Stop; the achieved events per second (the program's JSON line; 0 when it failed)."""
        if self._proc is None:
            return self.achieved
        try:
            out, err = self._proc.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            out, err = self._proc.communicate()
        finally:
            if self._names_file:
                os.unlink(self._names_file)
        lines = out.strip().splitlines()
        try:
            self.result = json.loads(lines[-1]) if lines else {}
        except ValueError:
            self.result = {}
        if not self.result:
            self.result = {"error": (err.strip().splitlines() or [f"exit {self._proc.returncode}"])[-1]}
        self.done, self.errors = int(self.result.get("done", 0)), int(self.result.get("errors", 0))
        self.achieved = float(self.result.get("achieved", 0.0))
        self._proc = None
        return self.achieved


def make_churn(conn: Connection, kubeconfig: str, namespace: str, names: list[str], rate: float,
               say: Callable[[str], None]) -> tuple[str, Callable[[], GoChurn | Churn]]:
    """(which churn, a factory of unstarted churns): the Go one when built, else the Python one, with
    one line saying why and how to build the Go one."""
    binary = churn_binary()
    if binary is not None:
        return "go", lambda: GoChurn(binary, kubeconfig, namespace, names, rate)
    say(f"note: no Go churn built from tools/churn (build it with {BUILD_CHURN}); the Python churn offers the "
        "events instead, from this process's threads on the cores the TUI needs")
    return "python", lambda: Churn(conn, namespace, names, rate)
