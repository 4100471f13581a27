"""The planner's whole loop on the embedded cluster: plan, nominate, evict through the Eviction API, follow
until bound; PodDisruptionBudgets answered with 429 as the apiserver answers; the audit log.

The 1, 1, 2 GPU story under `spread`: a ReplicaSet's two 1-GPU pods land on the two 2-GPU nodes, a
2-GPU pod stays Pending. The plan moves one of them; after apply all three are bound and no other pod
moved. Pods are real processes (sleepers), so an evicted pod terminates while its replacement is
scheduled, the window the nomination covers. 20 seeded runs (ties and the noise pods differ).
"""

from __future__ import annotations

import random

import pytest
from test_local_source import wait_until

from kubeview.cluster.evictions import EvictionRefused
from kubeview.cluster.local.eviction import TOO_MANY
from kubeview.cluster.local.source import LocalSource
from kubeview.cluster.plan_apply import apply_plan
from kubeview.cluster.plan_log import PlanLog
from kubeview.model.disruption import budgets_of
from kubeview.scheduling.config import PackingConfig
from kubeview.scheduling.plan_types import Target
from kubeview.scheduling.planner import plan_for

GPU = "nvidia.com/gpu"
SLEEP = ["python", "-S", "-c", "import signal; signal.pause()"]


def container(gpus: int = 0, cpu: str = "100m") -> dict:
    resources = {"requests": {"cpu": cpu}}
    if gpus:
        resources["limits"] = {GPU: str(gpus)}
    return {"name": "main", "image": "sleeper", "command": SLEEP, "resources": resources}


def replicaset(name: str, replicas: int, gpus: int = 0, cpu: str = "100m", namespace: str = "default") -> dict:
    return {"kind": "ReplicaSet", "metadata": {"name": name, "namespace": namespace, "labels": {"app": name}},
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name}},
                     "template": {"metadata": {"labels": {"app": name}},
                                  "spec": {"terminationGracePeriodSeconds": 5, "containers": [container(gpus, cpu)]}}}}


def placed(source: LocalSource) -> dict[str, tuple[str, str | None]]:
    """name -> (uid, node) of every live pod."""
    return {f"{p['metadata']['namespace']}/{p['metadata']['name']}": (p["metadata"]["uid"], p["spec"].get("nodeName"))
            for p in source.pods() if not p["metadata"].get("deletionTimestamp")
            and p["status"].get("phase") not in ("Succeeded", "Failed")}


def running(source: LocalSource) -> bool:
    return all(p["status"].get("phase") == "Running" for p in source.pods() if p["spec"].get("nodeName"))


def story(seed: int) -> LocalSource:
    source = LocalSource(policy=PackingConfig(policy="spread"), seed=seed)
    rng = random.Random(seed)
    if rng.random() < 0.7:  # noise: cpu-only pods that must not move
        source.apply_workload(replicaset("noise", rng.randint(1, 4), namespace="batch"))
    source.apply_workload(replicaset("small", 2, gpus=1))
    wait_until(lambda: len([p for p in source.pods("default") if p["spec"].get("nodeName")]) == 2, what="small bound")
    source.create_pod({"kind": "Pod", "metadata": {"name": "big", "namespace": "default"},
                       "spec": {"containers": [container(2)]}})
    wait_until(lambda: running(source), what="pods running")
    return source


@pytest.mark.parametrize("seed", range(20))
def test_story_plan_applies_with_one_move(seed, tmp_path):
    source = story(seed)
    try:
        big = source.get("Pod", "default", "big")
        assert not big["spec"].get("nodeName"), "the 2-GPU pod is Pending under spread"
        model = source.model()
        target = Target.of_pods([model.pods[("default", "big")]])
        plan = plan_for(model, target, source.packing, budgets_of(source.budgets()))
        assert plan.found and len(plan.moves) == 1 and plan.method == "exact"
        move = plan.moves[0]
        assert move.owner.startswith("ReplicaSet/small") and move.gpus == 1 and move.to and move.to != move.node
        assert plan.landing == [("default/big", move.node)]
        before = placed(source)
        log = PlanLog(tmp_path / "plans.sqlite")
        out = apply_plan(source, plan, timeout=30, log=log, title=source.title)
        assert out.outcome == "bound", out.lines
        after = placed(source)
        assert after["default/big"][1] == move.node
        gone = set(before) - set(after)
        assert gone == {move.pod}
        new = set(after) - set(before)
        assert len(new) == 1 and new.pop().startswith("default/small-")
        replacement = next(v for k, v in after.items() if k not in before)
        assert replacement[1] == move.to, "the replacement went where the plan said"
        assert {k: v for k, v in after.items() if k in before and k != "default/big"} == \
               {k: v for k, v in before.items() if k not in (move.pod, "default/big")}, "nothing else moved"
        [entry] = log.entries()
        assert entry.outcome == "bound" and entry.target == plan.target and entry.plan["moves"][0]["pod"] == move.pod
    finally:
        source.close()


def test_pdb_refuses_with_429_and_the_plan_says_so(tmp_path):
    source = story(3)
    try:
        source.create_budget({"kind": "PodDisruptionBudget", "metadata": {"name": "small", "namespace": "default"},
                              "spec": {"minAvailable": 2, "selector": {"matchLabels": {"app": "small"}}}})
        [budget] = source.budgets()
        assert budget["status"]["disruptionsAllowed"] == 0 and budget["status"]["currentHealthy"] == 2
        model = source.model()
        plan = plan_for(model, Target.of_pods([model.pods[("default", "big")]]), source.packing,
                        budgets_of(source.budgets()))
        assert plan.found and not plan.applicable
        assert plan.over_budget == ["PodDisruptionBudget default/small allows 0 disruptions, the plan needs 1"]
        victim = plan.moves[0].pod.split("/", 1)
        with pytest.raises(EvictionRefused) as refused:
            source.evict(*victim)
        assert refused.value.code == 429 and refused.value.reason == TOO_MANY
        assert refused.value.cause == "The disruption budget small needs 2 healthy pods and has 2 currently"
        out = apply_plan(source, plan, timeout=5, log=PlanLog(tmp_path / "p.sqlite"))
        assert out.outcome == "refused" and "(429)" in out.detail
        assert source.get("Pod", *victim) is not None and not source.get("Pod", *victim)["metadata"].get("deletionTimestamp")
        # a budget that allows one: the eviction goes through
        source.create_budget({"kind": "PodDisruptionBudget", "metadata": {"name": "small", "namespace": "default"},
                              "spec": {"maxUnavailable": 1, "selector": {"matchLabels": {"app": "small"}}}})
        assert source.evict(*victim) == f"pod {'/'.join(victim)} evicted"
        conds = {c["type"]: c for c in source.get("Pod", *victim)["status"]["conditions"]}
        assert conds["DisruptionTarget"]["reason"] == "EvictionByEvictionAPI"
    finally:
        source.close()


def test_a_hypothetical_request_applies_until_the_evicted_pod_is_gone(tmp_path):
    from kubeview.scheduling.plan_types import hypothetical

    source = LocalSource(policy=PackingConfig(policy="spread"), seed=7)
    try:
        source.apply_workload(replicaset("small", 2, gpus=1))
        wait_until(lambda: running(source) and len(source.pods("default")) == 2, what="small running")
        plan = plan_for(source.model(), hypothetical(2), source.packing)
        assert plan.found and len(plan.moves) == 1 and plan.landing == [("request-0", plan.moves[0].node)]
        out = apply_plan(source, plan, timeout=30, log=PlanLog(tmp_path / "p.sqlite"))
        assert out.outcome == "done" and "nothing holds the room" in out.detail
        assert source.get("Pod", *plan.moves[0].pod.split("/", 1)) is None
    finally:
        source.close()
