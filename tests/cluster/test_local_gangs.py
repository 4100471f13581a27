"""Gangs in the embedded cluster: Workload/PodGroup objects, the pod-group cycle's all-or-nothing binding
with the 1.37 plane's recorded words, a Job's own group, and 120 seeded runs that never bind a gang in
part and always bind one that fits."""

from __future__ import annotations

import random

import pytest

from kubeview.cluster.local.config import DEFAULT_FILE, ClusterConfig, NodeSpec, load_cluster
from kubeview.cluster.local.gang_objects import job_template_name, job_workload_name, pod_group_name
from kubeview.cluster.local.state import LocalCluster
from kubeview.cluster.source import ActionError
from kubeview.model.cluster import ClusterModel
from kubeview.model.events import WatchEvent
from kubeview.model.views import PodView
from kubeview.scheduling.config import POLICIES, PackingConfig
from kubeview.scheduling.gang_fit import fit_gang

GPU = "nvidia.com/gpu"
NS = "gang"


def node(name: str, gpus: int, cpu: str = "8", labels: dict | None = None) -> NodeSpec:
    cap = {"cpu": cpu, "memory": "32Gi", "pods": "110", GPU: str(gpus)}
    return NodeSpec(name, cap, dict(cap), labels=dict(labels or {}))


def cluster_of(*nodes: NodeSpec, seed: int = 1, policy: str = "pack") -> LocalCluster:
    return LocalCluster(ClusterConfig("test", list(nodes), []), PackingConfig(policy=policy), seed=seed)


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
    # fails, the cycle stops, the rest carry the group's words without the prefix (recorded after gang-b)
    c.create_pod(member("plain", None, 0))
    messages = [scheduled(c.get("Pod", NS, f"gang-a-{i}"))["message"] for i in range(3)]
    assert messages[0] == "0/2 nodes are available: 2 Insufficient nvidia.com/gpu."
    assert messages[1:] == ["minCount (3) cannot be satisfied: 0 scheduled, 2 remaining"] * 2  # never tried
    assert group_condition(c, "gang-a-workers")["message"] == "minCount (3) cannot be satisfied: 0 scheduled, 2 remaining"


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


def test_a_basic_policy_group_schedules_its_pods_one_by_one() -> None:
    """`schedulingPolicy: {basic: {}}`: no gang; each pod binds where it fits, alone."""
    c = cluster_of(node("n1", 2), node("n2", 2))
    for i in range(3):  # before their group: held, then all three in one pass
        c.create_pod(member(f"b-{i}", "b", 2))
    assert all(not c.get("Pod", NS, f"b-{i}")["spec"].get("nodeName") for i in range(3))
    c.create_gang_object({"kind": "PodGroup", "metadata": {"name": "b", "namespace": NS},
                          "spec": {"schedulingPolicy": {"basic": {}}}})
    nodes = [c.get("Pod", NS, f"b-{i}")["spec"].get("nodeName") for i in range(3)]
    assert sorted(n for n in nodes if n) == ["n1", "n2"] and nodes.count(None) == 1
    assert c.get("PodGroup", NS, "b")["status"] == {}


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
    with pytest.raises(ActionError, match=r"^PodGroup spec.resourceClaims: the local cluster does not allocate"):
        c.create_gang_object({**pod_group("claims", 1), "spec": {"schedulingPolicy": {"gang": {"minCount": 1}},
                                                                 "resourceClaims": [{"name": "gpu"}]}})
    with pytest.raises(ActionError, match=r"^Workload spec.podGroupTemplates\[0\].schedulingConstraints"):
        c.create_gang_object({"kind": "Workload", "metadata": {"name": "w", "namespace": NS}, "spec": {
            "podGroupTemplates": [{"name": "t", "schedulingPolicy": {"basic": {}},
                                   "schedulingConstraints": {"topology": [{"key": "zone"}]}}]}})


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


def test_a_job_asking_for_what_the_local_cluster_does_not_run_is_refused_in_one_line() -> None:
    c = cluster_of(node("n1", 2))
    with pytest.raises(ActionError, match=r"^Job gang/topo is invalid: spec.scheduling.schedulingConstraints: "):
        c.apply_job({"kind": "Job", "metadata": {"name": "topo", "namespace": NS}, "spec": {
            "scheduling": {"schedulingPolicy": {"gang": {"minCount": 1}},
                           "schedulingConstraints": {"topology": [{"key": "zone"}]}},
            "template": {"spec": {"restartPolicy": "Never", "containers": [{"name": "t", "image": "pause"}]}}}})
    assert c.list("Job") == [] and c.list("Workload") == []


def test_a_gang_jobs_min_count_follows_its_parallelism_when_it_sets_none() -> None:
    """syncGangMinCount: minCount unset defaults to parallelism, and follows it (elastic scaling)."""
    c = cluster_of(node("n1", 2), node("n2", 2))
    c.apply_job({"kind": "Job", "metadata": {"name": "elastic", "namespace": NS}, "spec": {
        "parallelism": 3, "scheduling": {"schedulingPolicy": {"gang": {}}},
        "template": {"spec": {"restartPolicy": "Never", "containers": [{"name": "t", "image": "pause", "resources": {
            "requests": {"cpu": "100m", GPU: "2"}, "limits": {GPU: "2"}}}]}}}})
    (pg,) = c.list("PodGroup")
    assert pg["spec"]["schedulingPolicy"]["gang"]["minCount"] == 3
    assert [p["spec"].get("nodeName") for p in c.active_pods("Job", NS, "elastic")] == [None] * 3  # 6 GPUs asked, 4
    c.set_parallelism(NS, "elastic", 2)
    (pg,), (wl,) = c.list("PodGroup"), c.list("Workload")
    assert pg["spec"]["schedulingPolicy"]["gang"]["minCount"] == 2
    assert wl["spec"]["podGroupTemplates"][0]["schedulingPolicy"]["gang"]["minCount"] == 2
    pods = c.active_pods("Job", NS, "elastic")
    assert sorted(p["spec"].get("nodeName") for p in pods) == ["n1", "n2"]  # two left, bound together
    c.delete_workload("Job", NS, "elastic")
    assert c.list("Workload") == [] and c.list("PodGroup") == []


# --- seeded runs ------------------------------------------------------------------------------------

def _random_run(seed: int) -> None:
    """A small random cluster under a random policy; gangs (sizes, minCount, GPUs per member) and plain pods
    arriving in a random order, PodGroups before or after their pods. After every arrival: no gang is bound in part, and no
    gang left unbound could be placed now (fit_gang, the scheduler's own placement, says it cannot).
    One gang is given a node of its own sized to hold it whole, so binding is shown, not assumed."""
    rng = random.Random(seed)
    nodes = [node(f"n{i}", rng.choice((1, 2, 4, 8)), labels={"pool": "shared"}) for i in range(rng.randint(2, 4))]
    sure_size, sure_gpus = rng.randint(2, 4), rng.choice((1, 2))
    nodes.append(node("own", sure_size * sure_gpus, labels={"pool": "own"}))
    c = cluster_of(*nodes, seed=seed, policy=rng.choice(POLICIES))
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


def test_a_client_model_sees_the_gangs_the_local_cluster_runs() -> None:
    """What a client of the embedded cluster builds from its list and watch (the GangStore of the contract):
    the blocked gang waiting with its members' words, the bound one scheduled, the Job's group owned."""
    c = cluster_of(node("n1", 2), node("n2", 2))
    c.create_gang_object(pod_group("a", 3))
    for i in range(3):
        c.create_pod(member(f"a-{i}", "a", 2))
    c.apply_job({"kind": "Job", "metadata": {"name": "train", "namespace": NS}, "spec": {
        "parallelism": 2, "scheduling": {"schedulingPolicy": {"gang": {}}},  # minCount defaults to parallelism
        "template": {"spec": {"restartPolicy": "Never", "containers": [{"name": "t", "image": "pause", "resources": {
            "requests": {"cpu": "100m", GPU: "1"}, "limits": {GPU: "1"}}}]}}}})
    client = ClusterModel("client")
    client.apply_all(c.snapshot())
    gangs = {g.name: g for g in client.gangs.gangs()}
    a = gangs["a"]
    assert (a.state, a.min_count, a.pending, a.condition_type, a.condition_reason) == (
        "waiting", 3, 3, "PodGroupInitiallyScheduled", "Unschedulable")
    assert a.waiting_reasons() == {"pod group is unschedulable, minCount (3) cannot be satisfied: 2 scheduled, "
                                   "0 remaining": 2, "0/2 nodes are available: 2 Insufficient nvidia.com/gpu.": 1}
    (job_group,) = [g for g in gangs.values() if g.name != "a"]
    assert (job_group.min_count, job_group.bound, job_group.owner, job_group.condition_reason) == (
        2, 2, "Job/train", "Scheduled")


def test_members_own_claims_are_allocated_together_or_not_at_all() -> None:
    """Members with their own template claims (a full DRA GPU each) on one 2-GPU node: two bind with their
    devices; three are refused whole (no claim allocated, no pod bound), though each alone would fit."""
    c = LocalCluster(load_cluster(DEFAULT_FILE.parent / "dra.yaml"), seed=3)
    c.create_claim_object({"kind": "ResourceClaimTemplate", "metadata": {"name": "full", "namespace": NS}, "spec": {
        "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.nvidia.com", "selectors": [
            {"cel": {"expression": "device.attributes['gpu.nvidia.com'].type == 'gpu'"}}]}}]}}}})

    def claim_member(name: str, group: str) -> dict:
        return {"metadata": {"name": name, "namespace": NS}, "spec": {
            "schedulingGroup": {"podGroupName": group}, "nodeSelector": {"kubernetes.io/hostname": "dra-node-1"},
            "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "full"}],
            "containers": [{"name": "w", "image": "pause", "resources": {"requests": {"cpu": "100m"},
                                                                          "claims": [{"name": "gpu"}]}}]}}

    c.create_gang_object(pod_group("three", 3))
    for i in range(3):
        c.create_pod(claim_member(f"three-{i}", "three"))
    assert all(not c.get("Pod", NS, f"three-{i}")["spec"].get("nodeName") for i in range(3))
    assert all(not (cl.get("status") or {}).get("allocation") for cl in c.list("ResourceClaim"))
    assert {scheduled(c.get("Pod", NS, f"three-{i}"))["message"] for i in range(3)} == {
        "pod group is unschedulable, cannot allocate all claims"}
    assert group_condition(c, "three")["message"] == "cannot allocate all claims"
    c.delete_pod(NS, "three-2", 0)  # now it cannot reach minCount: nothing changes
    c.create_gang_object(pod_group("two", 2))
    for i in range(2):
        c.create_pod(claim_member(f"two-{i}", "two"))
    assert [c.get("Pod", NS, f"two-{i}")["spec"].get("nodeName") for i in range(2)] == ["dra-node-1"] * 2
    held = [cl for cl in c.list("ResourceClaim") if (cl.get("status") or {}).get("allocation")]
    assert len(held) == 2 and len({cl["status"]["allocation"]["devices"]["results"][0]["device"] for cl in held}) == 2
