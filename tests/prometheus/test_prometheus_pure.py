"""The pure parts: query config and overrides, results -> UsageUpdate, idle GPUs, error sentences.

These need no Prometheus server and always run.
"""

from __future__ import annotations

import argparse
import socket
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from kubeview.cluster.prometheus.queries import QUERY_NAMES, QueryConfigError, load_queries, merge_queries
from kubeview.cluster.prometheus.results import node_name, reading_from_results
from kubeview.cluster.prometheus.source import PrometheusError, PrometheusUsage
from kubeview.model.gpus.idle import find_idle
from kubeview.model.usage import PodUsage

QS = load_queries()


def sample(value: str, **labels: str) -> dict:
    return {"metric": labels, "value": [1700000000.0, value]}


def test_default_queries_render_with_the_window_and_labels() -> None:
    assert QS.render("node_cpu", "5m") == (
        'sum by (node, instance) (rate(node_cpu_seconds_total{mode!~"idle|iowait|steal"}[5m])) * 1000')
    assert 'container!="POD"' in QS.render("pod_cpu", "5m")
    assert "sum by (namespace, pod)" in QS.render("pod_memory", "1h")
    assert set(QS.queries) == set(QUERY_NAMES)


def test_override_file_replaces_only_what_it_names(tmp_path: Path) -> None:
    f = tmp_path / "q.yaml"
    f.write_text("labels:\n  gpu_pod: pod_name\n  gpu_namespace: pod_namespace\n  node: kubernetes_node\n"
                 "queries:\n  pod_memory: sum by ($pod) (my_rss)\n")
    qs = load_queries(f)
    assert qs.labels["gpu_pod"] == "pod_name" and qs.node_labels == ("kubernetes_node",)
    assert qs.render("pod_memory", "5m") == "sum by (pod) (my_rss)"
    assert qs.render("gpu_util", "5m") == QS.render("gpu_util", "5m")


@pytest.mark.parametrize(("content", "message"), [
    ("queries: {cpu: up}", "unknown query 'cpu'"),
    ("labels: {pod: 'not a label'}", "label pod must be a Prometheus label name"),
    ("- a list", "must be a mapping"),
    ("queries: {node_cpu: ''}", "query node_cpu must be a non-empty string"),
    ("queries: [", "is not valid YAML at line"),
])
def test_bad_override_files_are_one_sentence(tmp_path: Path, content: str, message: str) -> None:
    f = tmp_path / "q.yaml"
    f.write_text(content)
    with pytest.raises(QueryConfigError, match=message) as e:
        load_queries(f)
    assert "\n" not in str(e.value)


def test_missing_override_file_and_bad_window() -> None:
    with pytest.raises(QueryConfigError, match=r"cannot read --prometheus-queries /nonexistent\.yaml"):
        load_queries("/nonexistent.yaml")
    with pytest.raises(QueryConfigError, match="is not a Prometheus duration"):
        QS.render("node_cpu", "5 minutes")
    with pytest.raises(QueryConfigError, match="unknown or malformed placeholder"):
        merge_queries({"queries": {"node_cpu": "rate(x[$windw])"}}).render("node_cpu", "5m")


def test_node_name_prefers_node_label_and_strips_ports() -> None:
    labels = ("node", "instance")
    assert node_name({"node": "a", "instance": "10.0.0.1:9100"}, labels) == "a"
    assert node_name({"node": "", "instance": "b:9100"}, labels) == "b"
    assert node_name({"instance": "[fe80::1]:9100"}, labels) == "fe80::1"
    assert node_name({"instance": "c"}, labels) == "c"
    assert node_name({}, labels) is None


def test_results_fold_into_a_usage_update_with_none_for_missing() -> None:
    results = {
        "node_cpu": [sample("1500", node="n1"), sample("NaN", node="n2")],
        "node_memory": [sample("1073741824", instance="n1:9100")],
        "gpu_util": [sample("2", Hostname="n1", gpu="1", UUID="u1", namespace="ml", pod="p"),
                     sample("60", Hostname="n1", gpu="0", UUID="u0"),
                     sample("40", Hostname="n3", gpu="0", UUID="u3", namespace="ml", pod="q")],
        "gpu_memory_used": [sample("1048576", Hostname="n1", gpu="1", UUID="u1", namespace="ml", pod="p")],
        "pod_cpu": [sample("250", namespace="ml", pod="p"), sample("+Inf", namespace="ml", pod="r")],
        "pod_memory": [sample("1000", namespace="ml", pod="p")],
    }
    r = reading_from_results(results, QS, at=5.0, window="5m")
    u = r.update
    assert (u.source, u.at, u.window, u.replace, u.error) == ("prometheus", 5.0, "5m", True, None)
    assert u.nodes["n1"].cpu == 1500 and u.nodes["n1"].memory == 2**30
    assert u.nodes["n1"].gpu_util == (60.0, 2.0)  # by GPU index
    assert "n2" not in u.nodes  # NaN: not measured (the model shows "—"), never 0
    assert u.nodes["n3"].cpu is None and u.nodes["n3"].gpu_util == (40.0,)
    assert u.nodes["n1"].gpu_memory == 1048576 and u.nodes["n3"].gpu_memory is None  # FB_USED: n1's GPU 1 only
    assert u.pods[("ml", "p")] == PodUsage(cpu=250.0, memory=1000, gpu_util=(2.0,), gpu_memory=1048576)
    assert ("ml", "r") not in u.pods  # +Inf: not measured
    assert u.pods[("ml", "q")] == PodUsage(cpu=None, memory=None, gpu_util=(40.0,))
    g = {(g.node, g.index): g for g in r.gpus}
    assert g[("n1", 1)].memory_used == 2**20 and g[("n1", 1)].memory_free is None
    assert g[("n1", 0)].pod_key is None


def test_empty_results_are_an_empty_reading() -> None:
    u = reading_from_results({}, QS, at=1.0, window="5m").update
    assert u.nodes == {} and u.pods == {}


@dataclass
class FakePod:
    """A pod as model/gpus/idle.py reads it (PodView has these fields)."""

    namespace: str
    name: str
    node: str | None
    requests: dict[str, int] = field(default_factory=dict)
    phase: str = "Running"

    @property
    def counts_on_node(self) -> bool:
        return self.node is not None and self.phase not in ("Succeeded", "Failed")


def test_idle_gpus_at_2_percent_but_not_60() -> None:
    pods = [FakePod("ml", "idle", "n1", {"nvidia.com/gpu": 1}), FakePod("ml", "busy", "n1", {"nvidia.com/gpu": 1}),
            FakePod("ml", "pair", "n2", {"nvidia.com/gpu": 2}), FakePod("ml", "dark", "n2", {"nvidia.com/gpu": 1}),
            FakePod("ml", "cpu", "n2", {"cpu": 1000}), FakePod("ml", "done", "n2", {"nvidia.com/gpu": 1}, "Succeeded"),
            FakePod("ml", "pending", None, {"nvidia.com/gpu": 1})]
    usage = {("ml", "idle"): PodUsage(gpu_util=(2.0,)), ("ml", "busy"): PodUsage(gpu_util=(60.0,)),
             ("ml", "pair"): PodUsage(gpu_util=(4.9, 5.0)), ("ml", "dark"): PodUsage(cpu=10.0)}
    r = find_idle(pods, usage)
    assert set(r.pods) == {("ml", "idle"), ("ml", "busy"), ("ml", "pair"), ("ml", "dark")}
    assert [r.pods[("ml", n)].flag for n in ("idle", "busy", "pair", "dark")] == ["idle", "", "idle", "—"]
    assert r.pods[("ml", "pair")].idle == 1  # 4.9 % is idle, 5.0 % is not
    assert (r.idle_gpus, r.idle_pods, r.unmeasured_pods, r.allocated_gpus) == (2, 2, 1, 5)


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_unreachable_prometheus_is_one_sentence_and_fast() -> None:
    url = f"http://127.0.0.1:{_closed_port()}"
    usage = PrometheusUsage(url, window="5m")
    update = usage.poll()
    assert update.error == f"Prometheus at {url} is unreachable (connection refused)."
    assert update.nodes == {} and update.source == "prometheus"
    assert usage.status.state == "failed" and usage.status.detail == update.error
    with pytest.raises(PrometheusError, match="is unreachable"):
        usage.read()


def test_from_args(tmp_path: Path) -> None:
    def ns(**kw: object) -> argparse.Namespace:
        base = {"prometheus": "http://127.0.0.1:9", "prometheus_token_file": None, "prometheus_insecure": False,
                "prometheus_queries": None, "window": "5m"}
        return argparse.Namespace(**{**base, **kw})

    assert PrometheusUsage.from_args(ns(prometheus=None)) is None
    token = tmp_path / "token"
    token.write_text("s3cret\n")
    usage = PrometheusUsage.from_args(ns(prometheus_token_file=str(token), prometheus_insecure=True, window="1m"))
    assert usage is not None and usage.window == "1m"
    assert usage._client.headers == {"Authorization": "Bearer s3cret"} and usage._client._session.verify is False
    for kw, message in [({"prometheus_token_file": str(tmp_path / "none")}, "cannot read --prometheus-token-file"),
                        ({"window": "five"}, "is not a Prometheus duration"),
                        ({"prometheus": "localhost:9090"}, "must be an http:// or https:// URL"),
                        ({"prometheus_queries": str(tmp_path / "none.yaml")}, "cannot read --prometheus-queries")]:
        with pytest.raises(PrometheusError, match=message):
            PrometheusUsage.from_args(ns(**kw))
    token.write_text("  \n")
    with pytest.raises(PrometheusError, match="is empty"):
        PrometheusUsage.from_args(ns(prometheus_token_file=str(token)))
