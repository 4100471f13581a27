"""The embedded cluster records the Events Kubernetes records, in the recordings' shapes and words."""

from __future__ import annotations

import pytest
from kubeapi import fixtures
from test_local_state import consumer_rs, gpu_pod

from kubeview.cluster.local import state as local_state
from kubeview.cluster.local.config import load_cluster
from kubeview.cluster.local.state import LocalCluster
from kubeview.scheduling.config import PackingConfig


def events_of(cluster: LocalCluster, kind: str, namespace: str, name: str) -> list[dict]:
    return [e for e in cluster.list("Event") if (e["involvedObject"]["kind"], e["involvedObject"]["namespace"],
                                                  e["involvedObject"]["name"]) == (kind, namespace, name)]


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_a_pod_that_fits_nowhere_gets_failed_scheduling_as_kube_scheduler_writes_it(seed: int) -> None:
    cluster = LocalCluster(load_cluster(), PackingConfig(policy="spread"), seed=seed)
    for name, gpus in (("gpu-a", 1), ("gpu-b", 1), ("gpu-c", 2)):
        cluster.create_pod(gpu_pod(name, gpus))
    pending = cluster.model.pods[("default", "gpu-c")]
    assert pending.node is None
    (failed,) = events_of(cluster, "Pod", "default", "gpu-c")
    recorded = next(e for e in fixtures.load("events.json")["items"] if e["reason"] == "FailedScheduling")
    assert set(failed) == set(recorded) - {"series"}  # the scheduler's shape: eventTime, action, no source
    assert (failed["type"], failed["reason"], failed["action"], failed["reportingComponent"], failed["source"]) == (
        "Warning", "FailedScheduling", "Scheduling", "default-scheduler", {})
    assert failed["message"] == pending.pending_reason
    # the recorded cluster has the same five nodes: its message is this one plus the preemption part
    assert failed["message"] == "0/5 nodes are available: 5 Insufficient nvidia.com/gpu."
    assert recorded["message"].startswith(failed["message"] + " no new claims to deallocate, preemption: ")
    (placed,) = events_of(cluster, "Pod", "default", "gpu-a")
    node = cluster.model.pods[("default", "gpu-a")].node
    assert (placed["reason"], placed["message"]) == ("Scheduled", f"Successfully assigned default/gpu-a to {node}")
    # the model reads them as the recorded ones: newest last, a Warning for gpu-c
    assert cluster.model.events.latest_warning("Pod", "default", "gpu-c").message == pending.pending_reason
    # the same verdict again counts up in the series instead of a new Event
    cluster.record(dict(failed))
    (again,) = events_of(cluster, "Pod", "default", "gpu-c")
    assert again["series"]["count"] == 2 and again["metadata"]["name"] == failed["metadata"]["name"]
    assert [e.count for e in cluster.model.pod_events(("default", "gpu-c"))] == [2]


def test_the_replicaset_and_deployment_controllers_record_their_events() -> None:
    cluster = LocalCluster(load_cluster(), seed=1)
    cluster.apply_workload(consumer_rs(3))
    cluster.scale("ReplicaSet", "render", "consumer", 1)
    rs = events_of(cluster, "ReplicaSet", "render", "consumer")
    created = [e["message"] for e in rs if e["reason"] == "SuccessfulCreate"]
    deleted = [e["message"] for e in rs if e["reason"] == "SuccessfulDelete"]
    assert len(created) == 3 and all(m.startswith("Created pod: consumer-") for m in created)
    assert len(deleted) == 2 and all(m.replace("Deleted", "Created") in created for m in deleted)
    recorded = next(e for e in fixtures.load("events.json")["items"] if e["reason"] == "SuccessfulCreate")
    assert set(rs[0]) == set(recorded) and rs[0]["source"] == {"component": "replicaset-controller"}
    dep = {"kind": "Deployment", "metadata": {"name": "web", "namespace": "default"},
           "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "web"}},
                    "template": {"metadata": {"labels": {"app": "web"}},
                                 "spec": {"containers": [{"name": "web", "image": "nginx"}]}}}}
    cluster.apply_workload(dep)
    cluster.scale("Deployment", "default", "web", 4)
    (rs_name,) = [r["metadata"]["name"] for r in cluster.list("ReplicaSet") if r["metadata"]["name"].startswith("web-")]
    assert [e["message"] for e in events_of(cluster, "Deployment", "default", "web")] == [
        f"Scaled up replica set {rs_name} from 0 to 2", f"Scaled up replica set {rs_name} from 2 to 4"]


def test_process_pods_get_started_and_killing_from_their_kubelet() -> None:
    cluster = LocalCluster(load_cluster(), seed=1)
    cluster.apply_workload(consumer_rs(1, command=["sleep", "60"]))
    (pod,) = [p for p in cluster.list("Pod") if p["metadata"]["namespace"] == "render"]
    key = ("render", pod["metadata"]["name"])
    cluster.container_started(key, 4242, 0)
    cluster.scale("ReplicaSet", "render", "consumer", 0)
    kubelet = [e for e in events_of(cluster, "Pod", *key) if e["source"].get("component") == "kubelet"]
    node = cluster.get("Pod", *key)["spec"]["nodeName"]
    assert [(e["reason"], e["message"], e["source"]["host"], e["involvedObject"]["fieldPath"]) for e in kubelet] == [
        ("Started", "Started container consumer", node, "spec.containers{consumer}"),
        ("Killing", "Stopping container consumer", node, "spec.containers{consumer}")]
    views = cluster.model.pod_events(key)
    assert [v.reason for v in views] == ["Scheduled", "Started", "Killing"]


def test_events_are_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(local_state, "MAX_EVENTS", 10)
    cluster = LocalCluster(load_cluster(), seed=1)
    cluster.events.clear()
    cluster.apply_workload(consumer_rs(20, cpu="10m"))
    assert len(cluster.list("Event")) == 10
    gone = [e for e in cluster.events if e.kind == "Event" and e.type == "DELETED"]
    assert len(gone) >= 30  # 20 creations and 20 bindings, all but the last 10 deleted again
    assert len(cluster.model.events) == 10
