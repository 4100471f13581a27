"""Packing's `P` plans for what the what-if shows (#42 item 5): the typed gang (`m`), a waiting gang of
the cluster, the picked pod or the hypothetical pod, never a pod picked before. Before: after `m` →
`2x2`, `P` opened "Plan for training/train-c (2 GPUs)"."""

from __future__ import annotations

from textual.widgets import Label
from tui_helpers import run_async, settle, wait_for

from kubeview.cluster.local.demo import DEMO_PENDING
from kubeview.cluster.local.source import LocalSource
from kubeview.tui.app import make_app
from kubeview.tui.rows.gang_whatif import GangSpec, hypothetical_gang
from kubeview.tui.screens.packing import PackingScreen
from kubeview.tui.screens.plan import PlanScreen
from kubeview.tui.screens.prompts import TextPrompt

ETL = ("PodGroup", "vision", "etl-stages")


async def plan_of(pilot, app) -> PlanScreen:  # noqa: ANN001
    """Press P on Packing; the Plan screen once its plan is computed."""
    await pilot.press("P")
    await wait_for(pilot, lambda: isinstance(app.screen, PlanScreen) and app.screen.plan is not None, 30, "the plan")
    return app.screen


def target_of(app, plan: PlanScreen):  # noqa: ANN001, ANN201
    """The Target the screen planned for (the plan keeps its label only)."""
    with app.state.lock:
        return plan._target(app.state.model)


async def back(pilot, app, packing: PackingScreen) -> None:  # noqa: ANN001
    await pilot.press("escape")
    await wait_for(pilot, lambda: app.screen is packing, 5, "the packing screen")


async def pick(pilot, packing: PackingScreen, option: str) -> None:  # noqa: ANN001
    picker = packing.query_one("#pod-picker")
    picker.focus()
    await pilot.press("home", *["down"] * picker.get_option_index(option), "enter")
    await pilot.pause()


@run_async
async def test_p_plans_for_the_gang_the_what_if_shows(demo: LocalSource) -> None:
    app = make_app(demo)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: app.state.model.pending_count() == DEMO_PENDING
                       and len(app.state.model.gangs.gangs()) == 2, 30, "the demo's pending pods and gangs")
        await settle(pilot)
        await pilot.press("4")
        await settle(pilot)
        packing = app.screen
        assert isinstance(packing, PackingScreen)
        await pick(pilot, packing, "training/train-c")  # a pod first, as the user did
        assert packing.pod_key == ("training", "train-c")

        await pilot.press("m")
        await wait_for(pilot, lambda: isinstance(app.screen, TextPrompt), 5, "the gang prompt")
        await pilot.press(*"2x2", "enter")
        await wait_for(pilot, lambda: app.screen is packing and packing.gang, 5, "the typed gang")
        assert "gang what-if: 2 × 2 GPUs, minCount 2" in packing.query_one("#whatif-summary").render().plain
        plan = await plan_of(pilot, app)
        target = target_of(app, plan)
        assert plan.query_one("#plan-title", Label).render().plain == "Plan for 2 × 2 GPUs"
        # its members ask what the what-if's members ask (1 cpu, 1Gi, 2 GPUs each), two of them together
        what_if = hypothetical_gang(GangSpec(2, 2))
        assert len(target.members) == 2 and target.min_count == 2
        assert [m.requests for m in target.members] == [m.requests for m in what_if]
        await back(pilot, app, packing)

        await pick(pilot, packing, "gang|" + "|".join(ETL))  # a waiting gang of the cluster
        assert packing.gang and packing.gang_key == ETL
        plan = await plan_of(pilot, app)
        assert plan.query_one("#plan-title", Label).render().plain.startswith("Plan for gang vision/etl-stages")
        target = target_of(app, plan)
        assert target.min_count == 3 and {m.name for m in target.members} == {
            "etl-reader-0", "etl-reader-1", "etl-writer"}
        await back(pilot, app, packing)

        await pilot.press("n")  # back to the hypothetical pod (n: 4 GPUs now)
        await pilot.pause()
        assert not packing.gang
        plan = await plan_of(pilot, app)
        assert plan.query_one("#plan-title", Label).render().plain == "Plan for 4 GPUs"
        assert [m.requests for m in target_of(app, plan).members] == [{"cpu": 1000, "memory": 2**30,
                                                                     "nvidia.com/gpu": 4, "pods": 1}]
