"""`kubeview bench model --quota` at a small size: the cluster it builds is the one it says (a quota per
namespace, every tenth at its GPU quota with a Job held, every 50th's status one off; Kueue's queues and
Workloads), the model reads the Kueue objects it applies, and its report prints each share beside the
10 % target."""

from __future__ import annotations

from kubeview.bench.model_cluster import Cluster
from kubeview.bench.model_kueue import ANNOTATION, KueueObjects
from kubeview.bench.model_quota import TARGET, measure, report
from kubeview.model.cluster import ClusterModel
from kubeview.model.events import Listed
from kubeview.model.gangs.messages import KIND_KUEUE
from kubeview.model.queues.objects import ADMITTED, FINISHED, PENDING


def test_the_quota_bench_measures_what_it_says() -> None:
    r = measure(nodes=100, gpu_nodes=10, pods=3000, namespaces=30)
    assert (r["quotas"], r["held"], r["snapshot_quota_namespaces"]) == (30, 3, 30)
    assert r["differ"] >= 1  # team 25's status is one GPU off (and the bench's pod events may move others)
    assert (r["cluster_queues"], r["local_queues"], r["flavors"], r["workloads"]) == (3, 30, 3, 400)
    assert r["snapshot_workloads"] == 400 and r["kueue_gangs"] == 400 and r["kueue_members"] >= 590
    assert r["build_s"] > 0 and r["quota_views_s"] > 0 and r["queue_views_s"] > 0 and r["snapshot_s"] > 0
    assert r["target"] == TARGET
    lines = report(r, quick=False)
    assert lines[0].startswith("kubeview bench model --quota: 100 nodes, 3,000 pods in 30 namespaces, 30 ResourceQuotas, "
                               "3 Jobs held by quota")
    assert lines[1].startswith("  Kueue: 3 ClusterQueues, 30 LocalQueues, 3 ResourceFlavors, 400 Workloads")
    assert "% of the build" in lines[3] and "target <= 10 %" in lines[5] and "target <= 10 %" in lines[8]
    assert "with the Workloads as gangs only, in turns" in lines[8] and "without any Kueue object" in lines[9]
    assert "the first of them" in lines[10] and r["gangs_only_s"] > 0


def test_the_bench_cluster_has_kueues_objects_and_the_model_reads_them() -> None:
    cluster = Cluster(40, 4, 1500, namespaces=20)
    pods, replicasets = cluster.pods(), cluster.replicasets()
    kueue = KueueObjects(cluster, 20, 1500)
    left = kueue.adopt(pods, replicasets)
    kueue.make_rest()
    assert len(left) == len(replicasets) - 3  # ReplicaSets 0, 5 and 10 became Jobs
    model = ClusterModel("bench")
    model.apply(Listed("Pod", pods, "1"))
    for kind, objects in kueue.lists():
        model.apply(Listed(kind, objects, "1"))
    store = model.queues
    assert [len(store.flavors()), len(store.cluster_queues()), len(store.local_queues())] == [3, 2, 20]
    assert len(store.workloads()) == kueue.total == 200
    states = {w.state for w in store.workloads()}
    assert states == {ADMITTED, FINISHED, PENDING}
    pending = store.held()
    assert {w.reason for w in pending} == {"Pending", "Inadmissible"}
    assert any(w.message.startswith("couldn't assign flavors to pod set main: insufficient unused quota for "
                                    "nvidia.com/gpu in flavor h100, ") for w in pending)
    assert any(w.message == "LocalQueue team-batch doesn't exist" for w in pending)
    assert store.cluster_queue_of(next(w for w in pending if w.reason == "Inadmissible")) is None
    # an admitted Job's pods are its gang's members, and its ClusterQueue's status counts it
    admitted = [w for w in store.workloads() if w.state == ADMITTED]
    assert len(admitted) == 75 and all(w.pods == 4 and w.owner and w.cluster_queue for w in admitted)
    gang = model.gangs.get(KIND_KUEUE, admitted[0].namespace, admitted[0].name)
    assert gang is not None and len(gang.members) == 4 and gang.state == "running"
    assert all(pods_by_name[(m.namespace, m.name)]["metadata"]["annotations"][ANNOTATION] == gang.name
               for pods_by_name in [{(p["metadata"]["namespace"], p["metadata"]["name"]): p for p in pods}]
               for m in gang.members)
    for cq in store.cluster_queues():
        assert cq.admitted == sum(1 for w in store.workloads_of(cq.name) if w.state == ADMITTED)
        assert cq.pending == len(store.waiting(cq.name))
        assert sum(r.used for r in cq.of("nvidia.com/gpu")) == sum(
            w.requests.get("nvidia.com/gpu", 0) for w in store.workloads_of(cq.name) if w.state == ADMITTED)
    assert all(q.cluster_queue == f"cq-{int(q.namespace[5:]) % 2:02d}" for q in store.local_queues())
