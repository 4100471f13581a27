"""An unauthenticated client floods the extender on the real plane (issue #37 item 3).

Before the bound, 3,000 prioritize calls for made-up pods made the extender send 3,001 GETs to the
API server, and made-up node names cost a 0.5 s wait each (p50 4.0 s at concurrency 64). Here
`kubeview extender` runs as its ServiceAccount with `--api-lookup-rate RATE --api-lookup-burst BURST`
and `--scheduler-ignores nvidia.com/gpu` (so filter lists the pods of nodes it would refuse), and a
client sends FLOOD calls at CONCURRENCY: prioritize for made-up pods naming made-up nodes, filter
for made-up pods that fit nowhere, prioritize for made-up pods at a resourceVersion far ahead. The
kube-apiserver's own `apiserver_request_total` (GET and LIST on pods) must grow by at most
BURST + RATE x the flood's seconds (+ QUIET_MARGIN for what others read in that time, measured
beforehand), and by what the extender says it asked. Meanwhile a real Pending pod (held by a
scheduling gate, so the test plays kube-scheduler for it) that the extender's watch has shown (by
construction: `/status` says the watch passed its resourceVersion) is scored and predicted right.
"""

from __future__ import annotations

import http.client
import json
import threading
import time
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
from kubernetes import client

from kubeview.scheduling.protocol import host_scores

from .extender_run import ExtenderProc, extender_on_gpu_nodes, stop_and_clean
from .objects import api
from .plane import Plane
from .procs import wait_until

NAMESPACE = "hostile"
NODES = {"hostile-a": "2", "hostile-b": "4"}  # GPUs; one used on each by a resident pod
SELECT = {"kubeview.test/hostile": "yes"}
RATE, BURST = 5.0, 10.0  # the extender's lookup budget here (defaults 20/s, 40)
FLOOD, CONCURRENCY = 1500, 32
QUIET_SECONDS = 2.0
QUIET_MARGIN = 3
"""Pod GETs/LISTs others (kwok, controllers, the extender's watch: it LISTs only on a relist) may make
in a flood's time; measured over QUIET_SECONDS first (0 in every run here) and asserted below it."""
SLOW = 1.0
"""p95 seconds of a flood call: the extender's catch_up is 0.25 s and only a few calls wait at once
(wait_slots.py), so nothing queues behind made-up names (before the bound: p50 4.0 s)."""


def pod_reads(plane: Plane) -> int:
    """GET + LIST on pods the API server has served since it started (its /metrics)."""
    total = 0
    for line in plane.metrics().splitlines():
        if (line.startswith("apiserver_request_total{") and 'resource="pods"' in line
                and ('verb="GET"' in line or 'verb="LIST"' in line)
                and ('subresource="' not in line or 'subresource=""' in line)):
            total += int(float(line.rsplit(" ", 1)[1]))
    return total


def lookups_asked(ext: ExtenderProc) -> int:
    """The extender's own count of the API requests callers made it send (its /metrics)."""
    conn = http.client.HTTPConnection("127.0.0.1", ext.port, timeout=10)
    conn.request("GET", "/metrics")
    text = conn.getresponse().read().decode()
    conn.close()
    return sum(int(float(line.rsplit(" ", 1)[1])) for line in text.splitlines()
               if line.startswith('kubeview_extender_api_lookups_total{outcome="asked"}'))


def gpu_pod(name: str, gpus: int, node: str | None = None, gated: bool = False) -> client.V1Pod:
    res = {"nvidia.com/gpu": str(gpus), "cpu": "100m", "memory": "64Mi"}
    container = client.V1Container(name="train", image="registry.k8s.io/pause:3.10",
                                   resources=client.V1ResourceRequirements(requests=res, limits=res))
    gates = [client.V1PodSchedulingGate(name="kubeview.test/held")] if gated else None
    return client.V1Pod(metadata=client.V1ObjectMeta(name=name),
                        spec=client.V1PodSpec(containers=[container], node_name=node, node_selector=SELECT,
                                              termination_grace_period_seconds=0, scheduling_gates=gates))


@pytest.fixture(scope="module")
def core(plane: Plane) -> client.CoreV1Api:
    return client.CoreV1Api(api(plane.kubeconfig))


@pytest.fixture(scope="module")
def extender(plane: Plane, core: client.CoreV1Api, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ExtenderProc]:
    ext = extender_on_gpu_nodes(plane, core, NAMESPACE, NODES, SELECT, tmp_path_factory.mktemp("hostile"),
                                ("--scheduler-ignores", "nvidia.com/gpu",
                                 "--api-lookup-rate", f"{RATE:g}", "--api-lookup-burst", f"{BURST:g}"))
    for name in NODES:  # bound by name, no scheduler: a filter refusing this node lists its pods
        core.create_namespaced_pod(NAMESPACE, gpu_pod(f"resident-{name}", 1, node=name))
    yield ext
    stop_and_clean(ext, core, NAMESPACE, list(NODES))


def made_up(i: int) -> tuple[str, bytes]:
    """Call `i` of the flood: (path, body), each for a pod no one created."""
    pod = gpu_pod(f"made-up-{i}", 4 if i % 3 == 1 else 1)
    doc = client.ApiClient().sanitize_for_serialization(pod)
    doc["metadata"] |= {"namespace": NAMESPACE, "uid": str(uuid.uuid4())}
    names = list(NODES)
    if i % 3 == 0:
        names += [f"ghost-{i}-{k}" for k in range(3)]  # nodes no one added
    if i % 3 == 2:
        doc["metadata"]["resourceVersion"] = "999999999999"  # a version the watch will not reach
    return ("/filter" if i % 3 == 1 else "/prioritize"), json.dumps({"Pod": doc, "Nodes": None, "NodeNames": names}).encode()


class Caller:
    """One keep-alive connection per thread, as a client with a pool would hold."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.local = threading.local()

    def post(self, path: str, body: bytes) -> tuple[int, bytes, float]:
        conn = getattr(self.local, "conn", None)
        if conn is None:
            conn = self.local.conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        started = time.perf_counter()
        conn.request("POST", path, body, {"Content-Type": "application/json"})
        resp = conn.getresponse()
        data = resp.read()
        return resp.status, data, time.perf_counter() - started


def test_a_flood_of_made_up_calls_is_bounded_at_the_api_server(plane: Plane, core: client.CoreV1Api,
                                                                extender: ExtenderProc,
                                                                realk8s_counts: dict[str, str]) -> None:
    real = core.create_namespaced_pod(NAMESPACE, gpu_pod(f"real-{uuid.uuid4().hex[:6]}", 1, gated=True))
    real_doc = client.ApiClient().sanitize_for_serialization(real)
    real_body = json.dumps({"Pod": real_doc, "Nodes": None, "NodeNames": list(NODES)}).encode()
    rv = int(real.metadata.resource_version)
    wait_until(lambda: extender.status()["cluster"]["pod_resource_version"] >= rv, 30,
               "the extender's watch past the real pod's resourceVersion")  # the premise, by construction

    before = pod_reads(plane)
    time.sleep(QUIET_SECONDS)
    quiet = pod_reads(plane) - before
    assert quiet <= QUIET_MARGIN, f"{quiet} pod reads in {QUIET_SECONDS} s with nothing sent to the extender"

    caller = Caller(extender.port)
    calls = [made_up(i) for i in range(FLOOD)]
    done = threading.Event()
    real_replies: list[tuple[int, bytes, float]] = []

    def real_pod_meanwhile() -> None:  # kube-scheduler's call for a real pod, while the flood runs
        while not done.is_set() or len(real_replies) < 5:
            real_replies.append(caller.post("/prioritize", real_body))
            time.sleep(0.05)

    asked_before, reads_before = lookups_asked(extender), pod_reads(plane)
    started = time.monotonic()
    beside = threading.Thread(target=real_pod_meanwhile)
    beside.start()
    with ThreadPoolExecutor(CONCURRENCY) as pool:
        results = list(pool.map(lambda call: caller.post(*call), calls))
    elapsed = time.monotonic() - started
    done.set()
    beside.join(60)
    reads = pod_reads(plane) - reads_before
    asked = lookups_asked(extender) - asked_before

    assert all(code == 200 for code, _, _ in results), {code for code, _, _ in results}
    bound = BURST + RATE * elapsed
    assert asked <= bound, f"the extender asked {asked} times in {elapsed:.1f} s (bound {bound:.0f})"
    assert asked <= reads <= asked + QUIET_MARGIN, f"API server: {reads} pod reads, the extender says {asked}"
    assert reads <= bound + QUIET_MARGIN

    latency = {kind: np.array([r[2] for i, r in enumerate(results) if i % 3 == k])
               for k, kind in enumerate(("made-up nodes", "filter", "version ahead"))}
    p95 = {kind: float(np.percentile(v, 95)) for kind, v in latency.items()}
    assert all(v < SLOW for v in p95.values()), p95

    for code, data, _ in real_replies:  # pack: the real pod goes where it fills a node (hostile-a: 1 of 2 free)
        scores = host_scores(data, ["hostile-a", "hostile-b"])
        assert code == 200 and scores["hostile-a"] > scores["hostile-b"], scores
    assumed = [a for a in extender.status()["assumed"] if a["pod"] == f"{NAMESPACE}/{real.metadata.name}"]
    assert [(a["node"], a["kind"]) for a in assumed] == [("hostile-a", "predicted")], assumed
    real_p95 = float(np.percentile([r[2] for r in real_replies], 95))
    counters = extender.status()["counters"]
    summary = (f"{FLOOD} made-up calls at concurrency {CONCURRENCY} in {elapsed:.1f} s: {reads} pod GET/LIST at the "
               f"API server (bound {bound:.0f}; quiet {quiet}), p95 " + ", ".join(f"{k} {v * 1e3:.0f} ms" for k, v in p95.items())
               + f"; real pod p95 {real_p95 * 1e3:.0f} ms over {len(real_replies)} calls; refused lookups "
               f"{counters['api_lookups_refused']}, waits {counters['waits_refused']}")
    realk8s_counts["hostile flood"] = summary
    print(f"realk8s hostile flood: {summary}")
    core.delete_namespaced_pod(real.metadata.name, NAMESPACE, grace_period_seconds=0)
