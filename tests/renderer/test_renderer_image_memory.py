"""Issue 16 item 10: ``/image.png`` is one cached encoding per progress step, not float64 copies
per request.  Four concurrent requests on a 2048x2048 render took 1.11 GB before."""

from __future__ import annotations

import threading
import time
import urllib.request
from pathlib import Path

from tests.renderer.testkit import THREE, Procs, free_port, get_status, wait_for

MIB = 1 << 20
BOUND_MIB = 64
"""Stated bound: extra peak RSS of the producer while four /image.png requests are served at
2048x2048 (its accumulator alone is 96 MiB; one uint8 image is 12 MiB; each old request was ~280 MiB)."""


def _kib(pid: int, field: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise AssertionError(field)


def test_four_concurrent_image_requests_stay_under_the_bound(procs: Procs, tmp_path: Path) -> None:
    port, status = free_port(), free_port()
    p = procs.start("producer", str(THREE), "--listen", f"127.0.0.1:{port}", "--status", f"127.0.0.1:{status}",
                    "-o", str(tmp_path / "out.png"), "--width", "2048", "--height", "2048", "--spp", "1",
                    "--tile", "64", log="producer.log")
    wait_for(lambda: get_status(status), 30, "producer status")
    time.sleep(0.3)
    before = _kib(p.pid, "VmRSS")
    bodies: list[bytes] = []
    errors: list[BaseException] = []

    def fetch() -> None:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{status}/image.png", timeout=60) as r:
                bodies.append(r.read())
        except BaseException as e:  # surfaced below
            errors.append(e)

    for _ in range(2):  # a second round is served from the cache
        threads = [threading.Thread(target=fetch) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(90)
    assert not errors, errors
    assert len(bodies) == 8 and len(set(bodies)) == 1 and bodies[0][:8] == b"\x89PNG\r\n\x1a\n"
    grew = (_kib(p.pid, "VmHWM") - before) * 1024
    assert grew < BOUND_MIB * MIB, f"peak RSS grew {grew / MIB:.0f} MiB serving /image.png (bound {BOUND_MIB} MiB)"
    assert p.poll() is None
