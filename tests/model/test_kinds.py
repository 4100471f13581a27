"""The model's table of kinds (model/kinds.py): every list/watch event goes through it, a kind may feed
several stores, and what the source cannot read is one mapping kind -> reason."""

from __future__ import annotations

from kubeview.model.cluster import ClusterModel
from kubeview.model.events import Listed, Scope, WatchEvent
from kubeview.model.kinds import Calls, events_unavailable, gangs_unavailable


def pod(name: str, node: str | None = "n1", **labels: str) -> dict:
    spec: dict = {"containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}]}
    if node:
        spec["nodeName"] = node
    return {"metadata": {"name": name, "namespace": "ns", "resourceVersion": "1", "labels": labels,
                         "uid": f"uid-{name}"}, "spec": spec, "status": {"phase": "Running"}}


def node(name: str) -> dict:
    return {"metadata": {"name": name, "resourceVersion": "1"},
            "status": {"capacity": {"cpu": "8", "pods": "110"}, "allocatable": {"cpu": "8", "pods": "110"}}}


def test_a_pod_feeds_the_node_figures_the_jobs_and_the_gangs_from_one_row() -> None:
    m = ClusterModel()
    assert len(m.kinds["Pod"]) == 4  # the quota tally, node figures, JobStore, GangStore
    m.apply(Listed("Node", [node("n1")]))
    member = pod("w-0", **{"batch.kubernetes.io/job-name": "train", "kueue.x-k8s.io/pod-group-name": "g"})
    m.apply(WatchEvent("Pod", "ADDED", member))
    assert m.totals()["cpu"]["requested"] == 1000
    assert [p.name for p in m.jobs.pods_of("ns", "train")] == ["w-0"]
    assert m.gangs.orphans()  # a member of a group whose object has not come (yet)
    m.apply(WatchEvent("Pod", "DELETED", member))
    assert m.totals()["cpu"]["requested"] == 0 and m.jobs.pods_of("ns", "train") == [] and not m.gangs.orphans()


def test_a_new_kind_is_one_row_of_the_table() -> None:
    """What "Adding a kind" (docs/architecture.md) promises: a store and a row, nothing in `apply`."""
    m = ClusterModel()
    held: dict[str, dict] = {}

    def put(obj: dict) -> bool:
        held[obj["metadata"]["name"]] = obj
        return True

    def delete(obj: dict) -> bool:
        return held.pop(obj["metadata"]["name"], None) is not None

    def replace(objects: list[dict]) -> None:
        held.clear()
        held.update((o["metadata"]["name"], o) for o in objects)

    m.kinds["ResourceQuota"] = (Calls(put, delete, replace),)
    quota = {"metadata": {"name": "q", "namespace": "ns"}}
    assert m.apply(Listed("ResourceQuota", [quota])) and m.is_synced(("ResourceQuota",)) and held == {"q": quota}
    assert m.apply(WatchEvent("ResourceQuota", "DELETED", quota)) and held == {}
    assert not m.apply(WatchEvent("Unknown", "ADDED", quota))  # a kind without a row changes nothing


def test_unavailable_kinds_are_one_mapping_and_each_says_its_reason_once() -> None:
    m = ClusterModel()
    assert m.unavailable == {} and events_unavailable(m.unavailable) is None and gangs_unavailable(m.unavailable) is None
    why = {"PodGroup": "Listing podgroups.scheduling.k8s.io was forbidden (403)",
           "kai.PodGroup": "Listing podgroups.scheduling.run.ai was forbidden (403)",
           "Event": "Listing events was forbidden (403)", "Job": "Listing jobs was forbidden (403)"}
    assert m.apply(Scope("t", unavailable=why))
    assert m.unavailable == why
    assert events_unavailable(m.unavailable) == "events are not shown: Listing events was forbidden (403)"
    assert gangs_unavailable(m.unavailable) == ("some gangs are not shown: Listing podgroups.scheduling.k8s.io was "
                                                "forbidden (403); Listing podgroups.scheduling.run.ai was forbidden (403)")
    assert not m.apply(Scope("t", unavailable=dict(why)))  # the same scope again changes nothing
    assert m.apply(Scope("t")) and m.unavailable == {}  # readable again
