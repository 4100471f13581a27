"""The producer's status endpoint: ``GET /status`` (JSON), ``/image.png``, ``/metrics``.

A deliberately small HTTP/1.1 server on asyncio (one request per connection, bounded
request size, GET only) so the producer needs no web framework.  The JSON shape is a
contract kubeview codes against; see :func:`status_dict`.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Protocol

from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily

from renderer.consumer_stats import ConsumerInfo, RateMeter
from renderer.png_cache import PngCache

if TYPE_CHECKING:
    from renderer.scene import Scene
    from renderer.tasks import TaskBook

log = logging.getLogger("renderer.producer")

MAX_REQUEST = 8192


class StatusSource(Protocol):
    """What the status endpoint reads from the producer (the producer imports this module, never
    the other way round)."""

    book: TaskBook
    scene: Scene
    consumers: dict[str, ConsumerInfo]
    meter: RateMeter
    clock: Callable[[], float]
    finished: bool
    finished_at: float | None
    started: float
    max_status: int
    output_name: str | None


def status_dict(p: StatusSource, now: float) -> dict:
    """The ``GET /status`` document (see the renderer contract in the README of issue 3)."""
    book = p.book
    rate = p.meter.rate(now)
    remaining = book.samples_total - book.samples_done
    if p.finished:
        eta: float | None = 0.0
    elif rate > 0:
        eta = round(remaining / rate, 1)
    else:
        eta = None
    end = p.finished_at if p.finished_at is not None else now
    return {
        "scene": p.scene.name, "width": p.scene.width, "height": p.scene.height, "spp": p.scene.spp,
        "tasks": {"total": book.total, "done": book.done, "leased": len(book.leases),
                  "queued": book.queued, "requeued": book.requeued},
        "samples_done": book.samples_done, "samples_total": book.samples_total,
        "samples_per_second": round(rate, 1), "eta_seconds": eta,
        "elapsed_seconds": round(end - p.started, 3), "finished": p.finished,
        "output": p.output_name if p.finished else None,
        "consumers": [c.as_dict(now) for c in p.consumers.values()],
    }


class _Collector:
    """Prometheus metrics read from the producer at scrape time."""

    def __init__(self, p: StatusSource) -> None:
        self.p = p

    def collect(self) -> Iterator[GaugeMetricFamily | CounterMetricFamily]:
        p, book = self.p, self.p.book
        now = p.clock()
        yield GaugeMetricFamily("renderer_tasks_total", "Tasks in the job", value=book.total)
        yield GaugeMetricFamily("renderer_tasks_done", "Tasks finished", value=book.done)
        yield GaugeMetricFamily("renderer_tasks_leased", "Tasks leased to consumers", value=len(book.leases))
        yield GaugeMetricFamily("renderer_tasks_queued", "Tasks waiting for a consumer", value=book.queued)
        yield CounterMetricFamily("renderer_tasks_requeued", "Tasks put back in the queue",
                                  value=book.requeued)
        yield GaugeMetricFamily("renderer_samples_total", "Samples in the job", value=book.samples_total)
        yield GaugeMetricFamily("renderer_samples_done", "Samples finished", value=book.samples_done)
        yield GaugeMetricFamily("renderer_samples_per_second", "Samples per second (10 s window)",
                                value=p.meter.rate(now))
        yield GaugeMetricFamily("renderer_consumers", "Connected consumers",
                                value=sum(c.state != "gone" for c in p.consumers.values()))
        yield GaugeMetricFamily("renderer_finished", "1 once the image is written", value=int(p.finished))
        per = GaugeMetricFamily("renderer_consumer_tasks_done", "Tasks finished per consumer",
                                labels=["consumer"])
        for c in p.consumers.values():
            per.add_metric([c.id], c.tasks_done)
        yield per


def metrics_registry(p: StatusSource) -> CollectorRegistry:
    reg = CollectorRegistry(auto_describe=False)
    reg.register(_Collector(p))
    return reg


class StatusServer:
    """Serves the three endpoints for one producer."""

    def __init__(self, p: StatusSource) -> None:
        self.p = p
        self.registry = metrics_registry(p)
        self.png = PngCache(p.book)
        self.active = 0  # requests in progress; at p.max_status more are hung up on at once

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if self.active >= self.p.max_status:  # each one holds an fd: the output needs its reserve
            writer.close()
            return
        self.active += 1
        try:
            head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), timeout=10)
            line = head.split(b"\r\n", 1)[0].decode("latin-1")
            parts = line.split()
            if len(parts) != 3 or not parts[2].startswith("HTTP/"):
                await self._send(writer, 400, "text/plain", b"bad request\n")
                return
            method, target = parts[0], parts[1].split("?", 1)[0]
            if method not in ("GET", "HEAD"):
                await self._send(writer, 405, "text/plain", b"only GET\n")
                return
            status, ctype, body = await self.route(target)
            await self._send(writer, status, ctype, b"" if method == "HEAD" else body, len(body))
        except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, TimeoutError, ConnectionError):
            pass
        except asyncio.CancelledError:  # shutdown; finishing normally keeps asyncio from logging it
            pass
        except Exception:  # a status request must never take the producer down
            log.exception("status request failed")
        finally:
            self.active -= 1
            writer.close()

    async def route(self, target: str) -> tuple[int, str, bytes]:
        p = self.p
        if target == "/status":
            doc = status_dict(p, p.clock())
            return 200, "application/json", (json.dumps(doc) + "\n").encode()
        if target == "/image.png":  # the final image is the image so far once every chunk is folded
            return 200, "image/png", await self.png.png()
        if target == "/metrics":
            return 200, "text/plain; version=0.0.4; charset=utf-8", generate_latest(self.registry)
        if target == "/":
            return 200, "text/plain", b"renderer producer: GET /status, /image.png, /metrics\n"
        return 404, "text/plain", b"not found\n"

    @staticmethod
    async def _send(writer: asyncio.StreamWriter, status: int, ctype: str, body: bytes,
                    length: int | None = None) -> None:
        reason = {200: "OK", 400: "Bad Request", 404: "Not Found", 405: "Method Not Allowed"}[status]
        head = (f"HTTP/1.1 {status} {reason}\r\nContent-Type: {ctype}\r\n"
                f"Content-Length: {len(body) if length is None else length}\r\n"
                "Cache-Control: no-store\r\nConnection: close\r\n\r\n")
        writer.write(head.encode() + body)
        await asyncio.wait_for(writer.drain(), timeout=30)

    async def start(self, host: str, port: int) -> asyncio.Server:
        return await asyncio.start_server(self.handle, host, port, limit=MAX_REQUEST)
