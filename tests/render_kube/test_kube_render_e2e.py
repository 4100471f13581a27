"""A whole render through the test API server: server-side apply, progress and the image through the
service proxy (forwarded to a REAL producer with a REAL consumer), a scale, clean-up."""

from __future__ import annotations

import http.client
import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from kubernetes import client

from kubeview.render.kube import KubeRenderJob
from kubeview.render.local import RenderSettings
from tests.render_kube.conftest import NS
from tests.render_kube.renderapi import RenderKubeAPI, header, pod, pod_list

ROOT = Path(__file__).resolve().parents[2]
THREE = ROOT / "renderer" / "scenes" / "three-spheres.yaml"
PROXY = f"/api/v1/namespaces/{NS}/services/http:producer:status/proxy"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def get(port: int, path: str) -> bytes | None:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    try:
        conn.request("GET", path)
        resp = conn.getresponse()
        return resp.read() if resp.status == 200 else None
    except OSError:
        return None
    finally:
        conn.close()


def wait(pred, timeout: float, what: str) -> object:  # noqa: ANN001
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = pred()
        if value:
            return value
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")


@pytest.fixture
def procs(tmp_path: Path) -> Iterator[list[subprocess.Popen[bytes]]]:
    started: list[subprocess.Popen[bytes]] = []
    yield started
    for p in started:
        if p.poll() is None:
            p.kill()
        p.wait(10)


def spawn(procs: list[subprocess.Popen[bytes]], tmp_path: Path, name: str, *args: str) -> None:
    log = (tmp_path / f"{name}.log").open("wb")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    procs.append(subprocess.Popen([sys.executable, "-m", "renderer", *args], cwd=ROOT, env=env,
                                  stdout=log, stderr=subprocess.STDOUT))


@pytest.mark.slow
@pytest.mark.timeout(180)
def test_render_through_the_api_server(render_api: RenderKubeAPI, api_client: client.ApiClient, tmp_path: Path,
                                       procs: list[subprocess.Popen[bytes]]) -> None:
    listen, status = free_port(), free_port()
    spawn(procs, tmp_path, "producer", "producer", str(THREE), "--listen", f"127.0.0.1:{listen}",
          "--status", f"127.0.0.1:{status}", "-o", str(tmp_path / "producer.png"), "--serve-after-done")

    def producer_up() -> object:
        assert procs[0].poll() is None, (tmp_path / "producer.log").read_text()
        return get(status, "/status")

    wait(producer_up, 60, "the producer's /status")
    render_api.proxy_port = status
    render_api.add_scale("replicasets", NS, "consumer", 1)
    render_api.set_list(f"/api/v1/namespaces/{NS}/pods", pod_list(
        pod("producer-5f7c9-x2x4p", "producer"), pod("consumer-k8q2m", "consumer")))

    output = tmp_path / "render.png"
    settings = RenderSettings(scene=THREE, output=output, replicas=1, cpu="100m", namespace=NS)
    job = KubeRenderJob(api_client, settings)
    job.start()
    assert [r.path.rsplit("/", 2)[-2] for r in render_api.applies()] == \
        ["configmaps", "secrets", "services", "deployments", "replicasets"]

    first = job.poll()  # before any consumer: progress is read, nothing is done yet
    assert first.status is not None and first.status.samples_done == 0 and not first.finished
    (read,) = render_api.requests_to(f"{PROXY}/status", method="GET")
    assert header(read, "Authorization") == f"Bearer {render_api.token}"

    assert job.scale(2) == f"ReplicaSet {NS}/consumer scaled to 2 replicas."
    assert [r.json() for r in render_api.requests_to(
        f"/apis/apps/v1/namespaces/{NS}/replicasets/consumer/scale", method="PATCH")] == [{"spec": {"replicas": 2}}]
    spawn(procs, tmp_path, "consumer", "consumer", "--connect", f"127.0.0.1:{listen}")  # as the ReplicaSet would

    def finished() -> object:
        progress = job.poll()
        return progress if progress.finished else None

    progress = wait(finished, 120, "the render to finish")
    assert progress.status.samples_done == progress.status.samples_total  # type: ignore[attr-defined]
    assert len(render_api.requests_to(f"{PROXY}/status", method="GET")) >= 2
    assert render_api.requests_to(f"{PROXY}/image.png", method="GET")
    direct = get(status, "/image.png")
    assert direct is not None and direct.startswith(b"\x89PNG")
    assert output.read_bytes() == direct  # the image through the proxy is the producer's own
    assert json.loads(get(status, "/status") or b"{}")["finished"] is True
    # finished: consumers scaled to 0 so the ReplicaSet does not restart them
    assert render_api.scale_of("replicasets", NS, "consumer") == 0

    assert job.stop() == f"render: deleted its objects in {NS}"
    assert render_api.objects == {}
