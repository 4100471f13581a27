"""Gangs of every scheduler in the TUI through the real `kubernetes` client: the test API server replays
the recorded 1.37 plane (tests/fixtures/k8s/gang137: PodGroups gang-a, blocked; gang-b, bound;
gang-c, incomplete) and serves KAI, Kueue and Volcano groups (tests/model/gang_builders.py, written
from their published API types) where discovery says they are served."""

from __future__ import annotations

import json

from kubeapi import KubeAPI, WatchScript
from kubeapi import fixtures as recordings
from tui_helpers import gang_builders, kube_app_on, run_async, settle, under, wait_for

from kubeview.model.kinds import gangs_unavailable
from kubeview.tui.rows.gangs import reason
from kubeview.tui.screens.gang_detail import GangDetailScreen

builders = gang_builders()

BASE_WATCHES = ["/api/v1/nodes", "/api/v1/pods", "/apis/apps/v1/replicasets", "/apis/apps/v1/deployments",
                "/apis/apps/v1/statefulsets", "/apis/batch/v1/jobs"]
BATCH = {"scheduling.run.ai/v2alpha2": ("podgroups", builders.kai_pod_group()),
         "kueue.x-k8s.io/v1beta2": ("workloads", builders.kueue_workload()),
         "scheduling.volcano.sh/v1beta1": ("podgroups", builders.volcano_pod_group())}


def serve_all_schedulers(api: KubeAPI) -> None:
    g = "/apis/scheduling.k8s.io/v1beta1"
    api.serve_recording("gang137", lists={"/api/v1/nodes": "nodes.json", f"{g}/podgroups": "podgroups.json",
                                          f"{g}/workloads": "workloads.json"})
    pods = recordings.load("gang137/pods.json")
    pods["items"] += [builders.pod(f"llm-{i}", ns="research", annotations={"pod-group-name": "pg-llm"},
                                   labels={"kai.scheduler/subgroup-name": "master" if i == 0 else "worker"},
                                   scheduled=("Unschedulable", "pod is waiting for its group")) for i in range(3)]
    pods["items"] += [builders.pod(f"mpi-{i}", ns="hpc", annotations={"scheduling.k8s.io/group-name": "mpi-7c1"},
                                   scheduled=("Unschedulable", "0/3 nodes are unavailable")) for i in range(2)]
    api.set_list("/api/v1/pods", json.dumps(pods))
    for gv, (plural, obj) in BATCH.items():
        api.set_list(f"/apis/{gv}", json.dumps({"kind": "APIResourceList", "groupVersion": gv, "resources": [
            {"name": plural, "namespaced": True, "kind": obj["kind"], "verbs": ["get", "list", "watch"]}]}))
        api.set_list(f"/apis/{gv}/{plural}", json.dumps({"kind": "List", "metadata": {"resourceVersion": "5"},
                                                         "items": [obj]}))
        api.script_watch(f"/apis/{gv}/{plural}", WatchScript([], end="close"))
    for path in [*BASE_WATCHES, f"{g}/workloads", f"{g}/podgroups"]:
        api.script_watch(path, WatchScript([], end="close"))


@run_async
async def test_gangs_of_every_scheduler_each_with_its_state_and_reason(kube_api: KubeAPI) -> None:
    serve_all_schedulers(kube_api)
    async with kube_app_on("3", str(kube_api.kubeconfig), (160, 48)) as pilot:
        app = pilot.app
        await wait_for(pilot, lambda: len(app.state.model.gangs.gangs()) == 6, 20, "six gangs")
        await settle(pilot)
        table = app.screen.gang_table()
        with app.state.lock:
            gangs = {g.key: g for g in app.state.model.gangs.gangs()}
        rows = {}
        for i in range(len(table.rows)):
            line = table.render_line(i + 1).text
            rows[table.rows.key(i)] = {c: under(table, line, c) for c in ("scheduler", "min", "state", "reason")}
        assert {k: (r["scheduler"], r["state"]) for k, r in rows.items()} == {
            ("PodGroup", "gang", "gang-a-workers"): ("kubernetes", "waiting"),
            ("PodGroup", "gang", "gang-b-workers"): ("kubernetes", "running"),
            ("PodGroup", "gang", "gang-c-workers"): ("kubernetes", "incomplete"),
            ("kai.PodGroup", "research", "pg-llm"): ("kai", "waiting"),
            ("kueue.Workload", "ml", "job-bert-3f2a1"): ("kueue", "empty"),
            ("volcano.PodGroup", "hpc", "mpi-7c1"): ("volcano", "waiting"),
        }, rows
        # each says why in its scheduler's own words (the group's condition), or counts the members
        assert rows[("kai.PodGroup", "research", "pg-llm")]["reason"].startswith("queue team-a would exceed its GPU")
        assert rows[("kueue.Workload", "ml", "job-bert-3f2a1")]["reason"].startswith("couldn't assign flavors")
        assert rows[("volcano.PodGroup", "hpc", "mpi-7c1")]["reason"].startswith("1/2 tasks in gang unschedulable")
        assert rows[("PodGroup", "gang", "gang-a-workers")]["reason"].startswith("minCount (3) cannot be satisfied")
        assert rows[("PodGroup", "gang", "gang-c-workers")]["reason"].startswith("2 of minCount 3 members exist")
        assert rows[("PodGroup", "gang", "gang-b-workers")]["reason"] == ""
        assert rows[("kueue.Workload", "ml", "job-bert-3f2a1")]["min"] == "3/5"  # minCount (launcher 1 + workers 2) of the podSets' counts (1 + 4)
        for key, row in rows.items():  # the cell is the whole reason, or its head cut with "…"
            assert reason(gangs[key]).startswith(row["reason"].rstrip("…")), key

        table.focus()
        table.cursor = list(rows).index(("kai.PodGroup", "research", "pg-llm"))
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, GangDetailScreen), 5, "the KAI gang's panel")
        await settle(pilot)
        text = " ".join(app.screen.query_one("#gang-text").render().plain.split())
        assert "kai.PodGroup research/pg-llm waiting" in text
        assert "scheduler kai (scheduling.run.ai/v2alpha2) · workload PyTorchJob/llm · queue team-a" in text
        assert "subgroups master (min 1: 0 of 1 on nodes), worker (min 2: 0 of 2 on nodes)" in text
        assert "llm-0 [master] pending" in text and "llm-2 [worker] pending" in text
        assert "the scheduler's own counts: pending 3 · running 0" in text
        assert "UnschedulableOnNodePool=True OverLimit" in text
        assert "llm-1 [worker] pending Unschedulable: pod is waiting for its group" in text
        assert "Fit now under " in text  # kube-scheduler's default placement of its members on the recorded nodes


@run_async
async def test_a_refused_gang_list_is_said_where_the_gangs_would_be(kube_api: KubeAPI) -> None:
    g = "/apis/scheduling.k8s.io/v1beta1"
    kube_api.serve_recording("gang137", lists={"/api/v1/pods": "pods.json", "/api/v1/nodes": "nodes.json",
                                               f"{g}/workloads": "workloads.json"})
    kube_api.respond_fixture("GET", f"{g}/podgroups", "status-403-forbidden-serviceaccount.json")
    for path in [*BASE_WATCHES, f"{g}/workloads"]:
        kube_api.script_watch(path, WatchScript([], end="close"))
    async with kube_app_on("3", str(kube_api.kubeconfig), (120, 40)) as pilot:
        app = pilot.app
        await wait_for(pilot, lambda: gangs_unavailable(app.state.model.unavailable) is not None, 20, "the refused list")
        await settle(pilot)
        table = app.screen.gang_table()
        assert table.display and len(table.rows) == 0
        shown = table.render_line(1).text.strip()
        assert shown.startswith("some gangs are not shown: Listing podgroups.scheduling.k8s.io was forbidden (403)")
