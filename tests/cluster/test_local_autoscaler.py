"""The embedded autoscaler (local/autoscaler.py, local/node_groups.py, local/ca_status.py) without processes.

Pure parts directly (the decision of one loop, CA's words and status document); the pure cluster
(`LocalCluster`, whose pods without a `command` are Running at once) driven by a clock the test holds,
so a provisioning delay is a premise set by the test, never a sleep.
"""

from __future__ import annotations

import random
import re

import pytest
import yaml

from kubeview.cluster.local import ca_status
from kubeview.cluster.local.autoscaler import GROUP_LABEL, Group, plan, template_allocation
from kubeview.cluster.local.config import DEFAULT_FILE, ClusterFileError, load_cluster, parse_cluster
from kubeview.cluster.local.state import LocalCluster
from kubeview.model.views import PodView

TAINT = {"key": "kubeview.local/pool", "value": "batch", "effect": "NoSchedule"}
TOLERATE = [{"key": "kubeview.local/pool", "operator": "Exists", "effect": "NoSchedule"}]
MAX_REACHED = "pod didn't trigger scale-up: 1 max node group size reached"


def group_doc(name: str = "batch-pool", max_size: int = 6, delay: float = 5, cpu: str = "8", **extra: object) -> dict:
    return {"name": name, "minSize": 0, "maxSize": max_size, "provisionSeconds": delay,
            "template": {"labels": {"pool": name}, "capacity": {"cpu": cpu, "memory": "32Gi"}, "taints": [TAINT]},
            **extra}


def frames(replicas: int, cpu: str = "1", group: str = "batch-pool", name: str = "frames") -> dict:
    return {"kind": "ReplicaSet", "metadata": {"name": name, "namespace": "farm"},
            "spec": {"replicas": replicas, "template": {"metadata": {"labels": {"app": name}}, "spec": {
                "nodeSelector": {GROUP_LABEL: group}, "tolerations": TOLERATE,
                "containers": [{"name": "f", "image": "frame", "resources": {"requests": {"cpu": cpu,
                                                                                          "memory": "2Gi"}}}]}}}}


def ca_events(cluster: LocalCluster, reason: str | None = None) -> list[dict]:
    return [e for e in cluster.list("Event") if (e.get("source") or {}).get("component") == ca_status.COMPONENT
            and (reason is None or e["reason"] == reason)]


def last_words(cluster: LocalCluster) -> dict[str, str]:
    """Pod name -> the message of the last scale-up Event recorded on it."""
    out: dict[str, tuple[int, str]] = {}
    for e in ca_events(cluster):
        if e["involvedObject"]["kind"] == "Pod":
            rv = int(e["metadata"]["resourceVersion"])
            if rv >= out.get(e["involvedObject"]["name"], (-1, ""))[0]:
                out[e["involvedObject"]["name"]] = (rv, e["message"])
    return {k: v for k, (_, v) in out.items()}


def status(cluster: LocalCluster) -> dict:
    cm = cluster.get("ca.Status", ca_status.NAMESPACE, ca_status.NAME)
    assert cm is not None
    return yaml.safe_load(cm["data"]["status"])


def farm(cluster: LocalCluster) -> list[dict]:
    return [p for p in cluster.list("Pod") if p["metadata"]["namespace"] == "farm"]


# --- CA's words ------------------------------------------------------------------------------------
def test_messages_are_cas_format_strings() -> None:
    info = ca_status.scale_up_info("batch-pool", 0, 6, 6)
    assert ca_status.triggered([info]) == "pod triggered scale-up: [{batch-pool 0->6 (max: 6)}]"
    assert ca_status.not_triggered(["max node group size reached", "node(s) had untolerated taint(s)",
                                    "node(s) had untolerated taint(s)"]) == (
        "pod didn't trigger scale-up: 2 node(s) had untolerated taint(s), 1 max node group size reached")
    assert ca_status.scaled_up_group("g", 6, 2, 6, done=False) == "Scale-up: setting group g size to 6 instead of 2 (max: 6)"
    assert ca_status.scaled_up_group("g", 6, 2, 6, done=True) == "Scale-up: group g size set to 6 instead of 2 (max: 6)"


def test_status_document_is_cas_yaml() -> None:
    """api.ClusterAutoscalerStatus through sigs.k8s.io/yaml: JSON names, sorted keys, quoted RFC 3339 times."""
    g = ca_status.GroupState("batch-pool", 0, 6, 6, 2, 4, ca_status.IN_PROGRESS)
    doc = ca_status.status_document([g], 1700000000.25)
    text = ca_status.status_yaml(doc)
    assert text.splitlines()[:2] == ["autoscalerStatus: Running", "clusterWide:"]
    assert 'lastProbeTime: "2023-11-14T22:13:20Z"' in text and "time: 2023-11-14 22:13:20.25 +0000 UTC" in text
    back = yaml.safe_load(text)
    (ng,) = back["nodeGroups"]
    assert sorted(ng) == ["health", "name", "scaleDown", "scaleUp"]
    assert sorted(ng["health"]) == ["cloudProviderTarget", "lastProbeTime", "lastTransitionTime", "maxSize",
                                    "minSize", "nodeCounts", "status"]
    assert ng["health"]["nodeCounts"] == {"longUnregistered": 0, "unregistered": 4, "registered": {
        "total": 2, "ready": 2, "notStarted": 0, "suspended": 0, "unready": {"total": 0, "resourceUnready": 0}}}
    assert (ng["health"]["cloudProviderTarget"], ng["health"]["minSize"], ng["health"]["maxSize"]) == (6, 0, 6)
    assert ng["scaleUp"] == {"status": "InProgress", "backoffInfo": {}, "lastProbeTime": "2023-11-14T22:13:20Z",
                             "lastTransitionTime": "2023-11-14T22:13:20Z"}
    assert back["clusterWide"]["scaleUp"]["status"] == "InProgress"
    assert back["clusterWide"]["health"]["nodeCounts"]["unregistered"] == 4
    backoff = ca_status.GroupState("g", 0, 9, 3, 3, 0, ca_status.BACKOFF, "QUOTA_EXCEEDED", "Quota 'CPUS' exceeded.")
    assert yaml.safe_load(ca_status.status_yaml(ca_status.status_document([backoff], 0)))["nodeGroups"][0][
        "scaleUp"]["backoffInfo"] == {"errorCode": "QUOTA_EXCEEDED", "errorMessage": "Quota 'CPUS' exceeded."}
    cm = ca_status.configmap(doc, 1700000000.25, {"name": ca_status.NAME, "namespace": "kube-system"})
    assert re.fullmatch(r"2023-11-14 22:13:20\.25 \+0000 UTC", cm["metadata"]["annotations"][ca_status.LAST_UPDATED])


def test_a_condition_keeps_its_transition_time_while_it_stays() -> None:
    g = ca_status.GroupState("g", 0, 6, 6, 0, 6, ca_status.IN_PROGRESS)
    first = ca_status.status_document([g], 100.0)
    same = ca_status.status_document([g], 200.0, first)
    done = ca_status.status_document([ca_status.GroupState("g", 0, 6, 6, 6, 0, ca_status.NO_ACTIVITY)], 300.0, same)
    up = [d["nodeGroups"][0]["scaleUp"] for d in (first, same, done)]
    assert [u["lastTransitionTime"] for u in up] == [ca_status.rfc3339(100), ca_status.rfc3339(100), ca_status.rfc3339(300)]
    assert [u["lastProbeTime"] for u in up] == [ca_status.rfc3339(t) for t in (100, 200, 300)]
    assert done["nodeGroups"][0]["health"]["lastTransitionTime"] == ca_status.rfc3339(100)  # Healthy throughout


# --- one loop's decision ---------------------------------------------------------------------------
def _groups(**over: object) -> list[Group]:
    cfg = parse_cluster(yaml.safe_dump({"nodeGroups": [group_doc()]}), "g.yaml")
    alloc = template_allocation(cfg.node_groups[0], load_cluster().system)
    base = {"name": "batch-pool", "max_size": 6, "target": 0, "upcoming": 0, "alloc": alloc}
    return [Group(**{**base, **over})]  # type: ignore[arg-type]


def _pods(n: int, cpu: int = 1000, tolerate: bool = True, ns: str = "farm") -> list[tuple[tuple[str, str], PodView]]:
    out = []
    for i in range(n):
        spec = {"containers": [{"name": "c", "resources": {"requests": {"cpu": f"{cpu}m"}}}]}
        if tolerate:
            spec["tolerations"] = TOLERATE
        view = PodView.from_api({"metadata": {"name": f"p{i}", "namespace": ns}, "spec": spec, "status": {}})
        out.append(((ns, f"p{i}"), view))
    return out


def test_a_loop_asks_for_what_the_pods_need_capped_at_the_max() -> None:
    """266 one-cpu pods, 7 to a template node (8 cpu less flannel's 100m): 38 nodes wanted, 6 asked for,
    and the 42 pods those take are the ones that triggered it."""
    decision = plan(_groups(), _pods(266))
    assert decision.scale_up == ("batch-pool", 0, 6)
    assert decision.triggered == [("farm", f"p{i}") for i in range(42)]
    assert decision.wanted == {"batch-pool": 38} and decision.not_triggered == {}


def test_pods_that_fit_on_coming_nodes_wait_quietly_and_the_rest_hear_the_max() -> None:
    decision = plan(_groups(target=6, upcoming=6), _pods(50))
    assert decision.scale_up is None and len(decision.upcoming) == 42
    assert set(decision.not_triggered.values()) == {MAX_REACHED} and len(decision.not_triggered) == 8
    assert decision.wanted == {"batch-pool": 8}  # 6 + the 2 the other 8 would need


def test_a_group_below_its_max_rejects_a_pod_it_cannot_take_in_the_schedulers_words() -> None:
    untolerated = plan(_groups(), _pods(2, tolerate=False))
    assert set(untolerated.not_triggered.values()) == {"pod didn't trigger scale-up: 1 node(s) had untolerated taint(s)"}
    too_big = plan(_groups(), _pods(1, cpu=9000))
    assert too_big.not_triggered == {("farm", "p0"): "pod didn't trigger scale-up: 1 Insufficient cpu"}
    assert too_big.scale_up is None


def test_a_skipped_group_gives_its_reason_to_the_pods_it_could_take() -> None:
    """As CA with --scaleup-simulation-for-skipped-node-groups-enabled=true: a group at its max (or
    backing off) gives its reason to a pod it could take, and its rejection to one it never could."""
    at_max = plan(_groups(target=6), _pods(1) + _pods(1, tolerate=False, ns="other"))
    assert at_max.not_triggered == {("farm", "p0"): MAX_REACHED,
                                    ("other", "p0"): "pod didn't trigger scale-up: 1 node(s) had untolerated taint(s)"}
    backing_off = plan(_groups(backoff=True), _pods(1))
    assert backing_off.not_triggered == {("farm", "p0"): "pod didn't trigger scale-up: 1 in backoff after failed scale-up"}


def test_the_option_that_helps_most_pods_wins() -> None:
    small, big = _groups(max_size=1)[0], _groups(max_size=6)[0]
    decision = plan([Group("a-small", 1, 0, 0, small.alloc), Group("b-big", 6, 0, 0, big.alloc)], _pods(20))
    assert decision.scale_up == ("b-big", 0, 3) and len(decision.triggered) == 20


# --- the cluster, on the test's clock ----------------------------------------------------------------
class Clock:
    def __init__(self, t: float = 1_800_000_000.0) -> None:
        self.t = t

    def __call__(self) -> float:
        return self.t


def clocked(*groups: dict, seed: int = 7) -> tuple[LocalCluster, Clock]:
    doc = yaml.safe_load(DEFAULT_FILE.read_text())
    doc["nodeGroups"] = list(groups)
    clock = Clock()
    return LocalCluster(parse_cluster(yaml.safe_dump(doc), "test.yaml"), seed=seed, clock=clock), clock


def test_nodes_come_after_the_provisioning_delay_and_cas_outputs_say_each_step() -> None:
    cluster, clock = clocked(group_doc(delay=5))
    before = {n["metadata"]["name"] for n in cluster.list("Node")}
    cluster.apply_workload(frames(50))
    cluster.autoscale(clock())
    up = status(cluster)["nodeGroups"][0]
    assert (up["scaleUp"]["status"], up["health"]["cloudProviderTarget"]) == ("InProgress", 6)
    assert up["health"]["nodeCounts"]["unregistered"] == 6 and up["health"]["nodeCounts"]["registered"]["total"] == 0
    assert {e["message"] for e in ca_events(cluster, "ScaledUpGroup")} == {
        "Scale-up: setting group batch-pool size to 6 instead of 0 (max: 6)",
        "Scale-up: group batch-pool size set to 6 instead of 0 (max: 6)"}
    assert all(e["involvedObject"]["kind"] == "ConfigMap" for e in ca_events(cluster, "ScaledUpGroup"))
    triggered = ca_events(cluster, "TriggeredScaleUp")
    assert len(triggered) == 42 and {e["message"] for e in triggered} == {
        "pod triggered scale-up: [{batch-pool 0->6 (max: 6)}]"}
    clock.t += 4.9
    cluster.autoscale(clock())  # not yet: the nodes still provision; the 8 pods beyond them hear the max
    assert {n["metadata"]["name"] for n in cluster.list("Node")} == before
    assert sorted(last_words(cluster).values()).count(MAX_REACHED) == 8
    clock.t += 0.1
    cluster.autoscale(clock())
    new = [n for n in cluster.list("Node") if n["metadata"]["name"] not in before]
    assert len(new) == 6 and all(n["metadata"]["labels"][GROUP_LABEL] == "batch-pool" for n in new)
    assert all(re.fullmatch(r"batch-pool-[a-z0-9]{5}", n["metadata"]["name"]) for n in new)
    assert all(n["spec"]["taints"] == [TAINT] for n in new)
    daemons = [p for p in cluster.list("Pod") if p["spec"].get("nodeName") in {n["metadata"]["name"] for n in new}
               and p["metadata"]["namespace"] != "farm"]
    assert sorted(p["metadata"]["name"].rsplit("-", 1)[0] for p in daemons) == ["kube-flannel-ds"] * 6 + ["kube-proxy"] * 6
    bound = [p for p in farm(cluster) if p["spec"].get("nodeName")]
    assert len(bound) == 42 and len(farm(cluster)) == 50
    done = status(cluster)["nodeGroups"][0]
    assert (done["scaleUp"]["status"], done["health"]["nodeCounts"]["registered"]["ready"]) == ("NoActivity", 6)


def test_the_same_words_are_not_recorded_again_each_loop() -> None:
    cluster, clock = clocked(group_doc(max_size=1, delay=0))
    cluster.apply_workload(frames(10))
    for _ in range(4):
        cluster.autoscale(clock())
        clock.t += 10
    words = [e for e in ca_events(cluster, "NotTriggerScaleUp")]
    assert len(words) == 3 and all(e["count"] == 1 for e in words)  # 10 pods, 7 placed on the one node
    clock.t += 60  # REPEAT_SECONDS after they were said: said again, counted up as CA's recorder does
    cluster.autoscale(clock())
    assert [e["count"] for e in ca_events(cluster, "NotTriggerScaleUp")] == [2, 2, 2]
    written = [e for e in cluster.events if e.kind == "ca.Status"]
    assert written and all(e.obj["kind"] == "ConfigMap" and e.obj["apiVersion"] == "v1" for e in written)
    assert written[-1].obj["metadata"]["labels"]["app.kubernetes.io/managed-by"] == "kubeview"


def test_words_pushed_out_of_the_kept_events_are_said_again(monkeypatch: pytest.MonkeyPatch) -> None:
    """The cluster keeps its last MAX_EVENTS Events; a busy batch pushes out the oldest. CA says it again
    every loop, so a pod still waiting gets its words back (the Pods screen would lose them otherwise)."""
    from kubeview.cluster.local import state

    monkeypatch.setattr(state, "MAX_EVENTS", 30)
    cluster, clock = clocked(group_doc(max_size=1, delay=0))
    cluster.apply_workload(frames(10))
    for _ in range(2):
        cluster.autoscale(clock())
        clock.t += 10
    waiting = {p["metadata"]["name"] for p in farm(cluster) if not p["spec"].get("nodeName")}
    assert set(last_words(cluster)) >= waiting and len(waiting) == 3
    cluster.apply_workload({**frames(20, name="other"), "metadata": {"name": "other", "namespace": "busy"}})
    assert not waiting & set(last_words(cluster))  # 20 SuccessfulCreate and more pushed them out
    cluster.autoscale(clock())
    assert {k: v for k, v in last_words(cluster).items() if k in waiting} == dict.fromkeys(waiting, MAX_REACHED)


def test_a_cluster_without_groups_has_no_autoscaler() -> None:
    cluster = LocalCluster(load_cluster(), seed=1)
    assert cluster.autoscale(0.0) is None
    assert "ca.Status" not in {listed.kind for listed in cluster.snapshot()}


@pytest.mark.parametrize(("text", "message"), [
    ("nodeGroups: [{name: g, maxSize: 2, template: {capacity: {cpu: 8}}}]", "nodeGroups[0].template.capacity.memory: missing"),
    ("nodeGroups: [{name: g, template: {capacity: {cpu: 8, memory: 1Gi}}}]", "nodeGroups[0].maxSize: must be a non-negative"),
    ("nodeGroups: [{name: g, minSize: 3, maxSize: 2, template: {capacity: {cpu: 8, memory: 1Gi}}}]",
     "nodeGroups[0].size: must be between minSize 3 and maxSize 2"),
    ("nodeGroups: [{name: g, maxSize: 2, zones: [a], template: {capacity: {cpu: 8, memory: 1Gi}}}]",
     "nodeGroups[0].zones: unknown field"),
])
def test_a_bad_node_group_is_one_line(text: str, message: str) -> None:
    with pytest.raises(ClusterFileError) as err:
        parse_cluster(text, "c.yaml")
    assert str(err.value).startswith(f"c.yaml: {message}") and "\n" not in str(err.value)


@pytest.mark.parametrize("seed", range(12))
def test_random_batches_never_pass_the_max_and_every_waiting_pod_hears_why(seed: int) -> None:
    """Seeded random groups and batches, driven loop by loop until nothing is coming: a group never has
    more nodes than its max, no node registers before its delay, and every pod still waiting got CA's
    words last: the max (its group is full) or, for a pod no template takes, its group's rejection."""
    rng = random.Random(seed)
    groups = [group_doc(name=f"pool-{i}", max_size=rng.randint(0, 5), delay=rng.choice([0, 3, 10]),
                        cpu=str(rng.choice([4, 8, 16]))) for i in range(rng.randint(1, 2))]
    cluster, clock = clocked(*groups, seed=seed)
    for i in range(rng.randint(1, 3)):
        pool = rng.choice(groups)["name"]
        cluster.apply_workload(frames(rng.randint(1, 40), cpu=str(rng.choice([1, 2, 3, 20])), group=pool,
                                      name=f"batch-{i}"))
    asked: dict[str, float] = {}
    for _ in range(12):
        cluster.autoscale(clock())
        for run in cluster.groups.values():
            assert len(run.nodes) <= run.target <= run.spec.max_size
            for due in run.due:
                asked.setdefault(f"{run.spec.name}@{due}", due)
        for node in cluster.list("Node"):
            group = node["metadata"]["labels"].get(GROUP_LABEL)
            if group is not None:
                assert any(k.startswith(f"{group}@") and v <= clock() for k, v in asked.items()) or \
                    cluster.groups[group].spec.size > 0
        clock.t += rng.choice([1, 4, 11])
        if cluster.next_due() is None and _ > 3:
            break
    said = last_words(cluster)
    for pod in farm(cluster):
        if pod["spec"].get("nodeName"):
            continue
        words = said.get(pod["metadata"]["name"], "")
        assert words.startswith("pod didn't trigger scale-up: "), (pod["metadata"]["name"], words)
        run = cluster.groups[pod["spec"]["nodeSelector"][GROUP_LABEL]]
        cpu = int(pod["spec"]["containers"][0]["resources"]["requests"]["cpu"]) * 1000
        if cpu > int(run.spec.template.allocatable["cpu"]) * 1000 - 100:  # flannel's 100m on every node
            assert "Insufficient cpu" in words, words
        elif run.target >= run.spec.max_size:
            assert "1 max node group size reached" in words, words
        else:
            raise AssertionError(f"{pod['metadata']['name']} waits while its group can grow: {words}")
