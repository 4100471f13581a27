"""The TUI reads utilization from a real Prometheus: idle GPUs in the header, failures as one line."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable

from kubeview.cluster.prometheus.source import PrometheusUsage
from kubeview.model.events import KINDS, ConnectionState, Listed, SourceEvent
from kubeview.tui.app import make_app
from kubeview.tui.widgets.cluster_header import ClusterHeader
from tests.prometheus.test_prometheus_server import WINDOW, node, pod


class StaticSource:
    """A cluster that lists once and never changes: the GPU pods the test exporter's DCGM series name."""

    title = "static"
    is_local = False

    def run(self, emit: Callable[[SourceEvent], None], stop: threading.Event) -> None:
        objects = {
            "Node": [node("dgx-a", 2), node("dgx-b", 2)],
            "Pod": [pod("ml", "idle-trainer", "dgx-a", 1), pod("ml", "busy-trainer", "dgx-a", 1),
                    pod("ml", "pair", "dgx-b", 2)],
        }
        for kind in KINDS:
            emit(Listed(kind, objects.get(kind, [])))
        emit(ConnectionState("live", time.time()))
        stop.wait()

    def scale(self, kind: str, namespace: str, name: str, replicas: int) -> str:
        raise NotImplementedError

    def close(self) -> None:
        pass


async def _header_after(usage: PrometheusUsage, done: Callable[[object], bool]) -> tuple[object, str]:
    """The summary and the header's text (plus the banner line) once `done(summary)`."""
    app = make_app(StaticSource(), usage=usage, usage_interval=0.5)
    async with app.run_test(size=(120, 40)) as pilot:
        deadline = time.monotonic() + 30
        while not done(app.summary):
            assert time.monotonic() < deadline, f"the header never showed the reading: {app.summary}"
            await pilot.pause(0.1)
        await pilot.pause()
        text = str(app.screen.query_one(ClusterHeader).render()) + "\n" + app.banner[0]
        return app.summary, text


def test_header_counts_allocated_idle_gpus(prom) -> None:  # noqa: ANN001
    usage = PrometheusUsage(prom.url, window=WINDOW)
    summary, header = asyncio.run(_header_after(usage, lambda s: s.idle_gpus is not None))
    assert summary.idle_gpus == 2  # idle-trainer's GPU at 2%, one of pair's at 3%; busy-trainer at 60%
    assert "2 allocated idle (<5%)" in header
    assert summary.cpu.used is not None and summary.cpu.used > 0  # node-exporter's cpu, beside the requests


def test_unreachable_prometheus_is_one_line_in_the_header() -> None:
    usage = PrometheusUsage("http://127.0.0.1:1", window="1m", timeout=2.0)
    summary, header = asyncio.run(_header_after(usage, lambda s: s.usage_error is not None))
    assert "unreachable" in summary.usage_error and "\n" not in summary.usage_error
    assert "usage: unavailable" in header
    assert "utilization: Prometheus at http://127.0.0.1:1 is unreachable (connection refused)." in header
    assert summary.nodes == 2 and summary.idle_gpus is None  # the rest of kubeview keeps working
