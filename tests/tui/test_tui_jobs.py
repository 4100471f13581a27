"""Jobs on the Workloads screen through the real kube source against the test API server serving
the recorded Jobs: the row and panel as recorded, parallelism and suspend/resume with the scaling
confirmations, each sending the recorded merge patch."""

from __future__ import annotations

from kubeapi import KubeAPI
from kubeapi import jobs as job_api
from tui_helpers import kube_app_on, run_async, wait_for

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
