"""The local cluster YAML: the bundled default loads, a bad file is one line naming file and field."""

from __future__ import annotations

from pathlib import Path

import pytest

from kubeview.cluster.local.config import ClusterFileError, default_allocatable, load_cluster, parse_cluster
from kubeview.cluster.source import SourceError


def test_bundled_default() -> None:
    cfg = load_cluster()
    assert [n.name for n in cfg.nodes] == ["cpu-node-1", "cpu-node-2", "cpu-node-3", "gpu-node-1", "gpu-node-2"]
    assert [n.control_plane for n in cfg.nodes] == [True, False, False, False, False]
    flannel = next(w for w in cfg.system if w.name == "kube-flannel-ds")
    assert (flannel.kind, flannel.requests) == ("DaemonSet", {"cpu": "100m", "memory": "50Mi"})
    coredns = next(w for w in cfg.system if w.name == "coredns")
    assert (coredns.replicas, coredns.requests) == (2, {"cpu": "100m", "memory": "70Mi"})


def test_allocatable_is_capacity_less_eviction_thresholds() -> None:
    alloc = default_allocatable({"cpu": "8", "memory": "16Gi", "ephemeral-storage": "100Gi"})
    assert alloc == {"cpu": "8", "memory": "16284Mi", "ephemeral-storage": str(100 * 2**30 - 10 * 2**30)}


@pytest.mark.parametrize(("text", "message"), [
    ("nodes: [", "c.yaml: line 1: not valid YAML"),
    ("nodes: []", "c.yaml: nodes: must be a non-empty list"),
    ("nodes: [{name: a, capacity: {cpu: 8}}]", "c.yaml: nodes[0].capacity.memory: missing"),
    ("nodes: [{name: a, capacity: {cpu: eight, memory: 1Gi}}]", "c.yaml: nodes[0].capacity.cpu: not a quantity"),
    ("nodes: [{name: a, capacity: {cpu: 8, memory: 1Gi}, taints: [{key: k, effect: Never}]}]",
     "c.yaml: nodes[0].taints[0].effect: must be one of NoSchedule"),
    ("nodes: [{name: a, capacity: {cpu: 8, memory: 1Gi}}, {name: a, capacity: {cpu: 8, memory: 1Gi}}]",
     "c.yaml: nodes[1].name: duplicate node 'a'"),
    ("nodes: [{name: a, capacity: {cpu: 8, memory: 1Gi}}]\nsystem: [{kind: Job, name: j}]",
     "c.yaml: system[0].kind: must be one of DaemonSet"),
])
def test_bad_cluster_file_is_one_line(text: str, message: str) -> None:
    with pytest.raises(ClusterFileError) as err:
        parse_cluster(text, "c.yaml")
    assert str(err.value).startswith(message)
    assert "\n" not in str(err.value)
    assert isinstance(err.value, SourceError)  # kubeview prints SourceErrors as one line


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(ClusterFileError, match="cannot read"):
        load_cluster(tmp_path / "nope.yaml")


def test_deeply_nested_cluster_file_is_one_line() -> None:
    """Issue 16 item 9: 25,000 levels ended in a RecursionError traceback."""
    with pytest.raises(ClusterFileError) as err:
        parse_cluster("nodes: " + "[" * 25_000 + "]" * 25_000, "c.yaml")
    assert str(err.value) == "c.yaml: line 1: nested more than 64 levels deep"
