"""Running one command and measuring it: wall time and peak RSS (the child's ru_maxrss from wait4),
and finding the peers (on PATH, else built by scripts/build-peers.sh into ~/.cache/kubeview/peers)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

_CACHE = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "kubeview"
# The same variables and defaults as scripts/build-peers.sh and scripts/build-kubernetes.sh.
PEERS_CACHE = Path(os.environ.get("KUBEVIEW_PEERS_CACHE") or _CACHE / "peers")
K8S_CACHE = Path(os.environ.get("KUBEVIEW_K8S_CACHE") or _CACHE / "kubernetes")
BUILD = {  # how to get each peer, printed when it is missing
    "kubectl-view-allocations": "scripts/build-peers.sh kubectl-view-allocations (cargo install from crates.io)",
    "kube-capacity": "KUBE_CAPACITY_REPO=<its git dir> scripts/build-peers.sh kube-capacity (go build of github.com/robscott/kube-capacity: the module proxy refuses it)",
    "k9s": "scripts/build-peers.sh k9s (go build of github.com/derailed/k9s)",
    "kubectl": "bash scripts/build-kubernetes.sh (kubectl of the realk8s plane)",
}
VERSION_ARGS = {"kubectl-view-allocations": ["--version"], "kube-capacity": ["version"],
                "k9s": ["version", "--short"], "kubectl": ["version", "--client"], "kubeview": ["--version"]}


@dataclass
class Timed:
    wall: float  # seconds
    rss: int  # peak resident bytes
    rc: int
    err: str = ""  # the last stderr line when it failed

    def as_dict(self) -> dict:
        return {"wall_s": round(self.wall, 3), "peak_rss_mib": round(self.rss / 2**20, 1), "rc": self.rc}


# The measured command starts from this small launcher, not from the bench: at exec, Linux keeps the
# old address space's high-water mark in the child's ru_maxrss, and a child forked (or vforked) from
# the bench, which holds its lists, reported the bench's 255 MiB for every command that used less.
_LAUNCH = ("import os,sys\n"
           "pid=os.fork()\n"
           "if pid==0:\n"
           "    os.execvp(sys.argv[2],sys.argv[2:])\n"
           "_,st,ru=os.wait4(pid,0)\n"
           "open(sys.argv[1],'w').write(str(ru.ru_maxrss))\n"
           "sys.exit(os.waitstatus_to_exitcode(st))\n")


def timed(argv: list[str], env: dict[str, str] | None = None) -> Timed:
    """Run argv to completion, its output discarded (read and thrown away, as a pipe would be); its
    peak RSS as its own (see _LAUNCH)."""
    with tempfile.NamedTemporaryFile("r", prefix="kubeview-maxrss-") as report:
        start = time.perf_counter()
        with open(os.devnull, "wb") as null, subprocess.Popen(
                [sys.executable, "-S", "-c", _LAUNCH, report.name, *argv], stdout=null, stderr=subprocess.PIPE,
                env={**os.environ, **(env or {})}) as proc:
            try:
                err = proc.stderr.read(1 << 20) if proc.stderr else b""
                proc.wait()
            except BaseException:
                proc.kill()
                raise
            wall = time.perf_counter() - start
        kib = report.read().strip()
    lines = err.decode(errors="replace").strip().splitlines()
    return Timed(wall, int(kib or 0) * 1024, proc.returncode, lines[-1] if lines and proc.returncode else "")


def find_peer(name: str) -> str | None:
    """The peer's binary: on PATH, else the newest build in the peers cache; kubectl: the realk8s
    plane's (the server's version) before PATH's."""
    if name == "kubectl":
        built = sorted(K8S_CACHE.glob("*/bin/kubectl"), key=lambda p: p.stat().st_mtime)
        return str(built[-1]) if built else shutil.which(name)
    found = shutil.which(name)
    if found:
        return found
    built = sorted(PEERS_CACHE.glob(f"{name}-*/bin/{name}"), key=lambda p: p.stat().st_mtime)
    return str(built[-1]) if built else None


def version_of(binary: str, name: str) -> str:
    try:
        out = subprocess.run([binary, *VERSION_ARGS.get(name, ["--version"])], capture_output=True, text=True,
                             timeout=30, env={**os.environ, "NO_COLOR": "1"})
    except (OSError, subprocess.TimeoutExpired):
        return "?"
    lines = [line.strip() for line in (out.stdout or out.stderr).splitlines() if line.strip()]
    return " ".join(lines[:1])[:60] or "?"


def vm_hwm(pid: int) -> int:
    """A live process's peak resident bytes (VmHWM), 0 when it is gone."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def cpu_seconds(pid: int) -> float:
    """A live process's user + system CPU seconds so far (/proc/PID/stat)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
