"""The gang kinds through the real `kubernetes` client against the test API server replaying the
recorded 1.37 (tests/fixtures/k8s/gang137, v1beta1) and 1.36 (gang/, v1alpha2) planes: discovery picks
the served version, the lists and the recorded watch reach the model, and a 403 leaves gangs out
without stopping the view."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from kubeapi import KubeAPI, WatchScript, fixtures
from kubeapi.server import CA_STATUS_LIST, QUOTA_LISTS
from kubeapi.source_run import collect_events

from kubeview.cluster.kube.source import KubeSource, WatchSettings
from kubeview.model.cluster import ClusterModel
from kubeview.model.events import ConnectionState, Listed, Scope
from kubeview.model.kinds import gangs_unavailable
from kubeview.snapshot.document import SNAPSHOT_SCHEMA
from kubeview.snapshot.schema import validate

FAST = WatchSettings(error_backoffs=(0.05,), watch_timeout=(30, 30))
BASE_WATCHES = ["/api/v1/nodes", "/api/v1/pods", "/apis/apps/v1/replicasets", "/apis/apps/v1/deployments",
                "/apis/apps/v1/statefulsets", "/apis/batch/v1/jobs", CA_STATUS_LIST, QUOTA_LISTS[0]]
FORBIDDEN = "status-403-forbidden-serviceaccount.json"


def serve(api: KubeAPI, folder: str, version: str, podgroup_watch: WatchScript | None = None) -> str:
    g = f"/apis/scheduling.k8s.io/{version}"
    api.serve_recording(folder, lists={"/api/v1/pods": "pods.json", "/api/v1/nodes": "nodes.json",
                                       f"{g}/podgroups": "podgroups.json", f"{g}/workloads": "workloads.json"})
    for path in [*BASE_WATCHES, f"{g}/workloads"]:
        api.script_watch(path, WatchScript([], end="close"))
    api.script_watch(f"{g}/podgroups", podgroup_watch or WatchScript([], end="close"))
    return g


def run(api: KubeAPI) -> tuple[list, ClusterModel]:
    events = collect_events(KubeSource(str(api.kubeconfig), settings=FAST), 1)
    model = ClusterModel()
    model.apply_all(events)
    return events, model


def test_1_37_serves_v1beta1_and_its_gangs_reach_the_model(kube_api: KubeAPI) -> None:
    g = serve(kube_api, "gang137", "v1beta1", WatchScript.recorded("gang137/watch-podgroups-gangs.jsonl", end="close"))
    events, model = run(kube_api)
    assert {"Workload", "PodGroup"} <= {e.kind for e in events if isinstance(e, Listed)}
    assert kube_api.requests_to(f"{g}/podgroups", watch=True) and kube_api.requests_to(f"{g}/workloads", watch=False)
    assert not kube_api.requests_to("/apis/scheduling.k8s.io/v1alpha2/podgroups")  # v1beta1 is served: used
    gangs = {x.name: x for x in model.gangs.gangs()}
    assert set(gangs) == {"gang-a-workers", "gang-b-workers", "gang-c-workers"}
    assert gangs["gang-b-workers"].bound == 3 and gangs["gang-c-workers"].state == "incomplete"
    # the recorded watch ran on past the list: gang-a's newest condition
    assert gangs["gang-a-workers"].condition_message.startswith("minCount (3) cannot be satisfied: 0 scheduled")
    assert model.gangs.listed == {"Workload", "PodGroup"}  # the batch schedulers' groups are not served (404)
    assert gangs_unavailable(model.unavailable) is None


def test_1_36_serves_v1alpha2_only(kube_api: KubeAPI) -> None:
    serve(kube_api, "gang", "v1alpha2")
    _, model = run(kube_api)
    assert [(x.name, x.api_version, x.condition_type) for x in model.gangs.gangs()] == [
        ("gang-a-workers", "scheduling.k8s.io/v1alpha2", "PodGroupScheduled"),
        ("gang-b-workers", "scheduling.k8s.io/v1alpha2", "PodGroupScheduled")]


def test_a_forbidden_gang_list_leaves_gangs_out_and_the_view_runs(kube_api: KubeAPI) -> None:
    g = serve(kube_api, "gang137", "v1beta1")
    kube_api.respond_fixture("GET", f"{g}/podgroups", FORBIDDEN)
    events, model = run(kube_api)
    assert [e.state for e in events if isinstance(e, ConnectionState)][-1] == "live"
    assert len(model.nodes) == 2 and model.gangs.gangs() == []
    scope = [e for e in events if isinstance(e, Scope)][-1]
    assert gangs_unavailable(scope.unavailable).startswith("some gangs are not shown: Listing podgroups.scheduling.k8s.io was forbidden (403)")
    assert gangs_unavailable(model.unavailable) == gangs_unavailable(scope.unavailable)
    assert not kube_api.requests_to(f"{g}/podgroups", watch=True)


def test_batch_schedulers_groups_where_discovery_serves_them(kube_api: KubeAPI) -> None:
    """The batch-schedulers recording (KAI, Kueue v1beta2 and v1beta1, Volcano CRDs on a real API server;
    no upstream gang API there): each group listed cluster-wide by its own served version, the
    preferred one for Kueue, and members from the pods."""
    b = "batch-schedulers"
    kueue = "/apis/kueue.x-k8s.io/v1beta2"
    queues = [f"{kueue}/{p}" for p in ("clusterqueues", "localqueues", "resourceflavors")]
    kube_api.serve_recording(b, lists={"/apis/scheduling.run.ai/v2alpha2/podgroups": "kai-podgroups.json",
                                       "/apis/kueue.x-k8s.io/v1beta2/workloads": "kueue-workloads.json",
                                       "/apis/scheduling.volcano.sh/v1beta1/podgroups": "volcano-podgroups.json",
                                       **{q: f"kueue-{q.rsplit('/', 1)[1]}.json" for q in queues}})
    pods = [p for f in ("kai-pods.json", "kueue-pods.json", "volcano-pods.json") for p in fixtures.load(f"{b}/{f}")["items"]]
    kube_api.set_list("/api/v1/pods", json.dumps({"kind": "PodList", "metadata": {"resourceVersion": "900"},
                                                  "items": pods}))
    for path in [*BASE_WATCHES, "/apis/scheduling.run.ai/v2alpha2/podgroups", "/apis/kueue.x-k8s.io/v1beta2/workloads",
                 "/apis/scheduling.volcano.sh/v1beta1/podgroups", *queues]:
        kube_api.script_watch(path, WatchScript([], end="close"))
    _, model = run(kube_api)
    # Kueue's queues (model/queues/) come the same way: the recorded ClusterQueue, LocalQueue, ResourceFlavor
    assert model.queues.listed == {"kueue.ClusterQueue", "kueue.LocalQueue", "kueue.ResourceFlavor", "kueue.Workload"}
    assert model.queues.cluster_queues() and model.queues.local_queues() and model.queues.flavors()
    assert {q.cluster_queue for q in model.queues.local_queues()} <= {c.name for c in model.queues.cluster_queues()}
    assert model.gangs.listed == {"kai.PodGroup", "kueue.Workload", "volcano.PodGroup"}
    assert kube_api.requests_to("/apis/kueue.x-k8s.io/v1beta2/workloads")
    assert not kube_api.requests_to("/apis/kueue.x-k8s.io/v1beta1/workloads")
    by = {(g.scheduler, g.name): g for g in model.gangs.gangs()}
    assert {s for s, _ in by} == {"kai", "kueue", "volcano"}
    assert by[("kai", "pg-infer-b")].running == 2 and by[("kai", "pg-infer-b")].reported == {"running": 2, "pending": 2}
    assert all(g.api_version == "kueue.x-k8s.io/v1beta2" for (s, _), g in by.items() if s == "kueue")


def test_snapshot_json_carries_the_gangs_and_why_one_waits(kube_api: KubeAPI) -> None:
    serve(kube_api, "gang137", "v1beta1")
    env = {k: v for k, v in os.environ.items() if k != "KUBERNETES_SERVICE_HOST"}
    env["KUBECONFIG"] = str(kube_api.kubeconfig)
    out = subprocess.run([sys.executable, "-m", "kubeview", "snapshot", "--json"], capture_output=True, text=True,
                         env=env, timeout=120)
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    assert validate(doc, SNAPSHOT_SCHEMA) == []
    gangs = {g["name"]: g for g in doc["gangs"]}
    a = gangs["gang-a-workers"]
    assert a["fit"]["policy"] == "spread" and a["fit"]["fits"] is False and a["fit"]["room"] == 0
    # the list predates gang-b's binding; the fit is of now, what the scheduler wrote next (watch-podgroups-gangs)
    assert a["condition"]["message"].startswith("minCount (3) cannot be satisfied: 2 scheduled, 0 remaining")
    assert a["fit"]["message"] == "minCount (3) cannot be satisfied: 0 scheduled, 2 remaining"
    assert {"Workload", "PodGroup"} <= set(doc["cluster"]["synced"])


def test_fit_joins_a_gang_the_cluster_has(kube_api: KubeAPI, tmp_path) -> None:
    """gang137 as the cluster: gang-c has 2 of its minCount 3 pods (held, silent). A manifest adding the
    third is fitted with the two (1 GPU each) under kube-scheduler's default scoring: gang-b holds 3
    of the 4 GPUs, so there is room for 1 of 3."""
    serve(kube_api, "gang137", "v1beta1")
    (tmp_path / "third.yaml").write_text(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: gang-c-2, namespace: gang}\nspec:\n"
        "  schedulingGroup: {podGroupName: gang-c-workers}\n  nodeSelector: {pool: gpu}\n"
        "  containers: [{name: c, image: x, resources: {limits: {nvidia.com/gpu: 1}}}]\n")
    env = {k: v for k, v in os.environ.items() if k != "KUBERNETES_SERVICE_HOST"}
    env["KUBECONFIG"] = str(kube_api.kubeconfig)
    out = subprocess.run([sys.executable, "-m", "kubeview", "fit", str(tmp_path / "third.yaml"), "--json"],
                         capture_output=True, text=True, env=env, timeout=120)
    assert out.returncode == 1, out.stderr
    doc = json.loads(out.stdout)
    (unit,) = doc["units"]
    assert doc["policy"] == "spread" and doc["policySource"].startswith("kube-scheduler's default")
    assert (unit["what"], unit["minCount"], unit["size"], unit["room"]) == ("PodGroup gang/gang-c-workers", 3, 3, 1)
    assert [m["pod"] for m in unit["members"]] == ["gang-c-0", "gang-c-1", "gang-c-2"]
