"""The Capacity screen on the demo's story, pilot-driven: farm/frames outgrows batch-pool (asked for more,
got 6), at 80x24 and 160x48.

The demo as `kubeview --demo` opens it, with the embedded autoscaler's clock and loop in the test's
hands (`open_demo(clock=..., autoscale_every=None)`): a step happens when the test takes it, and the
screen is read once the app shows the source's state (`settle`), never after a fixed sleep.
"""

from __future__ import annotations

import time

import pytest
from textual.widgets import Static
from tui_helpers import run_async, settle, under, wait_for

from kubeview.cluster.local.demo import BATCH_JOB, BATCH_POOL, open_demo
from kubeview.cluster.local.source import LocalSource
from kubeview.model.autoscaling.groups import EMBEDDED
from kubeview.tui.app import make_app
from kubeview.tui.screens.capacity import NO_GROUPS, CapacityScreen
from kubeview.tui.screens.group_detail import GroupDetailScreen
from kubeview.tui.screens.help import HelpScreen, sections
from kubeview.tui.widgets.virtual_table import VirtualTable

KEY = (EMBEDDED, BATCH_POOL)


class Clock:
    def __init__(self) -> None:
        self.t = time.time()

    def __call__(self) -> float:
        return self.t


def row(screen: CapacityScreen) -> dict[str, str]:
    """The batch-pool row as drawn, column by column."""
    table = screen.query_one("#capacity-table", VirtualTable)
    line = table.render_line(1 + table.rows.index(KEY)).text  # type: ignore[operator]
    assert len(line.rstrip()) <= table.size.width
    return {c.key: under(table, line, c.key) for c in table.columns}


def panel_lines(screen: CapacityScreen) -> list[str]:
    """What the panel box shows, line by line (wrapped to its width)."""
    box = screen.query_one("#capacity-panel", Static)
    lines = [box.render_line(y).text.rstrip() for y in range(box.size.height)]
    assert all(len(line) <= box.size.width for line in lines)
    return [line.strip() for line in lines if line.strip()]


@pytest.mark.parametrize("size", [(160, 48), (80, 24)])
@run_async
async def test_capacity_tells_the_demo_batch_story(size: tuple[int, int]) -> None:
    clock = Clock()
    source: LocalSource = open_demo(clock=clock, autoscale_every=None)
    app = make_app(source)
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        await pilot.press("7")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, CapacityScreen)
        first = row(screen)
        assert (first["name"], first["nodes"], first["range"], first["wait"], first["state"]) == (
            BATCH_POOL, "0", "min 0 max 6", "0", "steady")
        assert "no pod waits on it" in panel_lines(screen)

        # `z` on farm/frames: 266 pods wait, the autoscaler asks for the 6 nodes the group may have
        source.suspend_job(*BATCH_JOB, False)
        source.autoscale_now()
        source.autoscale_now()
        await settle(pilot)
        asked = row(screen)
        assert (asked["nodes"], asked["wait"], asked["state"]) == ("0→6", "266", "scaling")
        assert any(line.startswith("node group batch-pool scaling 0 → 6 (in progress") for line in panel_lines(screen))

        # the nodes register after the group's provisioning delay; 42 frames run there, 224 wait for good
        clock.t += 5.0
        source.autoscale_now()
        await wait_for(pilot, lambda: sum(k[0] == BATCH_JOB[0] for k in source.pids()) == 42, 90, "42 frames running")
        await settle(pilot)
        await wait_for(pilot, lambda: row(screen)["state"] == "at-max" and row(screen)["wait"] == "224", 20,
                       "the group at its max with 224 waiting")
        at_max = row(screen)
        assert (at_max["nodes"], at_max["range"], at_max["gpus"]) == ("6", "min 0 max 6", "0")
        # at 80 columns WHY gives first (cut at a word's end or with …); the panel says it whole below
        assert at_max["why"].startswith("batch-pool is at")
        text = " ".join(panel_lines(screen))  # wrapped at 80 columns: read as one text
        assert "node group batch-pool (the embedded cluster's, in Cluster Autoscaler's formats): 6 nodes, min 0, max 6" in text
        assert "batch-pool is at its maximum 6" in text
        assert ("Job farm/frames: 224 waiting; the group can still add 0 nodes; its pods would need 38 in all, "
                "7 a node") in text
        assert "rough time: 224 waiting ÷ (6 nodes × 7) = 6 rounds × " in text
        assert "Scale-up: group batch-pool size set to 6 instead of 0 (max: 6)" in text
        assert "the Job's 3," in text and "on the 38 nodes its pods asked for" in text

        # Enter: the group's nodes and the pods waiting on it; Escape: back
        await pilot.press("enter")
        await settle(pilot)
        detail = app.screen
        assert isinstance(detail, GroupDetailScreen)
        assert "[b]Nodes[/b] (6)" in detail.text and "[b]Pods waiting on it[/b] (224)" in detail.text
        assert "Job farm/frames[/b]: 224 · will not get a node: batch-pool is at its maximum 6" in detail.text
        await pilot.press("escape")
        await settle(pilot)
        assert app.screen is screen
        await pilot.press("q")


@run_async
async def test_capacity_key_jump_and_help(small_cluster) -> None:  # noqa: ANN001
    """`7` and `:capacity` open it; without any autoscaler the table says so; `?` has its keys."""
    app = make_app(small_cluster)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("colon", *"capa", "enter")
        await settle(pilot)
        assert isinstance(app.screen, CapacityScreen)
        table = app.screen.query_one("#capacity-table", VirtualTable)
        assert table.empty == NO_GROUPS and len(table.rows) == 0
        await pilot.press("1", "7")
        await settle(pilot)
        assert isinstance(app.screen, CapacityScreen)
        await pilot.press("question_mark")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        titles = [t for t, _ in sections(type(app).BINDINGS)]
        assert len(app.screen.query(".help-section")) == len(titles) and {"Capacity", "Node group"} <= set(titles)
        said = {t: [b.tooltip for b in keys] for t, keys in sections(type(app).BINDINGS)}
        assert "Open the node group: its nodes and the pods waiting on it" in said["Capacity"]
        assert said["Node group"] == ["Back to the node groups"]
        assert "Go to the capacity screen" in said["Everywhere"]
