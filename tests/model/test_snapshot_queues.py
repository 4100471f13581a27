"""`queues` in the snapshot document: Kueue's objects (shaped as v0.17.0 writes them, test_queues.py)
validate against the schema, with Kueue's words and the ClusterQueue's own figures; `-n` keeps that
namespace's LocalQueues and Workloads."""

from __future__ import annotations

import json

from test_queues import team

from kubeview.snapshot.document import SNAPSHOT_SCHEMA, build_snapshot, snapshot_json
from kubeview.snapshot.schema import validate


def test_queues_validate_and_carry_kueues_words_and_figures() -> None:
    model = team()
    doc = build_snapshot(model, now=0)
    assert validate(doc, SNAPSHOT_SCHEMA) == []
    queues = doc["queues"]
    assert queues["unavailable"] is None and queues["held"] == 2
    [cq] = queues["clusterQueues"]
    gpu = next(r for r in cq["resources"] if r["resource"] == "nvidia.com/gpu")
    assert (gpu["flavor"], gpu["nominal"], gpu["reserved"], gpu["used"], gpu["borrowingLimit"]) == \
        ("gpu-a100", 4, 4, 4, None)
    assert cq["waiting"] == ["team-b/job-late-jkl78", "team-a/job-big-ghi56"]
    assert cq["localQueues"] == ["team-a/team-q", "team-b/team-q"] and cq["pendingWorkloads"] == 1
    big = next(w for w in queues["workloads"] if w["name"] == "job-big-ghi56")
    assert (big["state"], big["reason"], big["clusterQueue"], big["position"]) == \
        ("pending", "Pending", "team-cq", None)
    assert big["message"].startswith("couldn't assign flavors to pod set main: insufficient unused quota")
    assert big["requests"] == {"cpu": 2000, "nvidia.com/gpu": 2}
    assert json.loads(snapshot_json(model, now=0))["queues"] == queues


def test_one_namespace_keeps_its_queues_and_workloads() -> None:
    model = team()
    model.display_namespace = "team-b"
    queues = build_snapshot(model, now=0)["queues"]
    assert [q["namespace"] for q in queues["localQueues"]] == ["team-b"]
    assert {w["namespace"] for w in queues["workloads"]} == {"team-b"} and queues["held"] == 1
    assert len(queues["clusterQueues"]) == 1  # cluster-scoped: always shown
