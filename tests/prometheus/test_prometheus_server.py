"""kubeview's Prometheus queries against a real Prometheus scraping real exporters (see conftest.py).

No mock anywhere: prometheus-api-client talks HTTP to the Prometheus binary, which scraped the
test exporter, the embedded local cluster's processes and a renderer producer.
"""

from __future__ import annotations

import threading
import time

import psutil
import pytest
from prometheus_api_client import PrometheusConnect

from kubeview.cluster.prometheus.queries import merge_queries
from kubeview.cluster.prometheus.source import PrometheusUsage, start_poller
from kubeview.model.cluster import ClusterModel
from kubeview.model.events import Listed
from kubeview.model.gpus.idle import find_idle
from kubeview.model.usage import UsageUpdate
from kubeview.snapshot.document import build_snapshot
from tests.prometheus.conftest import get_json, wait_for
from tests.prometheus.exporter import (
    EXPECTED_NODE_CPU,
    EXPECTED_NODE_MEMORY,
    EXPECTED_POD_CPU,
    EXPECTED_POD_MEMORY,
    GiB,
    MiB,
)

WINDOW = "6s"  # rate() divides by the whole window: Prometheus must hold more than 6 s of data


def node(name: str, gpus: int) -> dict:
    cap = {"cpu": "8", "memory": "32Gi", "pods": "110", **({"nvidia.com/gpu": str(gpus)} if gpus else {})}
    return {"metadata": {"name": name}, "status": {"capacity": cap, "allocatable": cap,
                                                   "conditions": [{"type": "Ready", "status": "True"}]}}


def pod(ns: str, name: str, node_name: str, gpus: int, cpu: str = "1") -> dict:
    req = {"cpu": cpu, "memory": "1Gi", **({"nvidia.com/gpu": str(gpus)} if gpus else {})}
    return {"metadata": {"namespace": ns, "name": name},
            "spec": {"nodeName": node_name, "containers": [{"name": "train", "resources": {"requests": req,
                                                                                           "limits": req}}]},
            "status": {"phase": "Running"}}


@pytest.fixture(scope="module")
def reading(prom):  # noqa: ANN001, ANN201
    usage = PrometheusUsage(prom.url, window=WINDOW)
    got = usage.read()
    usage.close()
    return got


def test_node_usage_matches_the_exported_series(reading) -> None:  # noqa: ANN001
    nodes = reading.update.nodes
    for name, cpu in EXPECTED_NODE_CPU.items():
        assert nodes[name].cpu == pytest.approx(cpu, rel=0.05), name
        assert nodes[name].memory == EXPECTED_NODE_MEMORY[name], name
    assert nodes["dgx-a"].gpu_util == (2.0, 60.0)
    assert nodes["dgx-b"].gpu_util == (3.0, 95.0)
    assert "dgx-b:9100" not in nodes  # an unrelabelled instance counts as its host


def test_pod_usage_sums_containers_and_skips_pod_cgroup_and_pause(reading) -> None:  # noqa: ANN001
    pods = reading.update.pods
    for key, cpu in EXPECTED_POD_CPU.items():
        assert pods[key].cpu == pytest.approx(cpu, rel=0.05), key
        assert pods[key].memory == EXPECTED_POD_MEMORY[key], key
    assert pods[("ml", "pair")].gpu_util == (3.0, 95.0)
    assert pods[("ml", "idle-trainer")].gpu_util == (2.0,)


def test_gpu_framebuffer_memory(reading) -> None:  # noqa: ANN001
    gpus = {(g.node, g.index): g for g in reading.gpus}
    a0 = gpus[("dgx-a", 0)]
    assert (a0.uuid, a0.util, a0.memory_used, a0.memory_free) == ("GPU-aaaa0000", 2.0, 1024 * MiB, 15360 * MiB)
    assert (a0.namespace, a0.pod, a0.container) == ("ml", "idle-trainer", "train")
    assert gpus[("dgx-b", 1)].memory_free == 384 * MiB


def test_snapshot_shows_usage_beside_requests_and_idle_gpus(reading) -> None:  # noqa: ANN001
    model = ClusterModel("test")
    model.apply(Listed("Node", [node("dgx-a", 2), node("dgx-b", 2), node("cpu-x", 0)]))
    model.apply(Listed("Pod", [
        pod("ml", "idle-trainer", "dgx-a", 1), pod("ml", "busy-trainer", "dgx-a", 1),
        pod("ml", "pair", "dgx-b", 2), pod("ml", "unmeasured", "cpu-x", 0), pod("ml", "ghost", "dgx-b", 1),
    ]))
    model.apply(reading.update)
    doc = build_snapshot(model)

    nodes = {n["name"]: n for n in doc["nodes"]}
    assert nodes["dgx-a"]["resources"]["cpu"]["requested"] == 2000
    assert nodes["dgx-a"]["resources"]["cpu"]["usage"] == pytest.approx(2500, rel=0.05)
    assert nodes["dgx-a"]["resources"]["memory"]["usage"] == 12 * GiB
    assert nodes["dgx-a"]["gpuUtilization"] == [2.0, 60.0]
    assert nodes["cpu-x"]["resources"]["cpu"]["usage"] is None  # not measured: null, never 0
    assert nodes["cpu-x"]["gpuUtilization"] is None
    pods = {(p["namespace"], p["name"]): p for p in doc["pods"]}
    assert pods[("ml", "busy-trainer")]["usage"]["cpu"] == pytest.approx(1000, rel=0.05)
    assert pods[("ml", "busy-trainer")]["usage"]["memory"] == 2 * GiB + 100 * MiB
    assert pods[("ml", "unmeasured")]["usage"] is None
    assert doc["cluster"]["usage"]["source"] == "prometheus"
    assert doc["cluster"]["usage"]["window"] == WINDOW
    assert doc["cluster"]["usage"]["error"] is None

    idle = find_idle(model.pods.values(), model.usage.pods)
    assert idle.pods[("ml", "idle-trainer")].idle == 1  # 2 % < 5 %
    assert idle.pods[("ml", "idle-trainer")].flag == "idle"
    assert idle.pods[("ml", "busy-trainer")].idle == 0  # 60 %
    assert idle.pods[("ml", "pair")].idle == 1  # 3 % and 95 %
    assert idle.pods[("ml", "ghost")].idle is None  # holds a GPU, DCGM says nothing: unknown
    assert ("ml", "unmeasured") not in idle.pods  # holds no GPU
    assert (idle.idle_gpus, idle.idle_pods, idle.unmeasured_pods, idle.allocated_gpus) == (2, 2, 1, 5)


def test_local_cluster_processes_read_back(prom, reading) -> None:  # noqa: ANN001
    where = {p["metadata"]["name"]: p["spec"]["nodeName"] for p in prom.local.pods()
             if p["metadata"]["name"] in ("spin", "hold")}
    pods, nodes = reading.update.pods, reading.update.nodes
    spin, hold = pods[("default", "spin")], pods[("default", "hold")]
    assert 50 < spin.cpu < 1300  # a busy loop: about a core on an idle machine, less on a loaded one
    assert hold.cpu < 150
    rss = psutil.Process(prom.local_pids["hold"]).memory_info().rss
    assert 200 * MiB <= hold.memory == pytest.approx(rss, rel=0.1)
    for node_name in set(where.values()):
        on = [pods[("default", n)] for n, at in where.items() if at == node_name]
        assert nodes[node_name].memory == sum(p.memory for p in on)  # same scrape, same processes
        assert nodes[node_name].cpu == pytest.approx(sum(p.cpu for p in on), rel=0.02, abs=5)
    idle_nodes = set(prom.local.model().nodes) - set(where.values())
    assert idle_nodes
    for name in idle_nodes:  # local nodes without processes: measured, and zero
        assert nodes[name].cpu == pytest.approx(0.0, abs=1e-6)
        assert nodes[name].memory == 0


def test_renderer_producer_metrics_match_its_status(prom) -> None:  # noqa: ANN001
    status = get_json(prom.producer_status)
    client = PrometheusConnect(prom.url)
    want = {"renderer_tasks_total": status["tasks"]["total"], "renderer_tasks_queued": status["tasks"]["queued"],
            "renderer_samples_total": status["samples_total"], "renderer_finished": int(status["finished"])}
    for metric, value in want.items():
        got = client.custom_query(f'{metric}{{job="renderer"}}')
        assert len(got) == 1 and float(got[0]["value"][1]) == value, metric


def test_bad_query_is_one_sentence_and_nothing_else_breaks(prom) -> None:  # noqa: ANN001
    bad = merge_queries({"queries": {"node_cpu": "sum(rate(node_cpu_seconds_total[$window])"}})
    usage = PrometheusUsage(prom.url, window=WINDOW, queries=bad)
    update = usage.poll()
    assert update.error is not None and update.error.startswith("Prometheus rejected the node_cpu query (")
    assert update.error.endswith(").") and "\n" not in update.error and "Traceback" not in update.error
    assert usage.status.state == "failed" and usage.status.detail == update.error
    model = ClusterModel()
    model.apply(UsageUpdate(nodes={}, pods={}, source="prometheus", at=1.0, window=WINDOW))
    model.apply(update)
    assert model.usage.error == update.error  # the header shows it; the figures stay as they were


def test_non_prometheus_servers_are_one_sentence(prom) -> None:  # noqa: ANN001
    producer = prom.producer_status.rsplit("/", 1)[0]
    err = PrometheusUsage(producer).poll().error
    assert err == f"{producer} is not a Prometheus server (HTTP 404 on /api/v1/query)."
    exporter = f"http://{prom.targets['test-exporter']}"
    err = PrometheusUsage(exporter).poll().error
    assert err == f"{exporter} did not answer like a Prometheus server (no JSON data on /api/v1/query)."


def test_poller_emits_updates_until_stopped(prom) -> None:  # noqa: ANN001
    got: list[UsageUpdate] = []
    lock = threading.Lock()

    def emit(u: UsageUpdate) -> None:
        with lock:
            got.append(u)

    usage = PrometheusUsage(prom.url, window=WINDOW)
    thread, stop = start_poller(usage, emit, interval=0.2)
    wait_for(lambda: len(got) >= 2, 20, "two polls")
    stop.set()
    thread.join(5)
    assert not thread.is_alive()
    assert all(u.error is None and u.source == "prometheus" for u in got)
    assert got[-1].at > got[0].at and usage.status.state == "live"
    n = len(got)
    time.sleep(0.5)
    assert len(got) == n
