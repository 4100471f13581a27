"""Kueue's queue positions (model/queues/positions.py) read from the real Kueue's visibility API answers
(tests/fixtures/kueue/visibility-*.json, recorded by tests/realk8s/test_kueue_positions_real.py), through the
model's queue store, the snapshot's workload documents and the queue table's words."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kubeview.model.cluster import ClusterModel
from kubeview.model.events import Listed, QueuePositions
from kubeview.model.queues.positions import (
    NOT_SERVED,
    Position,
    Positions,
    ordinal,
    pending_queues,
    read_summary,
)
from kubeview.snapshot.queues import queues_doc
from kubeview.tui.rows import queues as rows

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "kueue"
CQ = "positions"


def recorded(stage: str) -> dict:
    return json.loads((FIXTURES / f"visibility-{stage}.json").read_text())


def items(doc: dict) -> dict[tuple[str, str], tuple[str, int, int]]:
    """What the answer says, read here apart from kubeview's reader."""
    return {(i["metadata"]["namespace"], i["metadata"]["name"]): (i["localQueueName"], i["positionInClusterQueue"],
                                                                  i["positionInLocalQueue"]) for i in doc["items"]}


@pytest.mark.parametrize("stage", ["held", "moved"])
def test_read_summary_gives_each_pending_workload_kueues_places(stage: str) -> None:
    doc = recorded(stage)
    got = read_summary(CQ, doc)
    assert {k: (p.local_queue, p.in_cluster_queue, p.in_local_queue) for k, p in got.items()} == items(doc)
    assert all(p.cluster_queue == CQ for p in got.values())


def test_a_place_in_words_counts_from_one_as_people_do() -> None:
    assert [ordinal(n) for n in (1, 2, 3, 4, 11, 12, 13, 21, 22, 102, 111)] == \
        ["1st", "2nd", "3rd", "4th", "11th", "12th", "13th", "21st", "22nd", "102nd", "111th"]
    assert Position("cq-gpu", 2, "team-a", 1).words() == "3rd in cq-gpu (2nd in team-a)"
    assert Position("cq-gpu", 0).words() == "1st in cq-gpu"  # v1beta1's head: no LocalQueue place


@pytest.mark.parametrize("doc", [{"kind": "Status", "status": "Failure", "code": 404}, [],
                                 {"items": [{"metadata": {"name": "w"}, "positionInClusterQueue": "1"}]}])
def test_anything_but_a_summary_is_refused_not_guessed(doc: object) -> None:
    with pytest.raises(ValueError):
        read_summary(CQ, doc)


def test_only_queues_whose_status_counts_pending_workloads_are_asked() -> None:
    objects = {"a": {"status": {"pendingWorkloads": 2}}, "b": {"status": {"pendingWorkloads": 0}}, "c": {},
               "d": {"status": {"pendingWorkloads": "3"}}, "e": {"status": {"pendingWorkloads": 1}}}
    assert pending_queues(objects) == ["a", "e"]


def _model(stage: str) -> ClusterModel:
    """The recorded answer's pending Workloads as Kueue's objects (a LocalQueue each team, the ClusterQueue),
    created in the order opposite to Kueue's positions, so kubeview's own ordering would disagree."""
    doc = recorded(stage)
    found = items(doc)
    later_first = sorted(found, key=lambda k: -found[k][1])
    workloads = [{"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "Workload",
                  "metadata": {"namespace": ns, "name": name, "resourceVersion": "5",
                               "creationTimestamp": f"2026-11-29T19:00:0{i}Z"},
                  "spec": {"queueName": found[(ns, name)][0], "podSets": [{"name": "main", "count": 1, "template": {
                      "spec": {"containers": [{"name": "c", "resources": {"requests": {"nvidia.com/gpu": "2"}}}]}}}]},
                  "status": {"conditions": [{"type": "QuotaReserved", "status": "False", "reason": "Pending",
                                             "message": "couldn't assign flavors"}]}} for i, (ns, name) in enumerate(later_first)]
    queues = [{"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "LocalQueue",
               "metadata": {"namespace": ns, "name": lq, "resourceVersion": "3"}, "spec": {"clusterQueue": CQ}}
              for ns, lq in {(ns, v[0]) for (ns, _), v in found.items()}]
    cq = {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ClusterQueue", "metadata": {"name": CQ, "resourceVersion": "2"},
          "spec": {"resourceGroups": []}, "status": {"pendingWorkloads": len(found)}}
    m = ClusterModel()
    m.apply(Listed("kueue.ClusterQueue", [cq]))
    m.apply(Listed("kueue.LocalQueue", queues))
    m.apply(Listed("kueue.Workload", workloads))
    return m


def test_the_store_orders_and_places_by_kueues_answer() -> None:
    m = _model("held")
    doc = recorded("held")
    assert all(m.queues.position(w) is None for w in m.queues.waiting(CQ))  # nothing reported yet: no place
    assert m.apply(QueuePositions(Positions({CQ: read_summary(CQ, doc)})))
    waiting = m.queues.waiting(CQ)
    by_kueue = sorted(items(doc), key=lambda k: items(doc)[k][1])
    assert [w.key for w in waiting] == by_kueue  # Kueue's order, not creation order (the opposite here)
    assert [m.queues.position(w) for w in waiting] == [Position(CQ, items(doc)[k][1], items(doc)[k][0],
                                                                items(doc)[k][2]) for k in by_kueue]
    assert not m.apply(QueuePositions(Positions({CQ: read_summary(CQ, doc)})))  # the same round: no change


def test_the_snapshot_carries_kueues_positions_or_says_why_not() -> None:
    m = _model("moved")
    doc = recorded("moved")
    m.apply(QueuePositions(Positions({CQ: read_summary(CQ, doc)})))
    snap = queues_doc(m)
    assert snap["positionsUnavailable"] is None
    assert {(w["namespace"], w["name"]): (w["positionInClusterQueue"], w["positionInLocalQueue"], w["position"])
            for w in snap["workloads"]} == {k: (v[1], v[2], v[1] + 1) for k, v in items(doc).items()}
    m.apply(QueuePositions(Positions({}, NOT_SERVED)))
    snap = queues_doc(m)
    assert snap["positionsUnavailable"] == NOT_SERVED
    assert all(w["positionInClusterQueue"] is None and w["positionInLocalQueue"] is None and w["position"] is None
               for w in snap["workloads"])


def test_the_queue_table_words_give_kueues_place_or_say_once_why_none() -> None:
    m = _model("held")
    doc = recorded("held")
    m.apply(QueuePositions(Positions({CQ: read_summary(CQ, doc)})))
    row = rows.build(m.queues).queues[CQ]
    first = min(items(doc), key=lambda k: items(doc)[k][1])
    lq = items(doc)[first][0]
    assert rows.note(row).plain.startswith(f"{first[0]}/{first[1]}, 1st in {CQ} (1st in {lq}): Pending")
    panel = "\n".join(rows.panel(row))
    assert all(f", {Position(CQ, v[1], v[0], v[2]).words()}: Pending" in panel for v in items(doc).values())
    assert NOT_SERVED not in panel
    m.apply(QueuePositions(Positions({}, NOT_SERVED)))
    row = rows.build(m.queues).queues[CQ]
    panel = "\n".join(rows.panel(row))
    assert panel.count(NOT_SERVED) == 1 and " in positions" not in panel
