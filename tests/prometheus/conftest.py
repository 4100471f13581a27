"""One real Prometheus server per test session, scraping real exporters every second.

Targets: the test exporter (DCGM-, node-exporter- and cAdvisor-shaped series with known values),
the embedded local cluster's exporter (`local_metrics`, its pods are real processes) and a real
renderer producer's `/metrics`. Without the `prometheus` binary the server tests skip, except
under CI=true, where they fail: CI installs Debian's package (.ci/run).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import yaml

from tests.prometheus.exporter import start_test_exporter

ROOT = Path(__file__).resolve().parents[2]
SCENE = ROOT / "renderer" / "scenes" / "three-spheres.yaml"
BUSY = "import time\nwhile True:\n    sum(range(10000))\n"
SCRAPES = 9  # 1 s apart: more than the tests' 6 s window
HOLD = "import time\nblock = b'x' * (200 * 2**20)\ntime.sleep(3600)\n"  # 200 MiB resident


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def get_json(url: str, timeout: float = 5.0) -> dict:
    with urllib.request.urlopen(url, timeout=timeout) as r:
        return json.loads(r.read())


def wait_for(check: Callable[[], object], timeout: float, what: str, interval: float = 0.25) -> object:
    """Poll `check` until it returns something truthy (exceptions count as not yet); fail after `timeout`."""
    deadline, last = time.monotonic() + timeout, None
    while time.monotonic() < deadline:
        try:
            got = check()
            if got:
                return got
        except Exception as e:  # noqa: BLE001 - not ready yet
            last = e
        time.sleep(interval)
    pytest.fail(f"timed out after {timeout:g} s waiting for {what} (last error: {last})")


@dataclass
class PromServer:
    url: str
    targets: dict[str, str]  # job -> scrape address
    producer_status: str | None = None  # the producer's /status URL, when it runs
    local: object = None  # the LocalSource
    local_pids: dict[str, int] = field(default_factory=dict)

    def query(self, promql: str) -> list[dict]:
        doc = get_json(f"{self.url}/api/v1/query?" + urllib.parse.urlencode({"query": promql}))
        return doc["data"]["result"]


def _require_binary() -> str:
    binary = shutil.which("prometheus")
    if binary is None:
        if os.environ.get("CI"):
            pytest.fail("CI=true but the `prometheus` binary is missing: .ci/run installs Debian's package")
        pytest.skip("the `prometheus` binary is not installed (apt-get install prometheus); CI runs these")
    return binary


def _start_producer(tmp: Path) -> tuple[subprocess.Popen, str]:
    status = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "renderer", "producer", str(SCENE), "--listen", f"127.0.0.1:{free_port()}",
         "--status", f"127.0.0.1:{status}", "--serve-after-done", "-o", str(tmp / "render.png")],
        cwd=ROOT, stdout=subprocess.DEVNULL, stderr=open(tmp / "producer.log", "wb"),  # noqa: SIM115
    )
    url = f"http://127.0.0.1:{status}/status"
    wait_for(lambda: proc.poll() is None and get_json(url, 1.0), 30, "the renderer producer's /status")
    return proc, f"127.0.0.1:{status}"


def _start_local(tmp: Path):  # noqa: ANN202
    from kubeview.cluster.local.metrics import start_local_metrics
    from kubeview.cluster.local.source import LocalSource

    source = LocalSource()
    for name, code, cpu in (("spin", BUSY, "1000m"), ("hold", HOLD, "100m")):
        source.create_pod({"metadata": {"name": name, "namespace": "default"}, "spec": {"containers": [{
            "name": "main", "command": ["python", "-c", code],
            "resources": {"requests": {"cpu": cpu, "memory": "300Mi"}}}]}})
    pids = wait_for(lambda: len(source.pids()) == 2 and source.pids(), 30, "the local pods' processes")
    server = start_local_metrics(source)
    return source, server, {name: pid for (_, name), pid in pids.items()}


@pytest.fixture(scope="session")
def prom(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PromServer]:
    """A started Prometheus (1 s scrapes) whose targets are all up and scraped SCRAPES times."""
    binary = _require_binary()
    tmp = tmp_path_factory.mktemp("prometheus")
    cleanup: list[Callable[[], object]] = []
    try:
        exporter, exporter_port = start_test_exporter()
        cleanup.append(exporter.shutdown)
        source, local_server, local_pids = _start_local(tmp)
        cleanup += [source.close, local_server.close]
        producer, producer_addr = _start_producer(tmp)
        cleanup.append(lambda: (producer.kill(), producer.wait()))

        targets = {"test-exporter": f"127.0.0.1:{exporter_port}",
                   "local-cluster": f"127.0.0.1:{local_server.port}", "renderer": producer_addr}
        config = {
            "global": {"scrape_interval": "1s", "scrape_timeout": "1s", "evaluation_interval": "1s"},
            "scrape_configs": [
                {"job_name": job, "static_configs": [{"targets": [addr]}],
                 **({"honor_labels": True} if job == "test-exporter" else {})}
                for job, addr in targets.items()
            ],
        }
        (tmp / "prometheus.yml").write_text(yaml.safe_dump(config))
        port = free_port()
        proc = subprocess.Popen(
            [binary, f"--config.file={tmp / 'prometheus.yml'}", f"--storage.tsdb.path={tmp / 'data'}",
             f"--web.listen-address=127.0.0.1:{port}", "--log.level=warn"],
            stdout=subprocess.DEVNULL, stderr=open(tmp / "prometheus.log", "wb"),  # noqa: SIM115
        )
        cleanup.append(lambda: (proc.terminate(), proc.wait(10)))
        url = f"http://127.0.0.1:{port}"
        wait_for(lambda: urllib.request.urlopen(f"{url}/-/ready", timeout=1).status == 200, 30, "Prometheus /-/ready")
        server = PromServer(url, targets, f"http://{producer_addr}/status", source, local_pids)

        def all_scraped() -> bool:
            active = get_json(f"{url}/api/v1/targets")["data"]["activeTargets"]
            if len(active) != len(targets) or any(t["health"] != "up" for t in active):
                return False
            # rate() over a window divides by the whole window: the tests' 6 s must be covered
            got = server.query("count_over_time(up[1m])")
            return len(got) == len(targets) and all(float(s["value"][1]) >= SCRAPES for s in got)

        wait_for(all_scraped, 60, f"every target up and scraped {SCRAPES} times")
        yield server
    finally:
        for fn in reversed(cleanup):
            with contextlib.suppress(Exception):  # teardown goes on
                fn()
