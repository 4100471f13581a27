"""The embedded cluster's ResourceQuota: admission in the API server's words, the Job and ReplicaSet
controllers' FailedCreate and status, the quota controller's status.used. The cluster's state alone
(LocalCluster, no processes): a pod ends by the kubelet's report (`container_exited`)."""

from __future__ import annotations

import pytest

from kubeview.cluster.local import quota_admission as qa
from kubeview.cluster.local.config import load_cluster
from kubeview.cluster.local.objects import admit_pod
from kubeview.cluster.local.state import LocalCluster
from kubeview.cluster.source import ActionError

GPU_TOL = [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}]


def quota(hard: dict, name: str = "gpus", ns: str = "team-a", **spec: object) -> dict:
    return {"kind": "ResourceQuota", "metadata": {"name": name, "namespace": ns}, "spec": {"hard": hard, **spec}}


def container(gpus: int = 1, cpu: str = "1", memory: str = "1Gi") -> dict:
    return {"name": "train", "image": "trainer:1", "command": ["sleep", "1000"],
            "resources": {"requests": {"cpu": cpu, "memory": memory},
                          **({"limits": {"nvidia.com/gpu": str(gpus)}} if gpus else {})}}


def job(name: str = "sweep", parallelism: int = 3, indexed: bool = False, gpus: int = 1) -> dict:
    return {"kind": "Job", "metadata": {"name": name, "namespace": "team-a"},
            "spec": {"parallelism": parallelism, "completions": parallelism,
                     **({"completionMode": "Indexed"} if indexed else {}),
                     "template": {"spec": {"restartPolicy": "Never", "tolerations": GPU_TOL,
                                           "containers": [container(gpus)]}}}}


def pods(c: LocalCluster, ns: str = "team-a") -> list[dict]:
    return [p for p in c.list("Pod") if p["metadata"]["namespace"] == ns]


def failed_creates(c: LocalCluster) -> list[tuple[str, str, int]]:
    return [(e["involvedObject"]["name"], e["message"], e["count"]) for e in c.list("Event")
            if e["reason"] == "FailedCreate"]


def used(c: LocalCluster, name: str = "gpus") -> dict:
    return (c.get("ResourceQuota", "team-a", name) or {})["status"]["used"]


@pytest.fixture
def cluster() -> LocalCluster:
    return LocalCluster(load_cluster(), seed=7)


def test_a_job_past_its_gpu_quota_gets_two_pods_and_the_api_servers_refusal(cluster: LocalCluster) -> None:
    cluster.apply_workload(quota({"requests.nvidia.com/gpu": "2"}))
    assert used(cluster) == {"requests.nvidia.com/gpu": "0"}
    cluster.apply_workload(job())
    made = pods(cluster)
    assert len(made) == 2
    assert used(cluster) == {"requests.nvidia.com/gpu": "2"}
    [(owner, message, count)] = failed_creates(cluster)
    assert owner == "sweep" and count == 1
    assert message.startswith('Error creating: pods "sweep-')
    assert message.endswith('" is forbidden: exceeded quota: gpus, requested: requests.nvidia.com/gpu=1, '
                            "used: requests.nvidia.com/gpu=2, limited: requests.nvidia.com/gpu=2")
    event = next(e for e in cluster.list("Event") if e["reason"] == "FailedCreate")
    assert event["type"] == "Warning" and event["source"] == {"component": "job-controller"}
    status = cluster.get("Job", "team-a", "sweep")["status"]
    assert status["active"] == 2
    cluster.reconcile()  # retries add nothing: the same refusal is the same fact
    assert len(failed_creates(cluster)) == 1 and len(pods(cluster)) == 2

    cluster.apply_workload(quota({"requests.nvidia.com/gpu": "3"}))  # raised: the held pod is created
    assert len(pods(cluster)) == 3
    assert used(cluster) == {"requests.nvidia.com/gpu": "3"}
    assert cluster.get("Job", "team-a", "sweep")["status"]["active"] == 3
    # the refused pod took no name: the one created is the name the refusal gave
    refused = message.split('"')[1]
    assert refused in {p["metadata"]["name"] for p in pods(cluster)}


def test_a_deleted_quota_holds_nothing_back(cluster: LocalCluster) -> None:
    cluster.apply_workload(quota({"requests.nvidia.com/gpu": "1"}))
    cluster.apply_workload(job(parallelism=3))
    assert len(pods(cluster)) == 1
    cluster.delete_workload("ResourceQuota", "team-a", "gpus")
    assert len(pods(cluster)) == 3 and cluster.quotas_of("team-a") == []


def test_a_finished_pod_frees_its_share_and_the_held_index_is_created(cluster: LocalCluster) -> None:
    cluster.apply_workload(quota({"requests.nvidia.com/gpu": "1", "requests.cpu": "4", "pods": "10"}))
    cluster.apply_workload(job("ranks", parallelism=2, indexed=True))
    [first] = pods(cluster)
    assert first["metadata"]["annotations"]["batch.kubernetes.io/job-completion-index"] == "0"
    assert used(cluster) == {"pods": "1", "requests.cpu": "1", "requests.nvidia.com/gpu": "1"}
    key = ("team-a", first["metadata"]["name"])
    cluster.container_started(key, 4242, 0)
    cluster.container_exited(key, 0, 0, None)
    live = [p for p in pods(cluster) if p["status"]["phase"] not in ("Succeeded", "Failed")]
    assert [p["metadata"]["annotations"]["batch.kubernetes.io/job-completion-index"] for p in live] == ["1"]
    assert used(cluster) == {"pods": "1", "requests.cpu": "1", "requests.nvidia.com/gpu": "1"}


def test_a_replicaset_says_replica_failure_until_the_quota_allows_it(cluster: LocalCluster) -> None:
    cluster.apply_workload(quota({"requests.cpu": "1500m", "requests.memory": "4Gi"}, name="compute"))
    rs = {"kind": "ReplicaSet", "metadata": {"name": "web", "namespace": "team-a"},
          "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "web"}},
                   "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [container(0)]}}}}
    cluster.apply_workload(rs)
    assert len(pods(cluster)) == 1
    assert used(cluster, "compute") == {"requests.cpu": "1", "requests.memory": "1Gi"}
    status = cluster.get("ReplicaSet", "team-a", "web")["status"]
    [cond] = status["conditions"]
    assert (cond["type"], cond["status"], cond["reason"]) == ("ReplicaFailure", "True", "FailedCreate")
    assert cond["message"].endswith(" is forbidden: exceeded quota: compute, requested: requests.cpu=1, "
                                    "used: requests.cpu=1, limited: requests.cpu=1500m")
    [(owner, message, _)] = failed_creates(cluster)
    assert owner == "web" and message == f"Error creating: {cond['message']}"
    cluster.apply_workload(quota({"requests.cpu": "2", "requests.memory": "4Gi"}, name="compute"))
    assert len(pods(cluster)) == 2
    assert "conditions" not in cluster.get("ReplicaSet", "team-a", "web")["status"]


def test_a_bare_pod_is_refused_in_one_line(cluster: LocalCluster) -> None:
    cluster.apply_workload(quota({"requests.cpu": "1", "requests.memory": "1Gi"}, name="compute"))
    bare = {"metadata": {"name": "bare", "namespace": "team-a"},
            "spec": {"containers": [{"name": "c", "image": "x"}, {"name": "d", "image": "y"}]}}
    with pytest.raises(ActionError) as refused:
        cluster.create_pod(bare)
    assert str(refused.value) == ('pods "bare" is forbidden: failed quota: compute: must specify requests.cpu '
                                  "for: c,d; requests.memory for: c,d")
    big = {"metadata": {"name": "big", "namespace": "team-a"},
           "spec": {"containers": [container(0, cpu="1500m", memory="512Mi")]}}
    with pytest.raises(ActionError, match=r'^pods "big" is forbidden: exceeded quota: compute, '
                                          r"requested: requests.cpu=1500m, used: requests.cpu=0, "
                                          r"limited: requests.cpu=1$"):
        cluster.create_pod(big)
    assert pods(cluster) == []
    elsewhere = {**bare, "metadata": {"name": "bare", "namespace": "default"}}
    cluster.create_pod(elsewhere)  # another namespace's quota does not apply


def test_scopes_choose_the_pods_a_quota_counts(cluster: LocalCluster) -> None:
    cluster.apply_workload(quota({"requests.nvidia.com/gpu": "1"}, name="high", scopeSelector={"matchExpressions": [
        {"scopeName": "PriorityClass", "operator": "In", "values": ["high"]}]}))
    low = job("low", parallelism=2)
    cluster.apply_workload(low)
    assert len(pods(cluster)) == 2 and used(cluster, "high") == {"requests.nvidia.com/gpu": "0"}
    high = job("high", parallelism=2)
    high["spec"]["template"]["spec"]["priorityClassName"] = "high"
    cluster.apply_workload(high)
    assert len([p for p in pods(cluster) if p["metadata"]["name"].startswith("high-")]) == 1
    assert used(cluster, "high") == {"requests.nvidia.com/gpu": "1"}


def test_quota_figures_are_written_as_the_api_server_writes_them() -> None:
    assert qa.text("requests.cpu", 2500) == "2500m" and qa.text("requests.cpu", 3000) == "3"
    assert qa.text("requests.memory", 3 * 2**30, "8Gi") == "3Gi"
    assert qa.text("requests.memory", 3 * 10**9, "8G") == "3G"
    assert qa.text("requests.nvidia.com/gpu", 8) == "8"
    pod = admit_pod({"metadata": {"name": "p"}, "spec": {"containers": [container(2, cpu="500m")]}})
    assert qa.pod_usage(pod) == {"cpu": 500, "requests.cpu": 500, "memory": 2**30, "requests.memory": 2**30,
                                 "requests.nvidia.com/gpu": 2, "pods": 1, "count/pods": 1}
    assert qa.pod_usage({**pod, "status": {"phase": "Succeeded"}}) == {}
