"""The real kube-state-metrics as an oracle: started against the plane, scraped, its text parsed.

Series are compared as sets of (metric, labels, value) with the value as a float: KSM prints `0.1`
and `1.5e+09` where kubeview prints `0.1` and `1500000000`. The `uid` label is dropped on both sides
(kubeview's model keeps no uids; kubeview/snapshot/ksm.py says so).
"""

from __future__ import annotations

import re
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from .plane import Plane
from .procs import Proc, free_port, wait_until

_LINE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)\{(.*)\}\s+(\S+)$')
_LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')

Series = tuple[str, frozenset[tuple[str, str]], float]


def parse(text: str, metrics: set[str]) -> set[Series]:
    out = set()
    for line in text.splitlines():
        m = _LINE.match(line)
        if not m or m.group(1) not in metrics:
            continue
        labels = frozenset((k, v) for k, v in _LABEL.findall(m.group(2)) if k != "uid")
        out.add((m.group(1), labels, float(m.group(3))))
    return out


class KSM:
    """kube-state-metrics for nodes and pods, on loopback."""

    def __init__(self, plane: Plane) -> None:
        self.binary: Path = plane.bin / "kube-state-metrics"
        self.port, telemetry = free_port(), free_port()
        self.url = f"http://127.0.0.1:{self.port}/metrics"
        self.proc = Proc("kube-state-metrics", [
            str(self.binary), f"--kubeconfig={plane.kubeconfig}", "--host=127.0.0.1", f"--port={self.port}",
            "--telemetry-host=127.0.0.1", f"--telemetry-port={telemetry}", "--resources=nodes,pods"], plane.logs)
        wait_until(self._up, 60, "kube-state-metrics serving /metrics")

    def _up(self) -> bool:
        if not self.proc.alive:
            raise AssertionError(f"kube-state-metrics exited:\n{self.proc.tail()}")
        try:
            return bool(self.scrape())
        except OSError:
            return False

    def scrape(self) -> str:
        with urllib.request.urlopen(self.url, timeout=10) as r:
            return r.read().decode()

    def wait_same(self, ours: set[Series], metrics: set[str], select: Callable[[set[Series]], set[Series]],
                  timeout: float = 30) -> None:
        """Until KSM's series of `metrics` (narrowed by `select`) equal `ours`: its watch may be a moment
        behind the objects' creation. Fails with what only one side has."""
        diff: list[str] = []

        def same() -> bool:
            theirs = select(parse(self.scrape(), metrics))
            diff[:] = [f"only kubeview: {sorted(ours - theirs)}", f"only KSM: {sorted(theirs - ours)}"]
            return ours == theirs

        try:
            wait_until(same, timeout, "kube-state-metrics to show the same series", interval=0.5)
        except AssertionError as exc:
            raise AssertionError(f"{exc}\n" + "\n".join(diff)) from None

    def stop(self) -> None:
        self.proc.stop()


def running_ksm(plane: Plane) -> Iterator[KSM]:
    """A module fixture's body: kube-state-metrics on the plane, stopped after; the module skips where
    the build left it out (the module proxy did not serve it)."""
    if not (plane.bin / "kube-state-metrics").is_file():
        pytest.skip("realk8s: no kube-state-metrics; build it with `bash scripts/build-kubernetes.sh`")
    k = KSM(plane)
    try:
        yield k
    finally:
        k.stop()
