"""A finished render shows no consumer still rendering (#24 item 16: `idle 1.0M` samples/s after the end)."""

from __future__ import annotations

from dataclasses import replace

import pytest
from recorded_render import RecordedRenderJob
from tui_helpers import run_async, settle, wait_for

from kubeview.cluster.synthetic import SyntheticSource
from kubeview.tui.app import make_app
from kubeview.tui.screens.render import RenderScreen
from kubeview.tui.widgets.virtual_table import VirtualTable


class IdleAtTheEnd(RecordedRenderJob):
    """The recorded finished render, its consumers still reported with their last rate (as a local
    render's producer does while its consumers idle before they go)."""

    def __init__(self) -> None:
        super().__init__("finished")
        last = self.statuses[-1]
        consumers = [replace(c, state="idle" if i == 0 else "working", samples_per_second=1.0e6)
                     for i, c in enumerate(last.consumers)]
        self.statuses[-1] = replace(last, consumers=consumers)


@pytest.mark.parametrize("size", [(160, 48), (100, 30), (80, 24)])
@run_async
async def test_a_finished_render_shows_no_rate(size: tuple[int, int]) -> None:
    job = IdleAtTheEnd()
    app = make_app(SyntheticSource(nodes=12, pods=80, seed=1), job)
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, RenderScreen)
        await wait_for(pilot, lambda: job.polls >= len(job.statuses), what="the recorded statuses")
        table = screen.query_one("#consumers", VirtualTable)
        await wait_for(pilot, lambda: len(table.rows) == 2, what="the consumers")
        await pilot.pause()
        rate = [c.key for c in table.columns].index("rate")
        cells = [table.rows.cells(table.rows.key(i)) for i in range(2)]
        assert sorted(str(c[1]) for c in cells) == ["idle", "working"]  # premise: the producer says so, at 1.0M
        assert [str(c[rate]) for c in cells] == ["-", "-"]  # finished: nobody renders
        lines = [table.render_line(y).text for y in (1, 2)]
        assert not any("1.0M" in line for line in lines), lines
