"""The planner and quota (#40): node room is never freed for a request its namespace's quota refuses;
the one line says which quota. A request in a namespace with room left plans as before."""

from __future__ import annotations

from kubeview.model.cluster import ClusterModel
from kubeview.model.events import Listed
from kubeview.scheduling import PackingConfig
from kubeview.scheduling.plan_types import hypothetical
from kubeview.scheduling.planner import plan_for


def model() -> ClusterModel:
    m = ClusterModel()
    node = {"metadata": {"name": "gpu-node-3"},
            "status": {"allocatable": {"cpu": "32", "memory": "128Gi", "pods": "110", "nvidia.com/gpu": "8"},
                       "conditions": [{"type": "Ready", "status": "True"}]}}
    m.apply(Listed("Node", [node]))
    pods = [{"metadata": {"namespace": "team-a", "name": f"sweep-{i}", "uid": f"s{i}",
                          "ownerReferences": [{"kind": "Job", "name": "sweep", "controller": True}]},
             "spec": {"nodeName": "gpu-node-3", "priority": 0,
                      "containers": [{"name": "c", "resources": {"requests": {"nvidia.com/gpu": "2"},
                                                                 "limits": {"nvidia.com/gpu": "2"}}}]},
             "status": {"phase": "Running"}} for i in range(2)]
    m.apply(Listed("Pod", pods))
    m.apply(Listed("ResourceQuota", [
        {"metadata": {"namespace": "team-a", "name": "gpus", "resourceVersion": "1"},
         "spec": {"hard": {"requests.nvidia.com/gpu": "8"}},
         "status": {"hard": {"requests.nvidia.com/gpu": "8"}, "used": {"requests.nvidia.com/gpu": "8"}}}]))
    return m


def test_no_room_is_freed_while_the_quota_refuses() -> None:
    plan = plan_for(model(), hypothetical(2), PackingConfig(policy="spread"), namespace="team-a")
    assert not plan.found and plan.moves == []
    assert plan.reason == ("namespace team-a's quota gpus requests.nvidia.com/gpu is 8/8: freeing node room would "
                           "not admit it, so no plan")
    assert plan.notes == []  # the request's priority 0: none of the team's pods is lower
    urgent = plan_for(model(), hypothetical(2, priority=100), PackingConfig(policy="spread"), namespace="team-a")
    assert urgent.notes == ["lower-priority pods of team-a hold 4 of requests.nvidia.com/gpu: Job/sweep 4; scaling "
                            "them down frees quota (evicted, their controllers would make them again)"]


def test_a_namespace_with_room_plans_as_before() -> None:
    plan = plan_for(model(), hypothetical(2), PackingConfig(policy="spread"), namespace="team-b")
    assert plan.found and plan.fits_now
