"""`kubeview plan --apply` on the real plane (issue #29): the 1, 1, 2 GPU story under `spread`.

kube-scheduler v1.37 with kubeview's extender (the shipped configuration, as test_extender_real_scheduler
runs it) set to `spread`: a ReplicaSet's two 1-GPU pods land on the two 2-GPU nodes and a 2-GPU pod
stays Pending. `kubeview plan` (a real process, the admin's kubeconfig) must disrupt exactly one 1-GPU
pod owned by the ReplicaSet; after its apply (the target nominated, one eviction through
policy/v1, the replacement scheduled by kube-scheduler while the evicted pod terminates) all three are
bound and nothing else moved. Several rounds, each from scratch on two new nodes whose label the
pods select: nodes other tests left behind, and the last round's pods still in a scheduler's view
(spread would avoid the node they were on), do not change the story.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from kubernetes import client

from .extender_run import ExtenderProc, scheduler_config, wait_gone
from .objects import add_node, api, ensure_namespace, sa_kubeconfig, wait_nodes_ready
from .plane import REPO, Plane
from .procs import wait_until

ROUNDS = 10
NAMESPACE = "plan-story"
LABEL = "kubeview.test/plan-story"
GPU = "nvidia.com/gpu"


@pytest.fixture(scope="module")
def core(plane: Plane, tmp_path_factory: pytest.TempPathFactory) -> Iterator[client.CoreV1Api]:
    """The admin's client, once kubeview's extender runs (as its ServiceAccount, under spread) and
    kube-scheduler calls it; everything made here goes afterwards."""
    core = client.CoreV1Api(api(plane.kubeconfig))
    plane.kubectl("apply", "-f", str(REPO / "manifests" / "scheduler" / "00-namespace-rbac.yaml"))
    ensure_namespace(core, NAMESPACE)
    kc = sa_kubeconfig(plane, core, "kubeview-system", "kubeview-extender", tmp_path_factory.mktemp("ext") / "kc")
    ext = ExtenderProc(plane, kc)
    ext.start()
    ext.put_config({"policy": "spread"})
    plane.set_scheduler_config(scheduler_config(ext.url, True))
    yield core
    if ext.proc is not None:
        ext.proc.stop()
    plane.set_scheduler_config({})
    client.AppsV1Api(core.api_client).delete_collection_namespaced_replica_set(NAMESPACE)
    core.delete_collection_namespaced_pod(NAMESPACE, grace_period_seconds=0)
    core.delete_collection_node(label_selector=LABEL)


def container(gpus: int) -> dict:
    res = {GPU: str(gpus), "cpu": "100m", "memory": "64Mi"}
    return {"name": "train", "image": "registry.k8s.io/pause:3.10", "resources": {"requests": res, "limits": res}}


def replicaset(name: str, select: dict[str, str]) -> dict:
    return {"apiVersion": "apps/v1", "kind": "ReplicaSet",
            "metadata": {"name": name, "labels": {"app": name}},
            "spec": {"replicas": 2, "selector": {"matchLabels": {"app": name}},
                     "template": {"metadata": {"labels": {"app": name}},
                                  "spec": {"nodeSelector": select, "terminationGracePeriodSeconds": 2,
                                           "containers": [container(1)]}}}}


def live(core: client.CoreV1Api) -> dict[str, tuple[str, str | None]]:
    """name -> (uid, node) of the namespace's pods that are not being deleted."""
    return {p.metadata.name: (p.metadata.uid, p.spec.node_name) for p in core.list_namespaced_pod(NAMESPACE).items
            if p.metadata.deletion_timestamp is None}


def unschedulable(core: client.CoreV1Api, name: str) -> bool:
    pod = core.read_namespaced_pod(name, NAMESPACE)
    return any(c.type == "PodScheduled" and c.status == "False" and c.reason == "Unschedulable"
               for c in pod.status.conditions or [])


def story(core: client.CoreV1Api, tag: str, before_pods=None) -> tuple[str, str, tuple[str, str]]:  # noqa: ANN001
    """Two fresh 2-GPU nodes labelled for `tag`, the ReplicaSet's two 1-GPU pods bound on different
    nodes (spread), then the 2-GPU pod, Unschedulable. `before_pods()` runs first (a budget).
    Returns (ReplicaSet, 2-GPU pod, nodes)."""
    rs, big, select = f"small-{tag}", f"big-{tag}", {LABEL: tag}
    nodes = (f"plan-story-{tag}-a", f"plan-story-{tag}-b")
    for name in nodes:
        add_node(core, name, {"cpu": "8", "memory": "32Gi", "pods": "110", GPU: "2"}, labels=select)
    wait_nodes_ready(core, list(nodes))
    if before_pods is not None:
        before_pods(rs)
    client.AppsV1Api(core.api_client).create_namespaced_replica_set(NAMESPACE, replicaset(rs, select))
    wait_until(lambda: len([n for _, n in live(core).values() if n]) == 2, 30, "the two 1-GPU pods bound")
    assert {n for _, n in live(core).values()} == set(nodes), f"spread puts the 1-GPU pods on different nodes: {live(core)}"
    core.create_namespaced_pod(NAMESPACE, {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": big},
                                           "spec": {"nodeSelector": select, "terminationGracePeriodSeconds": 0,
                                                    "containers": [container(2)]}})
    wait_until(lambda: unschedulable(core, big), 30, "the 2-GPU pod Unschedulable under spread")
    return rs, big, nodes


def fresh(core: client.CoreV1Api) -> None:
    """Start on an empty story even when the test before failed halfway: its ReplicaSet would make
    new pods, its nodes would take the next round's."""
    client.AppsV1Api(core.api_client).delete_collection_namespaced_replica_set(NAMESPACE)
    core.delete_collection_namespaced_pod(NAMESPACE, grace_period_seconds=0)
    core.delete_collection_node(label_selector=LABEL)
    wait_gone(core, NAMESPACE)
    wait_until(lambda: not core.list_node(label_selector=LABEL).items, 30, "the story's nodes gone")


def clean(core: client.CoreV1Api, rs: str, nodes: tuple[str, str]) -> None:
    client.AppsV1Api(core.api_client).delete_namespaced_replica_set(rs, NAMESPACE)
    core.delete_collection_namespaced_pod(NAMESPACE, grace_period_seconds=0)
    for name in nodes:
        core.delete_node(name)


def plan_argv(plane: Plane, big: str, log: Path) -> list[str]:
    return [sys.executable, "-m", "kubeview", "plan", f"{NAMESPACE}/{big}", "--kubeconfig", str(plane.kubeconfig),
            "--policy", "spread", "--apply", "--yes", "--json", "--timeout", "60", "--log-file", str(log)]


@pytest.mark.parametrize("round_", range(ROUNDS))
def test_plan_moves_one_replicaset_pod_and_all_three_bind(plane: Plane, core, round_: int,
                                                          tmp_path, realk8s_counts: dict[str, str]) -> None:
    fresh(core)
    rs, big, nodes = story(core, f"r{round_}")
    before = live(core)
    argv = plan_argv(plane, big, tmp_path / "plans.sqlite")
    done = subprocess.run(argv, capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr + done.stdout
    doc = json.loads(done.stdout)
    assert len(doc["moves"]) == 1, doc
    move = doc["moves"][0]
    assert move["owner"] == f"ReplicaSet/{rs}" and move["gpus"] == 1 and move["to"] and move["to"] != move["from"]
    assert doc["landing"] == [{"pod": f"{NAMESPACE}/{big}", "node": move["from"]}]
    assert doc["outcome"] == "bound" and doc["method"] == "exact"
    assert f"pod {NAMESPACE}/{big} nominated to {move['from']}" in done.stderr, done.stderr
    assert f"pod {move['pod']} evicted" in done.stderr

    after = wait_until(lambda: (lambda a: a if len(a) == 3 and all(n for _, n in a.values()) else None)(live(core)),
                       30, "all three bound")
    evicted = move["pod"].split("/", 1)[1]
    assert after[big][1] == move["from"]
    assert set(before) - set(after) == {evicted}, "only the planned pod went"
    [replacement] = set(after) - set(before)
    assert replacement.startswith(rs) and after[replacement][1] == move["to"], "its replacement went where the plan said"
    kept = [k for k in before if k not in (evicted, big)]
    assert {k: after[k] for k in kept} == {k: before[k] for k in kept}, "nothing else moved"
    log = subprocess.run([sys.executable, "-m", "kubeview", "plan", "--log", "--json", "--log-file",
                          str(tmp_path / "plans.sqlite")], capture_output=True, text=True, timeout=60)
    [entry] = json.loads(log.stdout)
    assert entry["outcome"] == "bound" and entry["plan"]["moves"][0]["pod"] == move["pod"]
    clean(core, rs, nodes)
    realk8s_counts["plan 1-1-2 under spread"] = f"{round_ + 1}/{ROUNDS} rounds: one ReplicaSet pod moved, all bound"


def test_a_budget_that_allows_nothing_is_said_and_answered_429(plane: Plane, core, tmp_path) -> None:
    """A PodDisruptionBudget (minAvailable 2) over the ReplicaSet: the plan says it exceeds it (exit 1,
    not applied), and the real Eviction API refuses with 429 and the disruption controller's figures."""
    from kubeview.cluster.evictions import EvictionRefused
    from kubeview.cluster.kube.evict import KubeEvictor

    fresh(core)
    policy = client.PolicyV1Api(core.api_client)

    def budget(rs: str) -> None:
        policy.create_namespaced_pod_disruption_budget(NAMESPACE, {
            "apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": rs},
            "spec": {"minAvailable": 2, "selector": {"matchLabels": {"app": rs}}}})

    rs, big, nodes = story(core, "guarded", budget)
    wait_until(lambda: (policy.read_namespaced_pod_disruption_budget(rs, NAMESPACE).status.current_healthy or 0) == 2,
               60, "the disruption controller counts two healthy pods")
    before = live(core)
    argv = plan_argv(plane, big, tmp_path / "plans.sqlite")
    done = subprocess.run(argv, capture_output=True, text=True, timeout=180)
    assert done.returncode == 1, done.stderr + done.stdout
    assert f"PodDisruptionBudget {NAMESPACE}/{rs} allows 0 disruptions, the plan needs 1" in done.stderr
    assert "not applied" in done.stderr and live(core) == before
    victim = next(k for k in before if k.startswith(rs))
    with pytest.raises(EvictionRefused) as refused:
        KubeEvictor(core.api_client).evict(NAMESPACE, victim)
    assert refused.value.code == 429
    assert refused.value.reason == "Cannot evict pod as it would violate the pod's disruption budget."
    assert refused.value.cause == f"The disruption budget {rs} needs 2 healthy pods and has 2 currently"
    policy.delete_namespaced_pod_disruption_budget(rs, NAMESPACE)
    clean(core, rs, nodes)
