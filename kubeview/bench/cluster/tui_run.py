"""The TUI figures of `bench cluster`, for kubeview (tui_probe.py in a process of its own) and for k9s
(in a pty, its screen read through screen.Screen): time from start to the first complete Nodes
screen, peak RSS at DURATION seconds after start, CPU share (of one core) while the churn runs, and
for kubeview the key-to-screen times under it."""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import pty
import re
import select
import signal
import struct
import subprocess
import sys
import tempfile
import termios
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from kubeview.bench.cluster.measure import cpu_seconds, vm_hwm
from kubeview.bench.cluster.screen import Screen

K9S_SIZE = (200, 60)
K9S_VIEWS = ("nodes", "pods")  # k9s's Nodes view, and its Pods view in every namespace (-A)


def k9s_title(view: str) -> re.Pattern[str]:
    """k9s's table title, e.g. `Nodes[5,000]` or `Pods(all)[150,000]`: the count it has listed."""
    return re.compile(view + r"(?:\([^)]*\))?\[([\d,]+)\]", re.I)


class TuiError(Exception):
    """A TUI did not reach its complete screen; one sentence."""


@dataclass
class TuiFigures:
    first_screen_s: float
    peak_rss: int  # bytes, at `duration` after start
    cpu_share: float  # CPU seconds per wall second while the churn ran (1.0 = one core)
    keys: list[float] = field(default_factory=list)  # seconds per key press (kubeview only)

    @property
    def key_p95_ms(self) -> float | None:
        if not self.keys:
            return None
        ordered = sorted(self.keys)
        return round(1000 * ordered[min(len(ordered) - 1, int(round(0.95 * (len(ordered) - 1))))], 1)

    def as_dict(self) -> dict:
        out: dict[str, float | int | None] = {"first_screen_s": round(self.first_screen_s, 3), "peak_rss_mib": round(self.peak_rss / 2**20, 1),
               "cpu_share": round(self.cpu_share, 3)}
        if self.keys:
            out |= {"key_p95_ms": self.key_p95_ms, "keys": len(self.keys)}
        return out


def kubeview_tui(kubeconfig: str, prefix: str, nodes: int, bound: int, duration: float,
                 churn: Callable[[], Callable[[], object]], timeout: float = 600.0) -> TuiFigures:
    """`churn()` starts the churn and returns its stop."""
    start = time.monotonic()
    proc = subprocess.Popen([sys.executable, "-m", "kubeview.bench.cluster.tui_probe", kubeconfig, prefix,
                             str(nodes), str(bound), str(duration)], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    assert proc.stdin is not None and proc.stdout is not None
    stop: Callable[[], object] | None = None
    try:
        first = _line(proc, "complete", start + timeout)
        first_s = time.monotonic() - start
        del first
        stop = churn()
        c0, t0 = cpu_seconds(proc.pid), time.monotonic()
        proc.stdin.write("go\n")
        proc.stdin.flush()
        keys = json.loads(_line(proc, "keys", time.monotonic() + timeout))
        while time.monotonic() - start < duration and proc.poll() is None:
            time.sleep(0.2)
        share = (cpu_seconds(proc.pid) - c0) / max(1e-9, time.monotonic() - t0)
        rss = vm_hwm(proc.pid)
        stop()
        stop = None
        return TuiFigures(first_s, rss, share, keys)
    finally:
        if stop is not None:
            stop()
        proc.kill()
        proc.wait()


def _line(proc: subprocess.Popen, word: str, deadline: float) -> str:
    assert proc.stdout is not None
    while time.monotonic() < deadline:
        ready, _, _ = select.select([proc.stdout], [], [], 1.0)
        if ready:
            line = proc.stdout.readline()
            if not line:
                break
            if line.startswith(word + " "):
                return line[len(word) + 1:].strip()
    raise TuiError(f"kubeview's TUI did not print {word!r} (exit {proc.poll()})")


def k9s_tui(binary: str, kubeconfig: str, total: int, duration: float,
            churn: Callable[[], Callable[[], object]], timeout: float = 600.0, view: str = "nodes") -> TuiFigures:
    """k9s on one view (K9S_VIEWS) in a pty; complete when its title counts `total` objects: every node,
    or every pod of every namespace (the work of a complete kubeview Nodes screen, which sums them)."""
    title = k9s_title(view)
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", K9S_SIZE[1], K9S_SIZE[0], 0, 0))
    home = tempfile.mkdtemp(prefix="kubeview-bench-k9s-")
    env = {**os.environ, "TERM": "xterm-256color", "XDG_CONFIG_HOME": home, "XDG_STATE_HOME": home,
           "XDG_DATA_HOME": home, "XDG_CACHE_HOME": home, "K9S_CONFIG_DIR": home, "KUBECONFIG": kubeconfig}
    start = time.monotonic()
    proc = subprocess.Popen([binary, "--kubeconfig", kubeconfig, "--command", view, "--readonly", "--logoless",
                             "--refresh", "2", *(["--all-namespaces"] if view == "pods" else [])], stdin=slave, stdout=slave, stderr=slave, env=env,
                            start_new_session=True, preexec_fn=_controlling_tty)
    os.close(slave)
    screen = Screen(*K9S_SIZE)
    stop: Callable[[], object] | None = None
    try:
        first_s = None
        while first_s is None:
            if time.monotonic() - start > timeout or proc.poll() is not None:
                raise TuiError(f"k9s showed no {view} title counting {total:,} {view} in {timeout:.0f} s "
                               f"(exit {proc.poll()}); its screen: {' | '.join(s.strip() for s in screen.lines()[6:16] if s.strip())[:600]}")
            _pump(master, screen, 0.05)
            if any(int(m.group(1).replace(",", "")) >= total for line in screen.lines() for m in title.finditer(line)):
                first_s = time.monotonic() - start
        stop = churn()
        c0, t0 = cpu_seconds(proc.pid), time.monotonic()
        while time.monotonic() - start < max(duration, first_s + 5) and proc.poll() is None:
            _pump(master, screen, 0.2)
        share = (cpu_seconds(proc.pid) - c0) / max(1e-9, time.monotonic() - t0)
        rss = vm_hwm(proc.pid)
        stop()
        stop = None
        return TuiFigures(first_s, rss, share)
    finally:
        if stop is not None:
            stop()
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        os.close(master)


def _controlling_tty() -> None:
    """In the child, after setsid: make the pty (its stdin) the controlling terminal; k9s opens /dev/tty."""
    fcntl.ioctl(0, termios.TIOCSCTTY, 0)


def _pump(fd: int, screen: Screen, wait: float) -> None:
    ready, _, _ = select.select([fd], [], [], wait)
    if ready:
        with contextlib.suppress(OSError):
            screen.feed(os.read(fd, 1 << 16).decode(errors="replace"))
