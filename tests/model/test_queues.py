"""Kueue's queues in the model (model/queues/): objects shaped as sigs.k8s.io/kueue v0.17.0 writes them
(v1beta2 field names, its condition reasons and messages: pkg/scheduler/scheduler.go, pkg/workload,
pkg/scheduler/flavorassigner/flavorassigner.go), through `ClusterModel`'s table as the source sends them."""

from __future__ import annotations

import json

from kubeview.model.cluster import ClusterModel
from kubeview.model.events import Listed, WatchEvent
from kubeview.model.kinds import queues_unavailable
from kubeview.model.queues.admit import queue_refusal
from kubeview.model.queues.objects import ADMITTED, PENDING, ClusterQueueView, QueuedWorkload
from kubeview.model.queues.positions import Position
from kubeview.snapshot.document import snapshot_json

API = "kueue.x-k8s.io/v1beta2"


def cluster_queue(name: str = "team-cq", reserved: str = "4", used: str = "4", cohort: str | None = None,
                  pending: int = 1, admitted: int = 2, borrowing_limit: str | None = None) -> dict:
    gpu: dict = {"name": "nvidia.com/gpu", "nominalQuota": "4"}
    if borrowing_limit is not None:
        gpu["borrowingLimit"] = borrowing_limit
    spec: dict = {"resourceGroups": [{"coveredResources": ["cpu", "memory", "nvidia.com/gpu"], "flavors": [
        {"name": "gpu-a100", "resources": [{"name": "cpu", "nominalQuota": "32"},
                                           {"name": "memory", "nominalQuota": "128Gi"}, gpu]}]}],
        "queueingStrategy": "BestEffortFIFO", "namespaceSelector": {}}
    if cohort:
        spec["cohortName"] = cohort

    def usage(gpus: str) -> list:
        return [{"name": "gpu-a100", "resources": [{"name": "cpu", "total": "4", "borrowed": "0"},
                                                   {"name": "memory", "total": "16Gi", "borrowed": "0"},
                                                   {"name": "nvidia.com/gpu", "total": gpus, "borrowed": "0"}]}]
    return {"apiVersion": API, "kind": "ClusterQueue",
            "metadata": {"name": name, "uid": "u-" + name, "resourceVersion": "7"}, "spec": spec,
            "status": {"conditions": [{"type": "Active", "status": "True", "reason": "Ready",
                                       "message": "Can admit new workloads", "lastTransitionTime": "2026-11-29T10:00:00Z"}],
                       "flavorsReservation": usage(reserved), "flavorsUsage": usage(used),
                       "pendingWorkloads": pending, "reservingWorkloads": admitted, "admittedWorkloads": admitted}}


def local_queue(namespace: str, name: str = "team-q", cq: str = "team-cq") -> dict:
    return {"apiVersion": API, "kind": "LocalQueue",
            "metadata": {"namespace": namespace, "name": name, "resourceVersion": "3"},
            "spec": {"clusterQueue": cq},
            "status": {"pendingWorkloads": 1, "reservingWorkloads": 1, "admittedWorkloads": 1,
                       "conditions": [{"type": "Active", "status": "True", "reason": "Ready",
                                       "message": "Can submit new workloads to localQueue"}],
                       "flavorsUsage": [{"name": "gpu-a100", "resources": [{"name": "nvidia.com/gpu", "total": "2"}]}]}}


def workload(namespace: str, name: str, admitted: bool, gpus: int = 2, queue: str = "team-q",
             created: str = "2026-11-29T10:00:00Z", priority: int = 0) -> dict:
    template = {"spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "x", "resources": {
        "requests": {"cpu": "1", "nvidia.com/gpu": "1"}, "limits": {"nvidia.com/gpu": "1"}}}]}}
    meta = {"namespace": namespace, "name": name, "resourceVersion": "9", "creationTimestamp": created,
            "ownerReferences": [{"apiVersion": "batch/v1", "kind": "Job", "name": name.removeprefix("job-")[:-6],
                                 "uid": "j", "controller": True}]}
    if admitted:
        status = {"admission": {"clusterQueue": "team-cq", "podSetAssignments": [
            {"name": "main", "flavors": {"cpu": "gpu-a100", "nvidia.com/gpu": "gpu-a100"}, "count": gpus,
             "resourceUsage": {"cpu": str(gpus), "nvidia.com/gpu": str(gpus)}}]},
            "conditions": [
                {"type": "QuotaReserved", "status": "True", "reason": "QuotaReserved",
                 "message": "Quota reserved in ClusterQueue team-cq"},
                {"type": "Admitted", "status": "True", "reason": "Admitted", "message": "The workload is admitted"}]}
    else:
        status = {"conditions": [{"type": "QuotaReserved", "status": "False", "reason": "Pending",
                                  "message": "couldn't assign flavors to pod set main: insufficient unused quota "
                                             "for nvidia.com/gpu in flavor gpu-a100, 2 more needed"}],
                  "resourceRequests": [{"name": "main", "resources": {"cpu": str(gpus), "nvidia.com/gpu": str(gpus)}}]}
    return {"apiVersion": API, "kind": "Workload", "metadata": meta,
            "spec": {"queueName": queue, "priority": priority, "active": True,
                     "podSets": [{"name": "main", "count": gpus, "template": template}]}, "status": status}


def model_with(*objs: tuple[str, dict]) -> ClusterModel:
    model = ClusterModel()
    by_kind: dict[str, list[dict]] = {}
    for kind, obj in objs:
        by_kind.setdefault(kind, []).append(obj)
    for kind in ("kueue.ClusterQueue", "kueue.LocalQueue", "kueue.ResourceFlavor", "kueue.Workload"):
        model.apply(Listed(kind, by_kind.get(kind, [])))
    return model


def team() -> ClusterModel:
    return model_with(("kueue.ClusterQueue", cluster_queue()),
                      ("kueue.LocalQueue", local_queue("team-a")), ("kueue.LocalQueue", local_queue("team-b")),
                      ("kueue.ResourceFlavor", {"apiVersion": API, "kind": "ResourceFlavor",
                                                "metadata": {"name": "gpu-a100"},
                                                "spec": {"nodeLabels": {"gpu": "a100"}, "nodeTaints": [
                                                    {"key": "gpu", "value": "true", "effect": "NoSchedule"}]}}),
                      ("kueue.Workload", workload("team-a", "job-train-abc12", admitted=True)),
                      ("kueue.Workload", workload("team-b", "job-eval-def34", admitted=True)),
                      ("kueue.Workload", workload("team-a", "job-big-ghi56", admitted=False,
                                                  created="2026-11-29T10:05:00Z")),
                      ("kueue.Workload", workload("team-b", "job-late-jkl78", admitted=False, gpus=1,
                                                  created="2026-11-29T10:06:00Z", priority=10)))


def test_cluster_queue_reads_quota_usage_and_counts_per_flavor_and_resource() -> None:
    cq = ClusterQueueView.from_api(cluster_queue(cohort="ml", reserved="5", borrowing_limit="2"))
    gpu = cq.of("nvidia.com/gpu")[0]
    assert (gpu.flavor, gpu.nominal, gpu.borrowing_limit, gpu.lending_limit, gpu.reserved, gpu.used) == \
        ("gpu-a100", 4, 2, None, 5, 4)
    assert cq.of("cpu")[0].nominal == 32000 and cq.of("cpu")[0].reserved == 4000  # millicores
    assert cq.of("memory")[0].nominal == 128 * 2**30
    assert cq.cohort == "ml" and (cq.pending, cq.reserving, cq.admitted) == (1, 2, 2)
    assert cq.active is not None and cq.active.reason == "Ready"
    assert cq.total("nvidia.com/gpu") == (5, 4) and gpu.free == -1


def test_v1beta1_cohort_and_pending_head_give_a_position() -> None:
    obj = cluster_queue()
    obj["apiVersion"] = "kueue.x-k8s.io/v1beta1"
    obj["spec"]["cohort"] = "old"
    obj["metadata"]["resourceVersion"] = "8"
    obj["status"]["pendingWorkloadsStatus"] = {"clusterQueuePendingWorkload": [
        {"name": "job-late-jkl78", "namespace": "team-b"}, {"name": "job-big-ghi56", "namespace": "team-a"}],
        "lastChangeTime": "2026-11-29T10:07:00Z"}
    model = team()
    model.apply(WatchEvent("kueue.ClusterQueue", "MODIFIED", obj))
    queues = model.queues
    assert queues.cluster_queue("team-cq").cohort == "old"  # type: ignore[union-attr]
    assert [w.name for w in queues.waiting("team-cq")] == ["job-late-jkl78", "job-big-ghi56"]
    big = queues.workload("team-a", "job-big-ghi56")
    assert big is not None and queues.position(big) == Position("team-cq", 1)  # v1beta1: the ClusterQueue's place only
    places = {w["name"]: w["position"] for w in json.loads(snapshot_json(model, now=0))["queues"]["workloads"]}
    expected = {w.name: (p.in_cluster_queue + 1 if (p := queues.position(w)) is not None else None)
                for w in queues.workloads()}
    assert places == expected  # the snapshot says the store's
    assert places["job-late-jkl78"] == 1 and places["job-big-ghi56"] == 2


def test_workloads_admitted_and_pending_with_kueues_own_words() -> None:
    queues = team().queues
    admitted = queues.workload("team-a", "job-train-abc12")
    pending = queues.workload("team-a", "job-big-ghi56")
    assert admitted is not None and pending is not None
    assert (admitted.state, admitted.reason, admitted.message) == (ADMITTED, "Admitted", "The workload is admitted")
    assert admitted.cluster_queue == "team-cq" and admitted.flavors["nvidia.com/gpu"] == "gpu-a100"
    assert admitted.requests == {"cpu": 2000, "nvidia.com/gpu": 2} and admitted.owner == "Job/train"
    assert (pending.state, pending.reason) == (PENDING, "Pending") and pending.waiting
    assert pending.message == ("couldn't assign flavors to pod set main: insufficient unused quota for "
                               "nvidia.com/gpu in flavor gpu-a100, 2 more needed")
    assert pending.cluster_queue is None and queues.cluster_queue_of(pending) == "team-cq"
    assert queues.position(pending) is None  # v1beta2 reports no position on the objects
    # queue order without a reported head: higher priority first, then older
    assert [w.name for w in queues.waiting("team-cq")] == ["job-late-jkl78", "job-big-ghi56"]
    assert [w.name for w in queues.held()] == ["job-big-ghi56", "job-late-jkl78"]
    assert len(queues.workloads_of("team-cq")) == 4


def test_workload_requests_from_templates_when_kueue_wrote_none() -> None:
    obj = workload("team-a", "job-x-00000", admitted=False, gpus=3)
    del obj["status"]["resourceRequests"]
    assert QueuedWorkload.from_api(obj).requests == {"cpu": 3000, "nvidia.com/gpu": 3}
    obj["status"] = {}
    view = QueuedWorkload.from_api(obj)
    assert (view.state, view.reason, view.message) == (PENDING, "", "")


def test_finished_and_evicted_workloads() -> None:
    obj = workload("team-a", "job-done-00000", admitted=True)
    obj["status"]["conditions"].append({"type": "Finished", "status": "True", "reason": "Succeeded",
                                        "message": "Job finished successfully"})
    assert QueuedWorkload.from_api(obj).state == "finished"
    ev = workload("team-a", "job-ev-00000", admitted=False)
    ev["status"]["conditions"].append({"type": "Evicted", "status": "True", "reason": "Preempted",
                                       "message": "Preempted to accommodate a higher priority Workload"})
    view = QueuedWorkload.from_api(ev)
    assert view.waiting and view.evicted is not None and view.evicted.reason == "Preempted"


def test_local_queues_flavors_and_the_gang_store_both_get_the_workload() -> None:
    model = team()
    queues = model.queues
    assert [(q.namespace, q.cluster_queue, q.pending, q.admitted) for q in queues.local_queues()] == \
        [("team-a", "team-cq", 1, 1), ("team-b", "team-cq", 1, 1)]
    assert queues.local_queues_in("team-a")[0].usage == {("gpu-a100", "nvidia.com/gpu"): 2}
    assert [q.namespace for q in queues.local_queues_of("team-cq")] == ["team-a", "team-b"]
    flavor = queues.flavor("gpu-a100")
    assert flavor is not None and flavor.node_labels == {"gpu": "a100"} and flavor.node_taints == ("gpu=true:NoSchedule",)
    assert model.gangs.get("kueue.Workload", "team-a", "job-big-ghi56") is not None
    assert queues.listed == {"kueue.ClusterQueue", "kueue.LocalQueue", "kueue.ResourceFlavor", "kueue.Workload"}


def test_watch_events_change_the_store_and_its_version() -> None:
    model = team()
    before = model.queues.version
    obj = workload("team-a", "job-big-ghi56", admitted=True)
    obj["metadata"]["resourceVersion"] = "10"
    assert model.apply(WatchEvent("kueue.Workload", "MODIFIED", obj))
    assert model.queues.workload("team-a", "job-big-ghi56").state == ADMITTED  # type: ignore[union-attr]
    assert not model.queues.put("kueue.Workload", obj)  # same resourceVersion: nothing new
    model.apply(WatchEvent("kueue.LocalQueue", "DELETED", local_queue("team-b")))
    assert model.queues.local_queue("team-b", "team-q") is None and model.queues.version > before
    assert model.queues.cluster_queue_of(model.queues.workload("team-b", "job-late-jkl78")) is None  # type: ignore[arg-type]


def test_queue_refusal_in_the_clusterqueues_words() -> None:
    queues = team().queues
    refusal = queue_refusal(queues, "team-a", "team-q", {"nvidia.com/gpu": 1, "cpu": 1000, "pods": 1})
    assert refusal is not None and not refusal.borrow
    assert refusal.text == "ClusterQueue team-cq's nominal nvidia.com/gpu 4 is used 4/4"
    assert queue_refusal(queues, "team-a", "team-q", {"cpu": 4000}) is None
    assert queue_refusal(queues, "team-a", "nope", {"cpu": 1}).text == \
        "LocalQueue nope doesn't exist in namespace team-a"  # type: ignore[union-attr]
    assert queue_refusal(queues, "team-a", "team-q", {"example.com/fpga": 1}).text == \
        "ClusterQueue team-cq: resource example.com/fpga unavailable in ClusterQueue"  # type: ignore[union-attr]
    borrowing = model_with(("kueue.ClusterQueue", cluster_queue(cohort="ml")),
                           ("kueue.LocalQueue", local_queue("team-a"))).queues
    got = queue_refusal(borrowing, "team-a", "team-q", {"nvidia.com/gpu": 1})
    assert got is not None and got.borrow and got.text.endswith("(it may borrow from cohort ml)")
    assert queue_refusal(model_with().queues, "x", "q", {"nvidia.com/gpu": 1}) is not None  # listed: no LocalQueue
    assert queue_refusal(ClusterModel().queues, "x", "q", {"nvidia.com/gpu": 1}) is None  # not read: cannot tell


def test_unavailable_words() -> None:
    assert queues_unavailable({"kueue.ClusterQueue": "forbidden", "kueue.LocalQueue": "forbidden"}) == \
        "Kueue queues are not shown: forbidden"
    assert queues_unavailable({"Event": "forbidden"}) is None
