"""Kueue's objects as the real Kueue v0.17.0 wrote them (tests/fixtures/kueue/: recordings of
tests/realk8s/test_kueue_real.py, see its README) through the model, the snapshot's `queues`, the queue
table and `queue_refusal`: three ClusterQueues of 4 GPUs nominal, team A's two 2-GPU Jobs admitted and
team B's held ("held-*"), then one of A's finished and B's admitted ("released-*")."""

from __future__ import annotations

import json
from pathlib import Path

from kubeview.model.cluster import ClusterModel
from kubeview.model.events import Listed
from kubeview.model.queues.admit import queue_refusal
from kubeview.snapshot.document import SNAPSHOT_SCHEMA, build_snapshot
from kubeview.snapshot.schema import validate
from kubeview.tui.rows import queues as rows

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "kueue"
KINDS = {"clusterqueues": "kueue.ClusterQueue", "localqueues": "kueue.LocalQueue", "workloads": "kueue.Workload"}
GPU = "nvidia.com/gpu"


def recorded(stage: str) -> tuple[ClusterModel, dict[str, list[dict]]]:
    model, written = ClusterModel(), {}
    for plural, kind in KINDS.items():
        written[plural] = json.loads((FIXTURES / f"{stage}-{plural}.json").read_text())
        model.apply(Listed(kind, written[plural]))
    return model, written


def test_held_workloads_carry_kueues_own_reason_and_message() -> None:
    model, written = recorded("held")
    queues = model.queues
    pending = [w for w in queues.workloads() if w.waiting]
    assert pending and all(w.reason == "Pending" for w in pending)
    assert all(w.message.startswith("couldn't assign flavors to pod set main: insufficient unused quota for "
                                    f"{GPU} in flavor gpu") for w in pending), [w.message for w in pending]
    assert all(queues.cluster_queue_of(w) is not None and w.cluster_queue is None for w in pending)
    admitted = [w for w in queues.workloads() if w.state == "admitted"]
    assert admitted and all(w.cluster_queue and w.flavors.get(GPU) == "gpu" for w in admitted)
    # every figure is the ClusterQueue's status as written
    for obj in written["clusterqueues"]:
        cq = queues.cluster_queue(obj["metadata"]["name"])
        assert cq is not None and (cq.pending, cq.admitted) == (obj["status"]["pendingWorkloads"],
                                                                obj["status"]["admittedWorkloads"])
        assert cq.total(GPU) == (4, 4) and [w.name for w in queues.waiting(cq.name)]
    assert sum(w.pods for w in queues.held()) == len(pending)  # one pod each


def test_the_views_of_the_recording() -> None:
    model, _ = recorded("held")
    doc = build_snapshot(model, now=0)
    assert validate(doc, SNAPSHOT_SCHEMA) == [] and doc["queues"]["held"] == len(model.queues.held())
    data = rows.build(model.queues)
    assert len(data.queues) == 3  # gpus-0..gpus-2, side by side
    for row in data.queues.values():
        assert str(rows.use_cell(row, "gpu", 20)).endswith("4/4")
        assert str(rows.note(row)).split(": ", 1)[1].startswith("Pending — couldn't assign flavors")
    local = model.queues.local_queues()[0]
    refusal = queue_refusal(model.queues, local.namespace, local.name, {GPU: 1})
    assert refusal is not None and refusal.text == f"ClusterQueue {local.cluster_queue}'s nominal {GPU} 4 is used 4/4"


def test_released_the_held_workload_is_admitted() -> None:
    model, _ = recorded("released")
    queues = model.queues
    assert not queues.held()
    assert any(w.state == "finished" for w in queues.workloads())
    assert all(w.reason == "Admitted" and w.message == "The workload is admitted"
               for w in queues.workloads() if w.state == "admitted")
