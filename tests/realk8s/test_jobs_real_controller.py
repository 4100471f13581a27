"""Jobs with the real Job controller v1.37.2 on kwok nodes (issue #25, 3d).

kwok finishes pods by their `kubeview.test/fate` label (kwok-stages.yaml): an Indexed Job whose odd
indexes fail (backoffLimitPerIndex 1: each fails twice, then the Job is Failed by its failed indexes),
a NonIndexed Job that succeeds, one that fails past its backoffLimit, a Job tuned through kubeview's
own source (parallelism up and down, suspend and resume: the controller must add and remove pods),
and a Job whose node is deleted under its running pod (PodGC fails it; the controller replaces it).
ROUNDS copies of each run side by side, so every claim is checked more than once. At every consistent
moment (job_check.py) kubeview's counts, conditions and index strip must equal the Job's status.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from kubernetes import client

from kubeview.model.jobs.progress import disrupted_pods

from .job_check import JobChecker
from .live_view import LiveView
from .objects import add_node, api, ensure_namespace, wait_nodes_ready
from .plane import Plane

NS = "jobs-real"
NODES, SPOT = ("jobs-a", "jobs-b"), "jobs-spot"
ROUNDS = 3
FATE = "kubeview.test/fate"


def job(name: str, fate: str, completions: int, parallelism: int, **spec) -> dict:
    template = {"metadata": {"labels": {FATE: fate}},
                "spec": {"restartPolicy": "Never", "terminationGracePeriodSeconds": 0,
                         "nodeSelector": {"type": "kwok"},
                         "containers": [{"name": "worker", "image": "busybox:1.36",
                                         "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}}}]}}
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": name, "namespace": NS},
            "spec": {"completions": completions, "parallelism": parallelism, "template": template, **spec}}


def _on_spot(doc: dict) -> dict:
    doc["spec"]["template"]["spec"]["affinity"] = {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
        {"weight": 100, "preference": {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [SPOT]}]}}]}}
    return doc


@pytest.fixture(scope="module")
def jobs(plane: Plane) -> Iterator[tuple[client.ApiClient, LiveView]]:
    api_client = api(plane.kubeconfig)
    core = client.CoreV1Api(api_client)
    ensure_namespace(core, NS)
    for name in NODES:
        add_node(core, name, {"cpu": "32", "memory": "64Gi", "pods": "110"})
    add_node(core, SPOT, {"cpu": "8", "memory": "16Gi", "pods": "110"})
    wait_nodes_ready(core, [*NODES, SPOT])
    view = LiveView(plane.kubeconfig, kinds=("Node", "Pod", "Job")).start()
    yield api_client, view
    view.stop()
    client.BatchV1Api(api_client).delete_collection_namespaced_job(NS, propagation_policy="Background")
    core.delete_collection_namespaced_pod(NS, grace_period_seconds=0)
    for name in (*NODES, SPOT):
        try:
            core.delete_node(name)
        except client.ApiException as exc:
            if exc.status != 404:
                raise


def _active(n: int):
    return lambda v: v["counts"]["active"] == n and v["counts"]["ready"] == n and v["counts"]["terminating"] == 0


def test_job_counts_and_strips_equal_the_controllers(plane: Plane, jobs, realk8s_counts: dict[str, str]) -> None:
    api_client, view = jobs
    batch, core = client.BatchV1Api(api_client), client.CoreV1Api(api_client)
    check = JobChecker(view, api_client, NS)
    r = range(ROUNDS)
    lost, tune = [f"lost-{i}" for i in r], [f"tune-{i}" for i in r]
    idx, ok, bad = [f"idx-{i}" for i in r], [f"ok-{i}" for i in r], [f"bad-{i}" for i in r]
    for name in lost:
        batch.create_namespaced_job(NS, _on_spot(job(name, "hold", 1, 1)))
    check.wait(lost, _active(1), "the lost-node Jobs running")
    assert {p.spec.node_name for p in core.list_namespaced_pod(NS).items} == {SPOT}
    core.delete_node(SPOT)  # PodGC fails its pods after its quarantine; the rest runs meanwhile
    for name in idx:
        batch.create_namespaced_job(NS, job(name, "odd-fails", 5, 5, completionMode="Indexed", backoffLimitPerIndex=1))
    for name in ok:
        batch.create_namespaced_job(NS, job(name, "succeed", 4, 2))
    for name in bad:
        batch.create_namespaced_job(NS, job(name, "fail", 2, 2, backoffLimit=1))
    for name in tune:
        batch.create_namespaced_job(NS, job(name, "hold", 6, 2))
    check.wait(tune, _active(2), "the tuned Jobs running 2 pods")
    for parallelism in (4, 1):
        for name in tune:
            view.source.set_parallelism(NS, name, parallelism)
        check.wait(tune, _active(parallelism), f"parallelism {parallelism} taking effect")
    for name in tune:
        view.source.suspend_job(NS, name, True)
    check.wait(tune, lambda v: "Suspended" in v["conditions"] and _active(0)(v), "the Jobs suspended and drained")
    for name in tune:
        view.source.suspend_job(NS, name, False)
    check.wait(tune, lambda v: "Suspended" not in v["conditions"] and _active(1)(v), "the Jobs resumed")
    final = check.wait(ok + bad + idx, lambda v: {"Complete", "Failed"} & set(v["conditions"]), "the Jobs finished")
    for name in ok:
        assert "Complete" in final[name]["conditions"] and final[name]["counts"]["succeeded"] == 4, final[name]
    for name in bad:
        assert "Failed" in final[name]["conditions"] and final[name]["counts"]["failed"] == 2, final[name]
    for name in idx:
        assert final[name]["strip"] == "SFSFS" and final[name]["counts"]["failed"] == 4, final[name]
    final = check.wait(lost, lambda v: v["counts"]["failed"] == 1 and _active(1)(v), "the lost pods failed and replaced",
                       timeout=90)
    for name in lost:  # the pod PodGC failed and deleted is remembered, with what became of it
        gone = view.read(lambda m, n=name: disrupted_pods(m.jobs.jobs[(NS, n)], m.jobs.history_of(NS, n)))
        assert [(d.node, d.disruption.reason, d.counted, d.outcome) for d in gone] == \
            [(SPOT, "DeletionByPodGC", True, "replaced")], gone
    # v1.36.2's Job controller had its status refused while in backoff (tests/fixtures/k8s/jobs/README.md)
    refused = (plane.logs / "kube-controller-manager.log").read_text().count("cannot set more ready pods than active")
    realk8s_counts["Job status updates refused (kubernetes#139428)"] = str(refused)
    realk8s_counts["Job states checked"] = f"{len(check.seen)} ({5 * ROUNDS} Jobs: counts and index strips = status)"
