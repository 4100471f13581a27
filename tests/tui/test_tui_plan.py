"""The Plan screen: from Packing and a pending pod's detail; the plan shown before anything happens,
apply only after Yes, followed until bound, written to the audit log and shown from it."""

from __future__ import annotations

from tui_helpers import run_async, settle, wait_for

from kubeview.cluster.synthetic import SyntheticSource
from kubeview.tui.app import make_app
from kubeview.tui.screens.plan import PlanScreen
from kubeview.tui.screens.pod_detail import install_pod_detail
from kubeview.tui.screens.prompts import Confirm


def text(screen) -> str:  # noqa: ANN001
    return str(screen.query_one("#plan-text").render())


@run_async
async def test_packing_plan_for_the_hypothetical_request(small_cluster: SyntheticSource) -> None:
    async with make_app(small_cluster).run_test(size=(130, 40)) as pilot:
        app = pilot.app
        await settle(pilot)
        await pilot.press("4", "P")  # Packing, then its plan for the picked request (a hypothetical 2 GPUs)
        await wait_for(pilot, lambda: isinstance(app.screen, PlanScreen) and app.screen.plan is not None,
                       what="the plan")
        assert "plan for 2 GPUs, policy pack" in text(app.screen)
        assert "cannot be applied" in text(app.screen)  # the synthetic cluster has no Eviction API
        await pilot.press("a")  # nothing to ask: it cannot be applied here
        await pilot.pause()
        assert isinstance(app.screen, PlanScreen)
        await pilot.press("escape")
        await pilot.pause()
        assert not isinstance(app.screen, PlanScreen)


@run_async
async def test_demo_train_c_plan_apply_after_yes_then_the_log(demo, monkeypatch, tmp_path) -> None:
    monkeypatch.setenv("KUBEVIEW_PLAN_LOG", str(tmp_path / "plans.sqlite"))
    async with make_app(demo).run_test(size=(140, 45)) as pilot:
        app = pilot.app
        await settle(pilot)
        detail = install_pod_detail(app)
        detail.show(("training", "train-c"))
        await app.push_screen(detail)
        await pilot.press("P")  # the pending pod's detail opens its plan
        await wait_for(pilot, lambda: isinstance(app.screen, PlanScreen) and app.screen.plan is not None,
                       what="the plan")
        screen = app.screen
        # one move: a pod its ReplicaSet recreates (bare pods only with `b`)
        assert screen.plan.found and len(screen.plan.moves) == 1 and "ReplicaSet/train-workers" in text(screen)
        victim = screen.plan.moves[0].pod
        await pilot.press("a")
        await wait_for(pilot, lambda: isinstance(app.screen, Confirm), what="the question")
        await pilot.press("n")  # No: nothing happens
        await pilot.pause()
        assert app.screen is screen and demo.get("Pod", *victim.split("/")) is not None
        await pilot.press("a")
        await wait_for(pilot, lambda: isinstance(app.screen, Confirm), what="the question again")
        await pilot.press("y")
        await wait_for(pilot, lambda: "bound: training/train-c on" in text(screen), timeout=60, what="bound")
        assert demo.get("Pod", "training", "train-c")["spec"]["nodeName"] == screen.plan.landing[0][1]
        await pilot.press("l")
        await wait_for(pilot, lambda: "#1 " in text(screen), what="the audit log")
        assert f"evicted {victim}: bound" in text(screen)
