"""The snapshot document: validates against its own schema, numbers as the model has them, null usage."""

from __future__ import annotations

import copy
import json

import pytest
from kubeapi import fixtures

from kubeview.model.cluster import ClusterModel
from kubeview.model.events import Listed
from kubeview.model.usage import NodeUsage, PodUsage, UsageUpdate
from kubeview.snapshot.document import SCHEMA_VERSION, SNAPSHOT_SCHEMA, build_snapshot, snapshot_json
from kubeview.snapshot.schema import validate


def model() -> ClusterModel:
    m = ClusterModel("recorded")
    for kind, name in (("Node", "nodes.json"), ("Pod", "pods-list.json"), ("ReplicaSet", "replicaset-list.json")):
        m.apply(Listed(kind, fixtures.load(name)["items"]))
    return m


def test_document_validates_and_carries_the_hand_checked_numbers() -> None:
    doc = json.loads(json.dumps(build_snapshot(model(), now=0.0)))
    assert validate(doc, SNAPSHOT_SCHEMA) == []
    assert doc["schemaVersion"] == SCHEMA_VERSION and doc["generatedAt"] == "1970-01-01T00:00:00Z"
    assert doc["units"]["cpu"] == "millicores" and doc["units"]["nvidia.com/gpu"] == "count"
    nodes = {n["name"]: n for n in doc["nodes"]}
    gpu1 = nodes["gpu-node-1"]
    assert gpu1["resources"]["nvidia.com/gpu"] == {"capacity": 2, "allocatable": 2, "requested": 1, "limits": 1,
                                                   "free": 1, "usage": None}
    assert gpu1["resources"]["cpu"]["requested"] == 100 and gpu1["podCount"] == 1 and gpu1["gpuLargestFit"] == 1
    assert gpu1["gpuUtilization"] is None and gpu1["taints"] == [] and gpu1["conditions"]["Ready"] == "True"
    pods = {p["name"]: p for p in doc["pods"]}
    assert pods["gpu-c"]["node"] is None and pods["gpu-c"]["pendingReason"].startswith("0/5 nodes are available")
    assert pods["gpu-a"]["pendingReason"] is None and pods["gpu-a"]["usage"] is None
    assert pods["consumer-2tg9b"]["owner"] == {"kind": "ReplicaSet", "name": "consumer"}
    assert doc["workloads"] == [{"kind": "ReplicaSet", "namespace": "default", "name": "consumer", "desired": 3,
                                 "ready": 3, "current": 3, "available": 3}]
    frag = doc["fragmentation"]
    assert frag["freeTotal"] == 2 and frag["sizes"][1] == {"size": 2, "placeable": 0, "ideal": 1, "stranded": 1,
                                                "fitsANode": True}
    assert doc["cluster"]["totals"]["nvidia.com/gpu"]["requested"] == 2
    assert doc["cluster"]["pendingPods"] == 1 and doc["cluster"]["synced"] == ["Node", "Pod", "ReplicaSet"]


def test_usage_sits_beside_requests_and_missing_is_null() -> None:
    m = model()
    m.apply(UsageUpdate(nodes={"gpu-node-1": NodeUsage(cpu=1250.5, memory=None, gpu_util=(97.0, 3.5))},
                        pods={("default", "gpu-a"): PodUsage(cpu=990.0, memory=123456789)},
                        source="prometheus", at=60.0, window="5m"))
    doc = build_snapshot(m, now=0.0)
    assert validate(doc, SNAPSHOT_SCHEMA) == []
    nodes = {n["name"]: n for n in doc["nodes"]}
    assert nodes["gpu-node-1"]["resources"]["cpu"]["usage"] == 1250.5
    assert nodes["gpu-node-1"]["resources"]["memory"]["usage"] is None  # not measured: null, never 0
    assert nodes["gpu-node-1"]["gpuUtilization"] == [97.0, 3.5]
    assert nodes["cpu-node-1"]["resources"]["cpu"]["usage"] is None
    pods = {p["name"]: p for p in doc["pods"]}
    assert pods["gpu-a"]["usage"] == {"cpu": 990.0, "memory": 123456789, "gpuUtilization": None,
                                      "gpuMemoryUsed": None, "idleGpus": None}
    assert pods["gpu-b"]["usage"] is None
    assert doc["cluster"]["totals"]["cpu"]["usage"] == 1250.5 and doc["cluster"]["totals"]["memory"]["usage"] is None
    assert doc["cluster"]["usage"] == {"source": "prometheus", "at": "1970-01-01T00:01:00Z", "window": "5m",
                                       "error": None, "idleGpus": 0, "idlePods": 0, "unmeasuredGpuPods": 2,
                                       "idleThreshold": 5.0}


def test_allocated_gpus_below_five_percent_are_flagged_idle() -> None:
    m = model()  # gpu-a and gpu-b each hold 1 GPU
    m.apply(UsageUpdate(pods={("default", "gpu-a"): PodUsage(gpu_util=(2.0,), gpu_memory=3 * 2**20),
                              ("default", "gpu-b"): PodUsage(gpu_util=(60.0,))},
                        source="prometheus", at=60.0, window="5m"))
    doc = build_snapshot(m, now=0.0)
    assert validate(doc, SNAPSHOT_SCHEMA) == []
    pods = {p["name"]: p for p in doc["pods"]}
    assert (pods["gpu-a"]["usage"]["idleGpus"], pods["gpu-a"]["usage"]["gpuMemoryUsed"]) == (1, 3 * 2**20)
    assert pods["gpu-b"]["usage"]["idleGpus"] == 0
    usage = doc["cluster"]["usage"]
    assert (usage["idleGpus"], usage["idlePods"], usage["unmeasuredGpuPods"]) == (1, 1, 0)


def test_the_checker_catches_what_breaks_the_contract() -> None:
    doc = build_snapshot(model(), now=0.0)
    broken = copy.deepcopy(doc)
    del broken["nodes"][0]["podCount"]
    broken["pods"][0]["requests"]["cpu"] = "100m"
    broken["schemaVersion"] = SCHEMA_VERSION + 1
    errors = validate(broken, SNAPSHOT_SCHEMA)
    assert any("podCount" in e for e in errors)
    assert any("requests.cpu: expected integer" in e for e in errors)
    assert any("schemaVersion" in e for e in errors)


def test_jsonschema_agrees_when_installed() -> None:
    jsonschema = pytest.importorskip("jsonschema")
    jsonschema.Draft202012Validator.check_schema(SNAPSHOT_SCHEMA)
    jsonschema.validate(json.loads(json.dumps(build_snapshot(model()))), SNAPSHOT_SCHEMA)


def test_fast_json_equals_the_document() -> None:
    m = model()
    m.apply(UsageUpdate(pods={("default", "gpu-a"): PodUsage(cpu=1.5, memory=None, gpu_util=(50.0,))},
                        nodes={"gpu-node-2": NodeUsage(cpu=1250.5, memory=3 * 2**30, gpu_util=(97.0, 0.0))}))
    fast = snapshot_json(m, now=0.0)
    assert json.loads(fast) == json.loads(json.dumps(build_snapshot(m, now=0.0)))
    assert fast == json.dumps(build_snapshot(m, now=0.0), separators=(",", ":"))
