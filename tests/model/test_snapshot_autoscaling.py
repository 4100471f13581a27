"""`snapshot --json`'s autoscaling section: the node groups and the pending pods' waits, against its schema."""

from __future__ import annotations

import json

import jsonschema
from autoscaling_builders import NOW, fixture, node, of_kind, pod

from kubeview.model.autoscaling.store import CA_STATUS, KARPENTER_NODECLAIM, KARPENTER_NODEPOOL
from kubeview.model.cluster import ClusterModel
from kubeview.model.events import Listed, Scope
from kubeview.snapshot.document import SNAPSHOT_SCHEMA, build_snapshot, snapshot_json
from kubeview.snapshot.schema import validate


def model() -> ClusterModel:
    m = ClusterModel()
    m.apply(Listed("Node", [node(f"g{i}", {"kwok-nodegroup": "gpu-pool", "pool": "gpu"}) for i in range(6)]
                   + [node(f"k{i}", {"karpenter.sh/nodepool": "gpu"}) for i in range(6)]))
    m.apply(Listed("Pod", [pod("batch-0", gpus=8, selector={"pool": "gpu"}), pod("train-0", gpus=8),
                           pod("train-1", gpus=8), pod("quiet"), pod("running", node_name="g0")]))
    m.apply(Listed("Event", fixture("events.yaml")))
    m.apply(Listed(CA_STATUS, fixture("ca-status-yaml.yaml")))
    m.apply(Listed(KARPENTER_NODEPOOL, of_kind("karpenter.yaml", "NodePool")))
    m.apply(Listed(KARPENTER_NODECLAIM, of_kind("karpenter.yaml", "NodeClaim")))
    return m


def test_the_section_and_its_schema() -> None:
    doc = build_snapshot(model(), NOW)
    assert validate(doc, SNAPSHOT_SCHEMA) == []
    jsonschema.validate(doc, SNAPSHOT_SCHEMA)
    a = doc["autoscaling"]
    assert a["pending"] == {"room": 1, "nodes": 2, "never": 1}
    assert a["unavailable"] is None and a["problems"] == []
    groups = {(g["autoscaler"], g["name"]): g for g in a["groups"]}
    gpu = groups[("cluster-autoscaler", "gpu-pool")]
    assert (gpu["state"], gpu["words"], gpu["size"], gpu["maxSize"], gpu["canAdd"], gpu["gpus"]) == (
        "scaling", "node group gpu-pool scaling 6 → 38 (in progress, 2 min)", 6, 38, 0, 48)
    assert gpu["scaleUp"] == {"from": 6, "to": 38, "since": "2026-11-22T10:03:00Z"}
    assert gpu["nodes"] == [f"g{i}" for i in range(6)] and gpu["waitingPods"] == 1
    pool = groups[("karpenter", "gpu")]
    assert pool["limits"][1] == {"resource": "nvidia.com/gpu", "used": 48, "limit": 48, "reached": True}
    assert [c["stage"] for c in pool["nodeClaims"]] == ["ready", "launching", "launching"]
    assert pool["nodeClaims"][1]["failure"].startswith("creating instance, insufficient capacity")
    assert pool["waitingPods"] == 2  # train-0 (at its limit) and train-1 (nominated to its launching claim)
    waits = {w["name"]: w for w in a["waits"]}
    assert set(waits) == {"batch-0", "train-0", "train-1"}
    assert waits["train-0"] == {
        "namespace": "default", "name": "train-0", "state": "never",
        "words": "NodePool gpu at its limit nvidia.com/gpu 48/48", "group": {"autoscaler": "karpenter", "name": "gpu"},
        "detail": "Failed to schedule pod, all available instance types exceed limits for nodepool (NodePool=gpu)",
        "since": "2026-11-22T10:04:40Z"}


def test_the_fast_json_says_the_same() -> None:
    m = model()
    assert json.loads(snapshot_json(m, NOW))["autoscaling"] == build_snapshot(m, NOW)["autoscaling"]


def test_refused_kinds_are_one_line() -> None:
    m = ClusterModel()
    m.apply(Scope("t", unavailable={CA_STATUS: "Listing configmaps in namespace kube-system was forbidden (403)"}))
    a = build_snapshot(m, NOW)["autoscaling"]
    assert a["unavailable"] == ("node groups are not shown: Listing configmaps in namespace kube-system was "
                                "forbidden (403)")
    assert a["groups"] == [] and a["waits"] == []
