"""Jobs on the Workloads screen through the real kube source against the test API server serving
the recorded Jobs: the row and panel as recorded, parallelism and suspend/resume with the scaling
confirmations, each sending the recorded merge patch."""

from __future__ import annotations

from kubeapi import KubeAPI
from kubeapi import jobs as job_api
from tui_helpers import kube_app_on, run_async, settle, wait_for

from kubeview.model.events import WatchEvent
from kubeview.tui.app import make_app
from kubeview.tui.screens.prompts import Confirm, NumberPrompt
from kubeview.tui.screens.workloads import WorkloadsScreen
from kubeview.tui.widgets.virtual_table import VirtualTable

JOB = "/apis/batch/v1/namespaces/batch/jobs/tunable"
INDEXED = ("Job", "batch", "items-by-day")


def patches(api: KubeAPI, path: str = JOB) -> list[dict]:
    return [r.json() for r in api.requests_to(path, method="PATCH")]


def panel_text(app) -> str:  # noqa: ANN001
    return str(app.screen.query_one("#job-panel").render())


@run_async
async def test_an_indexed_job_shows_its_counts_strip_and_disrupted_pod(kube_api: KubeAPI) -> None:
    job_api.serve_step(kube_api, job_api.load("indexed", "job-09-index2-failed-twice.json"),
                       job_api.load("indexed", "pods-09-index2-failed-twice.json")["items"])
    async with kube_app_on("3", str(kube_api.kubeconfig), (140, 45)) as pilot:
        app = pilot.app
        assert isinstance(app.screen, WorkloadsScreen)
        table = app.screen.query_one(VirtualTable)
        assert table.cursor_key == INDEXED  # "Job" sorts before "ReplicaSet"
        await pilot.pause()
        text = panel_text(app)
        assert "active 4 · ready 3 · terminating 0 · succeeded 2 · failed 2" in text
        assert "succeeded 2  " in text and "failed 1  " in text and "running 3  " in text
        assert "pending 1  " in text and "not started 5" in text
        assert "\n███▆▆▆▂·····" in text  # one cell per index: S S F R R R P and 5 never started
        assert "items-by-day-4-lj7nr  index 4  on cpu-node-1  TerminationByKubelet" in text
        assert "→ retried" in text and "ignored by podFailurePolicy" in text
        # a finished or a ReplicaSet row: no suspend
        await pilot.press("down")
        await pilot.pause()
        assert not app.screen.query_one("#job-panel").display
        await pilot.press("z")
        await pilot.pause()
        assert app.banner == ("select a Job first: only Jobs can be suspended", "error")


@run_async
async def test_parallelism_and_suspend_send_the_recorded_patches(kube_api: KubeAPI) -> None:
    job_api.serve_step(kube_api, job_api.load("patch", "job-01-running.json"), [])
    async with kube_app_on("3", str(kube_api.kubeconfig), (140, 45)) as pilot:
        app = pilot.app
        assert app.screen.query_one(VirtualTable).cursor_key == ("Job", "batch", "tunable")

        # s 4: parallelism 2 -> 4, no question (as scaling), the recorded merge patch
        await pilot.press("s")
        await pilot.pause()
        assert isinstance(app.screen, NumberPrompt)
        await pilot.press("backspace", "4", "enter")
        await wait_for(pilot, lambda: app.banner[1] == "ok", what="the parallelism result")
        assert patches(kube_api) == [{"spec": {"parallelism": 4}}]
        assert app.banner == ("Job batch/tunable parallelism set to 4.", "ok")

        # - : one less (the screen still shows the listed 2: 2 -> 1)
        await pilot.press("minus")
        await wait_for(pilot, lambda: len(patches(kube_api)) == 2, what="the second PATCH")
        assert patches(kube_api)[-1] == {"spec": {"parallelism": 1}}

        # z: suspending asks first; n sends nothing, y sends the recorded patch
        await pilot.press("z")
        await pilot.pause()
        assert isinstance(app.screen, Confirm)
        await pilot.press("n")
        await pilot.pause()
        assert len(patches(kube_api)) == 2
        assert app.banner == ("Job batch/tunable left running.", "ok")
        await pilot.press("z")
        await pilot.pause()
        await pilot.press("y")
        await wait_for(pilot, lambda: len(patches(kube_api)) == 3, what="the suspend PATCH")
        assert patches(kube_api)[-1] == {"spec": {"suspend": True}}
        await wait_for(pilot, lambda: app.banner == ("Job batch/tunable suspended.", "ok"), what="the result")

        # s 0 asks as scaling to 0 does
        await pilot.press("s")
        await pilot.pause()
        await pilot.press("backspace", "0", "enter")
        await pilot.pause()
        assert isinstance(app.screen, Confirm)
        await pilot.press("n")
        await pilot.pause()
        assert len(patches(kube_api)) == 3


@run_async
async def test_preempting_a_node_of_the_embedded_cluster_asks_then_retries_its_job_indexes(tmp_path) -> None:  # noqa: ANN001
    from kubeview.cluster.local.source import LocalSource
    from kubeview.scheduling.config import PackingConfig
    from kubeview.tui.app import make_app
    from kubeview.tui.screens.node_detail import NodeDetailScreen

    # `pack`: every pod of the Job on the most allocated node (cpu-node-1), the one preempted below;
    # under `spread` the local scheduler breaks ties at random (#24 item 9), so later pods could run
    # elsewhere and the node be idle by the time it is preempted
    source = LocalSource(seed=4, policy=PackingConfig(policy="pack"))
    gate = tmp_path / "gate"  # the pods run until the node is preempted: by construction, not `sleep 1` (issue 23)
    source.apply_workload({"kind": "Job", "metadata": {"name": "items", "namespace": "batch"}, "spec": {
        "completionMode": "Indexed", "completions": 8, "parallelism": 4, "backoffLimitPerIndex": 1,
        "podFailurePolicy": {"rules": [{"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget"}]}]},
        "template": {"spec": {"restartPolicy": "Never", "containers": [{
            "name": "w", "image": "busybox", "command": ["sh", "-c", f"until [ -e '{gate}' ]; do sleep 0.05; done"],
            "resources": {"requests": {"cpu": "100m"}}}]}}}})
    pods = source.pods("batch")
    node = pods[0]["spec"]["nodeName"]
    app = make_app(source)
    try:
        async with app.run_test(size=(140, 45)) as pilot:
            await wait_for(pilot, lambda: app.state.model.is_synced(("Node", "Pod", "Job")), what="the lists")
            app.push_screen(install_and_show(app, node))
            await pilot.pause()
            assert isinstance(app.screen, NodeDetailScreen)
            await pilot.press("P")
            await wait_for(pilot, lambda: _asking(app), what="the question")  # mounted: its keys are bound
            await pilot.press("n")
            await pilot.pause()
            await wait_for(pilot, lambda: isinstance(app.screen, NodeDetailScreen), what="the dialog to close")
            await pilot.pause(0.2)
            assert source.get("Node", "", node) is not None  # declined: nothing happened
            await pilot.press("P")
            await wait_for(pilot, lambda: _asking(app), what="the question again")
            with app.state.lock:  # the premise, held by the gate: the Job's pods still run there
                assert any(p.phase in ("Pending", "Running") and not p.deleting for p in app.state.model.pods_on(node)
                           if p.namespace == "batch"), "the Job finished before the preemption"
            await pilot.press("y")
            await wait_for(pilot, lambda: app.banner[1] == "ok" and "preempted" in app.banner[0], what="preempt")
            assert source.get("Node", "", node) is None
            gate.touch()  # the pods elsewhere, and the preempted ones' retries, may finish now
            await wait_for(pilot, lambda: (app.state.model.jobs.jobs[("batch", "items")].state == "Complete"),
                           60, what="the Job to complete")
            from kubeview.model.jobs.progress import disrupted_pods

            with app.state.lock:
                view = app.state.model.jobs.jobs[("batch", "items")]
                gone = disrupted_pods(view, app.state.model.jobs.history_of("batch", "items"))
            assert gone and {d.outcome for d in gone} == {"succeeded later"} and view.failed == 0
            assert {d.disruption.reason for d in gone} == {"TerminationByKubelet"}
    finally:
        source.close()


def install_and_show(app, node: str):  # noqa: ANN001, ANN201
    from kubeview.tui.screens.nodes import install_detail

    screen = install_detail(app)
    screen.show(node)
    return screen


def _asking(app) -> bool:  # noqa: ANN001
    """The Confirm dialog is up and mounted (its No button focused in on_mount), so a key reaches
    its bindings: seen, instead of 0.2 s of pause that a loaded machine can outrun (issue 23)."""
    screen = app.screen
    return isinstance(screen, Confirm) and screen.is_active and app.focused is not None and app.focused.id == "no"


@run_async
async def test_a_screen_opened_after_a_change_out_of_sight_shows_it_first_with_the_cursor_on_top(
        small_cluster) -> None:  # noqa: ANN001
    """The Workloads screen computed its rows at start; a workload that sorts first comes while another
    screen is shown. Opening Workloads shows it on top with the cursor on it (CI once painted the
    old rows, the cursor on their first row, and the cursor stayed there when a Job sorted above)."""
    app = make_app(small_cluster)
    async with app.run_test(size=(140, 45)) as pilot:
        await settle(pilot)
        workloads = app._mode_screens["workloads"]
        await wait_for(pilot, lambda: not workloads._stale and len(workloads.table().rows) > 0, 20, "warmed")
        first = ("Deployment", "aaa", "aaa-first")  # sorts before every row
        app.state.emit(WatchEvent("Deployment", "ADDED", {
            "metadata": {"name": first[2], "namespace": first[1], "uid": "u-first", "resourceVersion": "9999"},
            "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "first"}}},
            "status": {"replicas": 1, "readyReplicas": 1}}))
        await settle(pilot)
        assert workloads._stale  # changed out of sight
        await pilot.press("3")
        await pilot.pause()
        table = workloads.table()
        assert table.rows.key(0) == first
        assert table.cursor == 0 and table.cursor_key == first
