"""`kubeview extender` as a process: the real kube source lists the test API server (recorded
fixtures), and kube-scheduler-shaped requests get answers from that state."""

from __future__ import annotations

import http.client
import json
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from builders import pod_obj

ROOT = Path(__file__).resolve().parents[2]


def _wait_for_url(proc: subprocess.Popen, timeout: float = 60) -> str:
    deadline = time.monotonic() + timeout
    seen = []
    while time.monotonic() < deadline:
        line = proc.stderr.readline()
        if not line:
            if proc.poll() is not None:
                break
            continue
        seen.append(line)
        match = re.search(r"extender on (http://\S+)", line)
        if match:
            return match.group(1)
    raise AssertionError("extender did not start:\n" + "".join(seen))


def _call(port: int, method: str, path: str, doc: object = None, headers: dict | None = None):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    conn.request(method, path, body=None if doc is None else json.dumps(doc), headers=headers or {})
    resp = conn.getresponse()
    data = resp.read()
    conn.close()
    return resp.status, data


@pytest.mark.slow
def test_extender_process_scores_from_the_watched_cluster(kube_api, tmp_path: Path) -> None:
    token_file = tmp_path / "token"
    token_file.write_text("tok\n")
    proc = subprocess.Popen(
        [sys.executable, "-m", "kubeview", "extender", "--listen", "127.0.0.1:0", "--kubeconfig",
         str(kube_api.kubeconfig), "--token-file", str(token_file), "--policy", "pack",
         "--scheduler-ignores", "nvidia.com/gpu"],  # the filter below refuses on GPUs only with it
        cwd=ROOT, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True,
    )
    try:
        port = int(_wait_for_url(proc).rsplit(":", 1)[1])
        deadline = time.monotonic() + 30
        while _call(port, "GET", "/readyz")[0] != 200:
            assert time.monotonic() < deadline, "never listed the cluster"
            time.sleep(0.1)
        names = ["gpu-node-1", "gpu-node-2"]
        # pods-list.json: gpu-a on gpu-node-1 and gpu-b on gpu-node-2, one GPU each
        status, data = _call(port, "POST", "/filter", {"Pod": pod_obj("big", gpu=2), "Nodes": None, "NodeNames": names})
        assert status == 200
        reply = json.loads(data)
        assert reply["NodeNames"] == []
        assert reply["FailedNodes"] == {n: "Insufficient nvidia.com/gpu" for n in names}
        status, data = _call(port, "POST", "/prioritize", {"Pod": pod_obj("one", gpu=1), "Nodes": None,
                                                            "NodeNames": names})
        assert sorted((h["Host"], h["Score"]) for h in json.loads(data)) == [("gpu-node-1", 10), ("gpu-node-2", 9)]  # a tie broken by name: nothing left to chance
        assert _call(port, "PUT", "/config", {"policy": "spread"})[0] == 401
        assert _call(port, "PUT", "/config", {"policy": "spread"}, {"Authorization": "Bearer tok"})[0] == 200
        # only nodes and pods are watched: the extender's RBAC grants nothing else
        paths = {r.path for r in kube_api.requests}
        # nodes and pods, the DRA group's discovery (this server does not serve it: nothing more), the
        # server's version (read once beside discovery: allowed to every authenticated user), and a GET
        # of "one", which prioritize named and the watch does not have (made up here: a 404, so nothing
        # is predicted for it)
        assert paths == {"/api/v1/nodes", "/api/v1/pods", "/apis/resource.k8s.io/v1/", "/version/",
                         "/api/v1/namespaces/default/pods/one"}, paths
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=15) == 0
        log = proc.stderr.read()
        assert "packing config changed by 127.0.0.1" in log and "'policy': 'spread'" in log
        assert "--scheduler-ignores nvidia.com/gpu: kube-scheduler leaves these to the filter verb" in log
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
