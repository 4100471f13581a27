"""The quota model (model/quota/): ResourceQuota views, kubeview's count beside the controller's, and
"held by quota" read from a controller's FailedCreate Events (the API server's words, as
k8s.io/apiserver 0.37.2's plugin/resourcequota/controller.go writes them and the real plane's
tests/realk8s/test_quota_real.py records)."""

from __future__ import annotations

from kubeview.model.cluster import ClusterModel
from kubeview.model.events import Listed, WatchEvent
from kubeview.model.kinds import quota_unavailable
from kubeview.model.quota.held import parse_refusal
from kubeview.model.quota.objects import QuotaView, amount_text

GPU_MSG = ('Error creating: pods "train-x7k2p" is forbidden: exceeded quota: gpus, requested: '
           "requests.nvidia.com/gpu=1, used: requests.nvidia.com/gpu=2, limited: requests.nvidia.com/gpu=2")


def quota(ns: str = "team-a", name: str = "gpus", hard: dict | None = None, used: dict | None = None,
          rv: str = "1", **spec: object) -> dict:
    obj: dict = {"kind": "ResourceQuota", "metadata": {"namespace": ns, "name": name, "resourceVersion": rv},
                 "spec": {"hard": hard or {"requests.nvidia.com/gpu": "2"}, **spec}}
    if used is not None:
        obj["status"] = {"hard": obj["spec"]["hard"], "used": used}
    return obj


def pod(ns: str, name: str, gpus: int = 1, cpu: str = "500m", phase: str = "Running", job: str | None = None,
        index: int | None = None) -> dict:
    labels = {"batch.kubernetes.io/job-name": job} if job else {}
    ann = {"batch.kubernetes.io/job-completion-index": str(index)} if index is not None else {}
    res = {"cpu": cpu, **({"nvidia.com/gpu": str(gpus)} if gpus else {})}
    return {"metadata": {"namespace": ns, "name": name, "uid": name, "labels": labels, "annotations": ann,
                         "resourceVersion": "1"},
            "spec": {"nodeName": "n1", "containers": [{"name": "c", "resources": {"requests": res, "limits": res}}]},
            "status": {"phase": phase}}


def job(ns: str, name: str, parallelism: int = 3, completions: int | None = None, indexed: bool = False,
        active: int = 2) -> dict:
    spec: dict = {"parallelism": parallelism}
    if completions is not None:
        spec["completions"] = completions
    if indexed:
        spec["completionMode"] = "Indexed"
    return {"metadata": {"namespace": ns, "name": name, "uid": f"uid-{name}", "resourceVersion": "1"},
            "spec": spec, "status": {"active": active}}


def event(ns: str, kind: str, name: str, message: str, reason: str = "FailedCreate", uid: str = "",
          count: int = 1, ev: str = "e1") -> dict:
    return {"metadata": {"namespace": ns, "name": ev, "resourceVersion": ev},
            "involvedObject": {"kind": kind, "namespace": ns, "name": name, "uid": uid},
            "type": "Warning", "reason": reason, "message": message, "count": count,
            "source": {"component": "job-controller"}, "firstTimestamp": "2026-11-29T10:00:00Z",
            "lastTimestamp": "2026-11-29T10:00:05Z"}


def test_quota_view_reads_hard_used_and_scopes() -> None:
    v = QuotaView.from_api(quota(hard={"requests.cpu": "4", "limits.memory": "8Gi", "pods": "10",
                                       "count/jobs.batch": "3"},
                                 used={"requests.cpu": "1500m", "pods": "2"},
                                 scopeSelector={"matchExpressions": [
                                     {"scopeName": "PriorityClass", "operator": "In", "values": ["high"]}]}))
    assert v.hard == {"requests.cpu": 4000, "limits.memory": 8 * 2**30, "pods": 10, "count/jobs.batch": 3}
    assert v.used == {"requests.cpu": 1500, "pods": 2} and v.reported
    assert v.hard_text["limits.memory"] == "8Gi" and v.used_text["requests.cpu"] == "1500m"
    assert str(v.scope_selector[0]) == "PriorityClass In [high]"
    assert v.room("requests.cpu") == 2500 and v.room("requests.nvidia.com/gpu") is None
    assert not QuotaView.from_api(quota()).reported
    assert [amount_text("requests.cpu", 1500), amount_text("cpu", 2000), amount_text("limits.memory", 8 * 2**30),
            amount_text("pods", 3)] == ["1500m", "2", "8Gi", "3"]


def test_counted_beside_the_controllers_used() -> None:
    m = ClusterModel()
    m.apply(Listed("ResourceQuota", [quota(hard={"requests.nvidia.com/gpu": "4", "requests.cpu": "2", "pods": "5",
                                                 "limits.cpu": "4", "count/jobs.batch": "2"},
                                           used={"requests.nvidia.com/gpu": "3", "requests.cpu": "1", "pods": "3"})]))
    m.apply(Listed("Pod", [pod("team-a", "a"), pod("team-a", "b", gpus=2), pod("team-a", "done", phase="Succeeded"),
                           pod("team-b", "other", gpus=8)]))
    uses = {u.key: u for u in m.quota_uses()[("team-a", "gpus")]}
    assert [uses[k].counted for k in sorted(uses)] == [None, 1000, 2, 1000, 3]
    gpu = uses["requests.nvidia.com/gpu"]
    assert (gpu.hard, gpu.used, gpu.counted, gpu.differs, gpu.full) == (4, 3, 3, False, False)
    assert uses["pods"].differs and uses["limits.cpu"].used is None and not uses["limits.cpu"].differs
    assert uses["count/jobs.batch"].counted is None and uses["requests.cpu"].counted_text() == "1"


def test_scopes_kubeview_cannot_read_are_not_counted() -> None:
    m = ClusterModel()
    m.apply(Listed("ResourceQuota", [quota(scopes=["Terminating"]),
                                     quota(name="be", hard={"pods": "3"}, scopes=["BestEffort"])]))
    m.apply(Listed("Pod", [pod("team-a", "a"), pod("team-a", "be", gpus=0, cpu="0")]))
    uses = m.quota_uses()
    assert uses[("team-a", "gpus")][0].counted is None
    be = dict(pod("team-a", "be2"))
    be["spec"] = {"nodeName": "n1", "containers": [{"name": "c"}]}
    m.apply(WatchEvent("Pod", "ADDED", be))
    assert m.quota_uses()[("team-a", "be")][0].counted == 1  # only the pod with no cpu/memory at all


def test_parse_refusal_upstream_words() -> None:
    r = parse_refusal(GPU_MSG)
    assert r is not None and (r.quota, r.pod) == ("gpus", "train-x7k2p")
    assert r.requested == {"requests.nvidia.com/gpu": "1"} and r.limited == {"requests.nvidia.com/gpu": "2"}
    many = parse_refusal('create Pod db-2 in StatefulSet db failed error: pods "db-2" is forbidden: exceeded quota: '
                         "team, requested: requests.cpu=2,requests.memory=1Gi, used: requests.cpu=7,requests.memory=3Gi, "
                         "limited: requests.cpu=8,requests.memory=4Gi")
    assert many is not None and many.used == {"requests.cpu": "7", "requests.memory": "3Gi"}
    spec = parse_refusal('Error creating: pods "x-1" is forbidden: failed quota: gpus: must specify requests.nvidia.com/gpu')
    assert spec is not None and spec.must_specify == ("requests.nvidia.com/gpu",)
    assert parse_refusal("Error creating: pods is forbidden: unable to validate against any security policy") is None


def held_model(hard: str = "2", used: str = "2") -> ClusterModel:
    m = ClusterModel()
    m.apply(Listed("ResourceQuota", [quota(hard={"requests.nvidia.com/gpu": hard},
                                           used={"requests.nvidia.com/gpu": used})]))
    m.apply(Listed("Job", [job("team-a", "train")]))
    m.apply(Listed("Pod", [pod("team-a", "train-a", job="train"), pod("team-a", "train-b", job="train")]))
    m.apply(Listed("Event", [event("team-a", "Job", "train", GPU_MSG, uid="uid-train", count=4)]))
    return m


def test_job_held_by_quota_in_one_wording() -> None:
    m = held_model()
    held = m.held()[("Job", "team-a", "train")]
    assert held.words() == "held by quota gpus: requests.nvidia.com/gpu 2/2 — 1 pod not created"
    assert held.message == GPU_MSG and held.not_created == 1
    assert held.origin() == "from job-controller's FailedCreate Events (x4) and the Job's status"


def test_hold_ends_when_the_quota_is_raised_or_the_pod_exists() -> None:
    assert held_model(hard="3").held() == {}  # the controller's count now admits one more
    m = held_model()
    m.apply(WatchEvent("Pod", "ADDED", pod("team-a", "train-c", job="train")))
    assert m.held() == {}  # all three pods exist


def test_a_failure_that_is_not_the_quota_is_not_a_hold() -> None:
    m = held_model()
    m.apply(WatchEvent("Event", "ADDED", {**event("team-a", "Job", "train", "Error creating: pods \"x\" is forbidden: "
                                                  "error looking up service account", ev="e2"),
                                          "firstTimestamp": "2026-11-29T10:00:09Z"}))
    assert m.held() == {}


def test_replicaset_held_and_indexed_strip() -> None:
    from kubeview.model.quota.held import never_created
    m = held_model()
    m.apply(Listed("ReplicaSet", [{"metadata": {"namespace": "team-a", "name": "web-1", "resourceVersion": "1"},
                                   "spec": {"replicas": 4}, "status": {"replicas": 2}}]))
    m.apply(WatchEvent("Event", "ADDED", {**event("team-a", "ReplicaSet", "web-1", GPU_MSG, ev="e3"),
                                          "source": {"component": "replicaset-controller"}}))
    assert m.held()[("ReplicaSet", "team-a", "web-1")].words().endswith("— 2 pods not created")
    m.apply(Listed("Job", [job("team-a", "train", parallelism=3, completions=6, indexed=True)]))
    m.apply(Listed("Pod", [pod("team-a", "train-0", job="train", index=0), pod("team-a", "train-2", job="train", index=2)]))
    held = m.held()[("Job", "team-a", "train")]
    assert never_created(m.jobs.jobs[("team-a", "train")], m.jobs.pods_of("team-a", "train"), held) == {1}


def test_quota_unavailable_words() -> None:
    assert quota_unavailable({"ResourceQuota": "forbidden (403)"}) == "quotas are not shown: forbidden (403)"
    assert quota_unavailable({}) is None


def test_snapshot_quotas_validate_and_carry_the_hold() -> None:
    import json

    from kubeview.snapshot.document import SNAPSHOT_SCHEMA, build_snapshot, snapshot_json
    from kubeview.snapshot.schema import validate
    m = held_model()
    doc = build_snapshot(m, now=0)
    assert validate(doc, SNAPSHOT_SCHEMA) == []
    quotas = doc["quotas"]
    assert quotas["unavailable"] is None and quotas["heldPods"] == 1
    [ns] = quotas["namespaces"]
    assert ns["namespace"] == "team-a" and ns["quotas"][0]["resources"] == [
        {"key": "requests.nvidia.com/gpu", "hard": 2, "used": 2, "counted": 2, "hardText": "2", "usedText": "2",
         "differs": False, "full": True}]
    [held] = ns["held"]
    assert (held["kind"], held["name"], held["message"], held["notCreated"]) == ("Job", "train", GPU_MSG, 1)
    assert held["words"] == "held by quota gpus: requests.nvidia.com/gpu 2/2 — 1 pod not created"
    assert json.loads(snapshot_json(m, now=0))["quotas"] == quotas


def test_admit_pods_is_the_quota_admissions_arithmetic() -> None:
    from kubeview.model.quota.admit import admit_pods
    from kubeview.model.views import PodView
    q = [QuotaView.from_api(quota(hard={"requests.nvidia.com/gpu": "8", "requests.cpu": "4"},
                                  used={"requests.nvidia.com/gpu": "6", "requests.cpu": "1"})),
         QuotaView.from_api(quota(ns="other", hard={"requests.nvidia.com/gpu": "0"}, used={}))]
    one = PodView.from_api(pod("team-a", "p", gpus=1))
    assert admit_pods(q, [one]).admits_all
    three = admit_pods(q, [one, one, one])
    assert (three.admitted, three.total, three.admits_all) == (2, 3, False)
    assert three.words() == "namespace team-a's quota gpus requests.nvidia.com/gpu is 6/8: room for 2 of 3 pods"
    many = admit_pods(q, [], template=one, copies=10**9)  # by arithmetic: cpu 3 cores left / 500m = 6, GPUs 2
    assert (many.admitted, many.block and many.block.key) == (2, "requests.nvidia.com/gpu")
    cpu_bound = admit_pods(q, [], template=PodView.from_api(pod("team-a", "c", gpus=0, cpu="2")), copies=5)
    assert cpu_bound.admitted == 1 and cpu_bound.words() == (
        "namespace team-a's quota gpus requests.cpu is 1/4: room for 1 of 5 pods")
    assert admit_pods(q, [PodView.from_api(pod("elsewhere", "x", gpus=4))]).admits_all  # no quota there
    scoped = [QuotaView.from_api(quota(hard={"pods": "0"}, scopes=["Terminating"]))]
    answer = admit_pods(scoped, [one])
    assert answer.admits_all and answer.notes == ("quota gpus not checked: kubeview does not evaluate scope Terminating",)


def test_dra_device_quota_is_counted_from_the_claims() -> None:
    m = ClusterModel()
    m.apply(Listed("ResourceQuota", [quota(hard={"gpu.example.com.deviceclass.resource.k8s.io/devices": "8",
                                                 "count/resourceclaims.resource.k8s.io": "5"},
                                           used={"gpu.example.com.deviceclass.resource.k8s.io/devices": "6",
                                                 "count/resourceclaims.resource.k8s.io": "3"})]))
    assert [u.counted for u in m.quota_uses()[("team-a", "gpus")]] == [None, None]  # claims not read: not counted

    def claim(name: str, requests: list[dict], ns: str = "team-a") -> dict:
        return {"metadata": {"namespace": ns, "name": name, "uid": name, "resourceVersion": "1"},
                "spec": {"devices": {"requests": requests}}}
    exact = {"name": "r", "exactly": {"deviceClassName": "gpu.example.com", "count": 2}}
    every = {"name": "all", "exactly": {"deviceClassName": "nic.example.com", "allocationMode": "All"}}
    prioritized = {"name": "p", "firstAvailable": [
        {"name": "big", "deviceClassName": "gpu.example.com", "count": 4},
        {"name": "small", "deviceClassName": "gpu.example.com", "count": 1}]}
    m.apply(Listed("ResourceClaim", [claim("a", [exact]), claim("b", [exact, every]), claim("c", [prioritized]),
                                     claim("elsewhere", [exact], ns="team-b")]))
    uses = {u.key: u for u in m.quota_uses()[("team-a", "gpus")]}
    assert uses["gpu.example.com.deviceclass.resource.k8s.io/devices"].counted == 2 + 2 + 4  # the worst subrequest
    assert uses["count/resourceclaims.resource.k8s.io"].counted == 3
    assert uses["gpu.example.com.deviceclass.resource.k8s.io/devices"].differs  # 8 counted, 6 reported
