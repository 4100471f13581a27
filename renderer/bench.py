"""``python -m renderer bench``: kernel speed, distribution efficiency, producer capacity.

* kernel: samples/s on one core (the serial kernel) on ``spheres.yaml`` at 200x112, max
  depth 50, with the BVH and by brute force (every ray against every sphere), and the ratio;
* distribution: a producer in this process and 1, then 2, real consumer processes; the
  efficiency is throughput(2) / (2 x throughput(1)), measured between 10% and 90% done so
  that process start-up is not counted (the end-to-end figure is reported too);
* producer capacity: tasks/s the producer sustains with consumers (in another process)
  that answer every task instantly with a zero result over real TCP.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import logging
import os
import struct
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import cast

import psutil

from renderer import protocol as proto
from renderer import scene as scene_mod
from renderer.kernels import render_chunk
from renderer.producer import Producer, ProducerSettings

KERNEL_SIZE = (200, 112)
FAKE_CONSUMERS = 8
TARGETS = {"kernel_samples_per_second_per_core": 500_000, "distribution_efficiency": 0.9,
           "producer_tasks_per_second": 5_000}


# -- kernel -------------------------------------------------------------------------------
def _rate(sc: scene_mod.Scene, spp: int, repeats: int) -> tuple[float, float]:
    """Serial kernel (one core): best samples per wall second and per CPU second."""
    w, h = sc.width, sc.height
    render_chunk(sc, 0, 0, 1, 1, 0, 1)  # compile or load the cache
    wall = cpu = float("inf")
    for _ in range(repeats):
        t0, c0 = time.perf_counter(), time.thread_time()
        render_chunk(sc, 0, 0, w, h, 0, spp)
        wall, cpu = min(wall, time.perf_counter() - t0), min(cpu, time.thread_time() - c0)
    return w * h * spp / wall, w * h * spp / cpu


def bench_kernel(quick: bool) -> dict:
    sc = scene_mod.load(scene_mod.bundled("spheres"), width=KERNEL_SIZE[0], height=KERNEL_SIZE[1])
    bvh, bvh_cpu = _rate(sc, 16 if quick else 48, 2 if quick else 3)
    brute, brute_cpu = _rate(sc.brute_force(), 2 if quick else 4, 1 if quick else 2)
    return {"scene": "spheres", "width": sc.width, "height": sc.height, "max_depth": sc.max_depth,
            "spheres": len(sc.spheres), "bvh_samples_per_second_per_core": round(bvh),
            "brute_force_samples_per_second_per_core": round(brute), "bvh_speedup": round(bvh / brute, 2),
            "bvh_samples_per_cpu_second": round(bvh_cpu), "brute_force_samples_per_cpu_second": round(brute_cpu)}


# -- in-process producer --------------------------------------------------------------------
class _ProducerThread:
    def __init__(self, sc: scene_mod.Scene) -> None:
        self.sc = sc
        self.producer: Producer | None = None
        self.loop: asyncio.AbstractEventLoop | None = None
        self.ready = threading.Event()
        self.thread = threading.Thread(target=lambda: asyncio.run(self._main()), daemon=True)

    async def _main(self) -> None:
        self.loop = asyncio.get_running_loop()
        self.producer = Producer(self.sc, settings=ProducerSettings(linger_seconds=0.5))
        task = asyncio.create_task(self.producer.run(("127.0.0.1", 0)))
        while self.producer.listen_address is None and not task.done():
            await asyncio.sleep(0.01)
        self.ready.set()
        await task

    def __enter__(self) -> _ProducerThread:
        self.thread.start()
        self.ready.wait(30)
        return self

    def __exit__(self, *exc: object) -> None:
        if self.loop is not None and self.producer is not None and self.thread.is_alive():
            self.loop.call_soon_threadsafe(self.producer.stop)
        self.thread.join(30)

    @property
    def port(self) -> int:
        assert self.producer is not None and self.producer.listen_address is not None  # __enter__ waited for it
        return self.producer.listen_address[1]

    def progress(self) -> tuple[int, bool]:
        p = self.producer
        return p.book.samples_done, p.finished  # type: ignore[union-attr]


def _env() -> dict[str, str]:
    e = dict(os.environ)
    root = str(Path(__file__).resolve().parent.parent)
    e["PYTHONPATH"] = root + os.pathsep + e.get("PYTHONPATH", "")
    return e


def _cpu_seconds(procs: list[psutil.Process]) -> float:
    total = 0.0
    for proc in procs:
        with contextlib.suppress(psutil.Error):
            t = proc.cpu_times()
            total += t.user + t.system
    return total


def _run_job(sc: scene_mod.Scene, commands: list[list[str]], timeout: float = 600) -> dict:
    """Serve ``sc`` to the given consumer command lines; timings from the producer's view.

    ``steady`` is the throughput between 10% and 90% done (process start-up and the tail
    excluded); ``cpu`` is the consumers' CPU seconds over that stretch."""
    trace: list[tuple[float, int, float]] = []
    with _ProducerThread(sc) as pt:
        procs = [subprocess.Popen([sys.executable, *[a.replace("PORT", str(pt.port)) for a in cmd]],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=_env())
                 for cmd in commands]
        watched = [psutil.Process(proc.pid) for proc in procs]
        try:
            end = time.monotonic() + timeout
            while time.monotonic() < end:
                done, finished = pt.progress()
                trace.append((time.monotonic(), done, _cpu_seconds(watched)))
                if finished:
                    break
                time.sleep(0.01)
            else:
                raise RuntimeError("benchmark job did not finish")
            p = pt.producer
            first, last = p.meter.since, p.finished_at  # type: ignore[union-attr]
        finally:
            for proc in procs:
                try:
                    proc.wait(30)
                except subprocess.TimeoutExpired:
                    proc.kill()
    total = sc.width * sc.height * sc.spp
    t10, d10, c10 = next(row for row in trace if row[1] >= 0.1 * total)
    t90, d90, c90 = next(row for row in trace if row[1] >= 0.9 * total)
    return {"steady": (d90 - d10) / (t90 - t10), "cpu": c90 - c10, "wall": t90 - t10,
            "samples": d90 - d10, "end_to_end": total / (last - first),  # type: ignore[operator]
            "tasks": p.book.total, "seconds": last - first}  # type: ignore[union-attr,operator]


def bench_distribution(quick: bool) -> dict:
    sc = scene_mod.load(scene_mod.bundled("spheres"), width=KERNEL_SIZE[0], height=KERNEL_SIZE[1],
                        spp=100 if quick else 200)
    consumer = ["-m", "renderer", "consumer", "--connect", "127.0.0.1:PORT"]
    one = _run_job(sc, [consumer])
    two = _run_job(sc, [consumer, consumer])
    per_cpu_1, per_cpu_2 = one["samples"] / one["cpu"], two["samples"] / two["cpu"]
    return {"scene": "spheres", "width": sc.width, "height": sc.height, "spp": sc.spp, "tile": sc.tile,
            "chunk": sc.chunk, "tasks": one["tasks"],
            "one_consumer_samples_per_second": round(one["steady"]),
            "two_consumers_samples_per_second": round(two["steady"]),
            "efficiency": round(two["steady"] / (2 * one["steady"]), 3),
            "efficiency_end_to_end": round(two["end_to_end"] / (2 * one["end_to_end"]), 3),
            # samples per consumer CPU second, 2 vs 1: the protocol's cost alone, whatever else runs
            "efficiency_per_cpu_second": round(per_cpu_2 / per_cpu_1, 3),
            # CPU the consumers got per consumer, as a fraction of wall time (1.0 = a whole core each)
            "consumer_cpu_share_one": round(one["cpu"] / one["wall"], 3),
            "consumer_cpu_share_two": round(two["cpu"] / (2 * two["wall"]), 3)}


# -- producer capacity ------------------------------------------------------------------------
class _FakeConsumer(asyncio.Protocol):
    """Answers every task at once with zeros, pipelined like the real consumer (two requests
    outstanding).  Callback-based so that this side costs as little CPU as possible."""

    _TASK = struct.Struct(">7I")

    def __init__(self, name: str, closed: asyncio.Future) -> None:
        self.name, self.closed = name, closed
        self.buf = bytearray()
        self.zeros: dict[tuple[int, int], bytes] = {}
        self.request = proto.encode(proto.Request())
        self.transport: asyncio.Transport  # set by connection_made, before any other callback

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(asyncio.Transport, transport)  # a TCP connection's transport
        self.transport.write(proto.encode(proto.Hello(b"", self.name)))

    def data_received(self, data: bytes) -> None:
        self.buf += data
        out = []
        while len(self.buf) >= proto.HEADER_SIZE:
            _, _, kind, length = proto.HEADER.unpack_from(self.buf)
            end = proto.HEADER_SIZE + length
            if len(self.buf) < end:
                break
            if kind == proto.MsgType.TASK:
                tid, _, _, w, h, _, _ = self._TASK.unpack_from(self.buf, proto.HEADER_SIZE)
                body = self.zeros.get((w, h))
                if body is None:
                    body = self.zeros[(w, h)] = bytes(w * h * 24)
                payload = struct.pack(">3I", tid, w, h) + body
                out += [proto.HEADER.pack(proto.MAGIC, proto.VERSION, proto.MsgType.RESULT, len(payload)),
                        payload, self.request]
            elif kind == proto.MsgType.JOB:
                out += [self.request, self.request]
            elif kind == proto.MsgType.WAIT:
                asyncio.get_running_loop().call_later(0.5, self.transport.write, self.request)
            elif kind in (proto.MsgType.DONE, proto.MsgType.ERROR):
                self.transport.close()
            del self.buf[:end]
        if out:
            self.transport.write(b"".join(out))

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.closed.done():
            self.closed.set_result(None)


async def _fake_consumers(host: str, port: int, n: int) -> None:
    loop = asyncio.get_running_loop()
    closed = [loop.create_future() for _ in range(n)]
    for i, fut in enumerate(closed):
        await loop.create_connection(functools.partial(_FakeConsumer, f"fake{i}", fut), host, port)
    await asyncio.gather(*closed)


def bench_producer(quick: bool) -> dict:
    sc = scene_mod.load(scene_mod.bundled("spheres"), width=KERNEL_SIZE[0], height=KERNEL_SIZE[1],
                        spp=150 if quick else 400, chunk=1)
    cmd = ["-m", "renderer.bench", "fake", "127.0.0.1:PORT", str(FAKE_CONSUMERS)]
    res = _run_job(sc, [cmd])
    return {"scene": "spheres", "tile": sc.tile, "tasks": res["tasks"], "fake_consumers": FAKE_CONSUMERS,
            "tasks_per_second": round(res["tasks"] / res["seconds"])}


# -- report -----------------------------------------------------------------------------------
def run(quick: bool = False) -> dict:
    kernel = bench_kernel(quick)
    dist = bench_distribution(quick)
    prod = bench_producer(quick)
    return {"machine": {"cpus": os.cpu_count(), "python": sys.version.split()[0],
                        "load_average_1m": round(os.getloadavg()[0], 2)},
            "kernel": kernel, "distribution": dist, "producer": prod,
            "targets": TARGETS,
            "met": {"kernel": kernel["bvh_samples_per_second_per_core"] >= TARGETS["kernel_samples_per_second_per_core"],
                    "distribution": dist["efficiency"] >= TARGETS["distribution_efficiency"],
                    "producer": prod["tasks_per_second"] >= TARGETS["producer_tasks_per_second"]}}


def table(r: dict) -> str:
    k, d, p, met = r["kernel"], r["distribution"], r["producer"], r["met"]
    ok = {True: "ok", False: "BELOW TARGET"}
    rows = [
        ("kernel, BVH (samples/s/core)", f"{k['bvh_samples_per_second_per_core']:,}", ">= 500,000", ok[met["kernel"]]),
        ("  per CPU second", f"{k['bvh_samples_per_cpu_second']:,}", "", ""),
        ("kernel, brute force (samples/s/core)", f"{k['brute_force_samples_per_second_per_core']:,}", "", ""),
        ("  per CPU second", f"{k['brute_force_samples_per_cpu_second']:,}", "", ""),
        ("BVH speed-up", f"{k['bvh_speedup']}x", "", ""),
        ("1 consumer (samples/s)", f"{d['one_consumer_samples_per_second']:,}", "", ""),
        ("2 consumers (samples/s)", f"{d['two_consumers_samples_per_second']:,}", "", ""),
        ("distribution efficiency", f"{d['efficiency']:.3f} (end to end {d['efficiency_end_to_end']:.3f})",
         ">= 0.9", ok[met["distribution"]]),
        ("  per consumer CPU second", f"{d['efficiency_per_cpu_second']:.3f}", "", ""),
        ("  CPU share per consumer, 1 / 2", f"{d['consumer_cpu_share_one']:.2f} / {d['consumer_cpu_share_two']:.2f}",
         "", ""),
        ("producer capacity (tasks/s)", f"{p['tasks_per_second']:,}", ">= 5,000", ok[met["producer"]]),
    ]
    w = [max(len(row[i]) for row in rows) for i in range(4)]
    head = (f"spheres.yaml {k['width']}x{k['height']}, max depth {k['max_depth']}, {k['spheres']} spheres; "
            f"distribution: spp {d['spp']}, tile {d['tile']}, {d['chunk']} samples/task, {d['tasks']} tasks")
    head += f"\n{r['machine']['cpus']} CPUs, load average {r['machine']['load_average_1m']} (other work skews these)"
    lines = [head] + ["  ".join(c.ljust(w[i]) for i, c in enumerate(row)).rstrip() for row in rows]
    return "\n".join(lines)


def main(as_json: bool = False, quick: bool = False) -> int:
    logging.getLogger("renderer.producer").setLevel(logging.WARNING)
    r = run(quick)
    print(json.dumps(r, indent=2) if as_json else table(r))
    return 0


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "fake":
        host, _, port = sys.argv[2].rpartition(":")
        asyncio.run(_fake_consumers(host, int(port), int(sys.argv[3])))
    else:
        sys.exit(main(as_json="--json" in sys.argv, quick="--quick" in sys.argv))
