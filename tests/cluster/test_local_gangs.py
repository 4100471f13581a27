"""Gangs in the embedded cluster: Workload/PodGroup objects, the pod-group cycle's all-or-nothing binding
with the 1.37 plane's recorded words, a Job's own group, and 120 seeded runs that never bind a gang in
part and always bind one that fits."""

from __future__ import annotations

import random

import pytest

from kubeview.cluster.local.config import ClusterConfig, NodeSpec
from kubeview.cluster.local.gang_objects import job_template_name, job_workload_name, pod_group_name
from kubeview.cluster.local.state import LocalCluster
from kubeview.cluster.source import ActionError
from kubeview.model.events import WatchEvent
from kubeview.model.views import PodView
from kubeview.scheduling.gang_fit import fit_gang

GPU = "nvidia.com/gpu"
NS = "gang"


def node(name: str, gpus: int, cpu: str = "8", labels: dict | None = None) -> NodeSpec:
    cap = {"cpu": cpu, "memory": "32Gi", "pods": "110", GPU: str(gpus)}
    return NodeSpec(name, cap, dict(cap), labels=dict(labels or {}))


def cluster_of(*nodes: NodeSpec, seed: int = 1) -> LocalCluster:
    return LocalCluster(ClusterConfig("test", list(nodes), []), seed=seed)


def pod_group(name: str, min_count: int) -> dict:
    return {"kind": "PodGroup", "metadata": {"name": name, "namespace": NS},
            "spec": {"schedulingPolicy": {"gang": {"minCount": min_count}}}}


def member(name: str, group: str | None, gpus: int, selector: dict | None = None) -> dict:
    spec: dict = {"containers": [{"name": "w", "image": "pause", "resources": {
        "requests": {"cpu": "100m", GPU: str(gpus)}, "limits": {GPU: str(gpus)}}}]}
    if group is not None:
        spec["schedulingGroup"] = {"podGroupName": group}
    if selector:
        spec["nodeSelector"] = dict(selector)
    return {"metadata": {"name": name, "namespace": NS}, "spec": spec}


def scheduled(pod: dict) -> dict | None:
    return next((c for c in pod["status"].get("conditions") or [] if c["type"] == "PodScheduled"), None)


def group_condition(c: LocalCluster, name: str) -> dict | None:
    pg = c.get("PodGroup", NS, name)
    return next((x for x in (pg.get("status") or {}).get("conditions") or []), None)


def test_three_by_two_gpus_on_two_2gpu_nodes_binds_nothing_in_the_recorded_words() -> None:
    """gang137 README step 2: two members would fit, the third cannot; none is bound."""
    c = cluster_of(node("gpu-node-1", 2), node("gpu-node-2", 2))
    c.create_gang_object({"kind": "Workload", "metadata": {"name": "gang-a", "namespace": NS},
                          "spec": {"podGroupTemplates": [{"name": "workers",
                                                          "schedulingPolicy": {"gang": {"minCount": 3}}}]}})
    c.create_gang_object({**pod_group("gang-a-workers", 3), "spec": {
        "workloadRef": {"workloadName": "gang-a", "templateName": "workers"},
        "schedulingPolicy": {"gang": {"minCount": 3}}}})
    for i in range(3):
        c.create_pod(member(f"gang-a-{i}", "gang-a-workers", 2))
    pods = [c.get("Pod", NS, f"gang-a-{i}") for i in range(3)]
    assert [p["spec"].get("nodeName") for p in pods] == [None, None, None]
    words = [(scheduled(p)["status"], scheduled(p)["reason"], scheduled(p)["message"]) for p in pods]
    waiting = ("False", "Unschedulable", "pod group is unschedulable, minCount (3) cannot be satisfied: "
               "2 scheduled, 0 remaining")
    assert words == [waiting, waiting, ("False", "Unschedulable", "0/2 nodes are available: 2 Insufficient nvidia.com/gpu.")]
    cond = group_condition(c, "gang-a-workers")
    assert (cond["type"], cond["status"], cond["reason"], cond["message"]) == (
        "PodGroupInitiallyScheduled", "False", "Unschedulable", "minCount (3) cannot be satisfied: 2 scheduled, 0 remaining")
    pg = c.get("PodGroup", NS, "gang-a-workers")
    assert pg["spec"]["disruptionMode"] == {"single": {}} and pg["metadata"]["finalizers"] == [
        "scheduling.k8s.io/podgroup-protection"]
    wl = c.get("Workload", NS, "gang-a")
    assert wl["spec"]["podGroupTemplates"][0]["schedulingConstraints"] is None

    # gang-b, 3 x 1 GPU: all three together; the PodGroup says Scheduled
    c.create_gang_object(pod_group("gang-b-workers", 3))
    for i in range(3):
        c.create_pod(member(f"gang-b-{i}", "gang-b-workers", 1))
    assert all(c.get("Pod", NS, f"gang-b-{i}")["spec"].get("nodeName") for i in range(3))
    cond = group_condition(c, "gang-b-workers")
    assert (cond["status"], cond["reason"], cond["message"]) == ("True", "Scheduled", "")
    # gang-a tried again (the next pass: any pod event) with 1 GPU free: nobody placed; the first member
    # fails, the rest are never tried (recorded after gang-b took its GPUs)
    c.create_pod(member("plain", None, 0))
    messages = [scheduled(c.get("Pod", NS, f"gang-a-{i}"))["message"] for i in range(3)]
    assert messages == ["0/2 nodes are available: 2 Insufficient nvidia.com/gpu."] + [
        "minCount (3) cannot be satisfied: 0 scheduled, 2 remaining"] * 2


def test_incomplete_gang_and_missing_group_are_held_silently_then_bound() -> None:
    """PreEnqueue writes nothing (gang137 README step 1): no condition, no event, no group status."""
    c = cluster_of(node("n1", 2), node("n2", 2))
    c.create_pod(member("early-0", "late-group", 1))  # its PodGroup does not exist yet
    c.create_gang_object(pod_group("g", 3))
    c.create_pod(member("g-0", "g", 1))
    c.create_pod(member("g-1", "g", 1))
    for name in ("early-0", "g-0", "g-1"):
        pod = c.get("Pod", NS, name)
        assert not pod["spec"].get("nodeName") and scheduled(pod) is None, name
    assert c.get("PodGroup", NS, "g")["status"] == {}
    assert not [e for e in c.list("Event") if e["involvedObject"]["name"] in ("early-0", "g-0", "g-1")]
    c.create_pod(member("g-2", "g", 1))
    assert all(c.get("Pod", NS, f"g-{i}")["spec"].get("nodeName") for i in range(3))
    c.create_gang_object(pod_group("late-group", 1))
    assert c.get("Pod", NS, "early-0")["spec"]["nodeName"]


def test_gang_objects_reach_watchers_with_their_kind_and_group_version() -> None:
    c = cluster_of(node("n1", 2))
    c.create_gang_object(pod_group("g", 1))
    kinds = {(e.kind, e.obj["apiVersion"]) for e in c.events if isinstance(e, WatchEvent)}
    assert ("PodGroup", "scheduling.k8s.io/v1beta1") in kinds
    listed = {e.kind for e in c.snapshot()}
    assert {"Workload", "PodGroup"} <= listed
    with pytest.raises(ActionError, match="minCount: must be a whole number >= 1"):
        c.create_gang_object(pod_group("bad", 0))
    with pytest.raises(ActionError, match="already exists"):
        c.create_gang_object(pod_group("g", 1))


def test_job_names_are_the_controllers_hashes() -> None:
    """Recorded on the 1.37 plane (gang137 workloads-with-job.json, podgroups-with-job.json)."""
    workload = job_workload_name("train", "8a7f1cb9-15f9-414e-8c20-1de62aa107ef")
    assert workload == "train-86948cbfff"
    assert pod_group_name(workload, job_template_name("train")) == "train-86948cbfff-train-pgt-0-9fcb76c9"


def test_job_with_scheduling_makes_its_group_and_its_pods_name_it() -> None:
    c = cluster_of(node("n1", 2), node("n2", 2))
    c.apply_job({"kind": "Job", "metadata": {"name": "train", "namespace": NS}, "spec": {
        "parallelism": 2, "completions": 2, "scheduling": {"schedulingPolicy": {"gang": {"minCount": 2}}},
        "template": {"spec": {"restartPolicy": "Never", "containers": [{"name": "t", "image": "pause", "resources": {
            "requests": {"cpu": "100m", GPU: "2"}, "limits": {GPU: "2"}}}]}}}})
    job = c.get("Job", NS, "train")
    (wl,), (pg,) = c.list("Workload"), c.list("PodGroup")
    assert wl["metadata"]["name"] == job_workload_name("train", job["metadata"]["uid"])
    assert wl["spec"]["controllerRef"] == {"apiGroup": "batch", "kind": "Job", "name": "train"}
    assert wl["spec"]["podGroupTemplates"][0]["name"] == "train-pgt-0"
    assert pg["spec"]["workloadRef"] == {"workloadName": wl["metadata"]["name"], "templateName": "train-pgt-0"}
    assert [r["kind"] for r in pg["metadata"]["ownerReferences"]] == ["Job", "Workload"]
    pods = c.active_pods("Job", NS, "train")
    assert len(pods) == 2 and {p["spec"]["schedulingGroup"]["podGroupName"] for p in pods} == {pg["metadata"]["name"]}
    assert sorted(p["spec"]["nodeName"] for p in pods) == ["n1", "n2"]
    reasons = [e["reason"] for e in c.list("Event") if e["involvedObject"]["kind"] == "Job"]
    assert reasons[:2] == ["WorkloadCreated", "PodGroupCreated"]
    c.delete_workload("Job", NS, "train")  # the group goes with its Job
    assert c.list("Workload") == [] and c.list("PodGroup") == []


# --- seeded runs ------------------------------------------------------------------------------------

def _random_run(seed: int) -> None:
    """A small random cluster; gangs (sizes, minCount, GPUs per member) and plain pods arriving in a random
    order, PodGroups before or after their pods. After every arrival: no gang is bound in part, and no
    gang left unbound could be placed now (fit_gang, the scheduler's own placement, says it cannot).
    One gang is given a node of its own sized to hold it whole, so binding is shown, not assumed."""
    rng = random.Random(seed)
    nodes = [node(f"n{i}", rng.choice((1, 2, 4, 8)), labels={"pool": "shared"}) for i in range(rng.randint(2, 4))]
    sure_size, sure_gpus = rng.randint(2, 4), rng.choice((1, 2))
    nodes.append(node("own", sure_size * sure_gpus, labels={"pool": "own"}))
    c = cluster_of(*nodes, seed=seed)
    gangs: dict[str, int] = {"sure": sure_size}
    arrivals: list[tuple[str, dict]] = [("group", pod_group("sure", sure_size))]
    arrivals += [("pod", member(f"sure-{i}", "sure", sure_gpus, {"pool": "own"})) for i in range(sure_size)]
    for g in range(rng.randint(1, 3)):
        size = rng.randint(2, 5)
        gangs[f"g{g}"] = need = rng.randint(1, size)
        gpus = rng.choice((1, 2, 4))
        arrivals.append(("group", pod_group(f"g{g}", need)))
        arrivals += [("pod", member(f"g{g}-{i}", f"g{g}", rng.choice((gpus, gpus, 1)), {"pool": "shared"}))
                     for i in range(size)]
    arrivals += [("pod", member(f"plain-{i}", None, rng.choice((1, 2)), {"pool": "shared"}))
                 for i in range(rng.randint(0, 6))]
    rng.shuffle(arrivals)
    for what, manifest in arrivals:
        if what == "group":
            c.create_gang_object(manifest)
        else:
            c.create_pod(manifest)
        _check(c, gangs, seed)
    assert all(c.get("Pod", NS, f"sure-{i}")["spec"].get("nodeName") == "own" for i in range(sure_size)), seed


def _check(c: LocalCluster, gangs: dict[str, int], seed: int) -> None:
    for name, need in gangs.items():
        pods = [p for p in c.list("Pod") if (p["spec"].get("schedulingGroup") or {}).get("podGroupName") == name]
        bound = sum(bool(p["spec"].get("nodeName")) for p in pods)
        assert bound == 0 or bound >= need, f"seed {seed}: gang {name} bound {bound} of minCount {need}"
        if bound == 0 and len(pods) >= need and c.get("PodGroup", NS, name) is not None:
            views = sorted((PodView.from_api(p) for p in pods), key=lambda v: c.created_seq("Pod", NS, v.name))
            assert not fit_gang(c.model.allocation(), views, need, c.packing).fits, (
                f"seed {seed}: gang {name} could be placed but was left unbound")


@pytest.mark.parametrize("block", range(4))
def test_seeded_runs_never_bind_a_gang_in_part(block: int) -> None:
    for seed in range(block * 30, block * 30 + 30):
        _random_run(seed)
