"""The Workloads table keeps each figure under its own header for ReplicaSets and Jobs alike (#24 item
16: a Job's succeeded count stood under READY and its state under OWNER)."""

from __future__ import annotations

import pytest
from tui_helpers import run_async, settle, under, wait_for

from kubeview.cluster.local.source import LocalSource
from kubeview.tui.app import make_app
from kubeview.tui.widgets.virtual_table import VirtualTable

SIZES = [(160, 48), (100, 30), (80, 24)]


@pytest.mark.parametrize("size", SIZES)
@run_async
async def test_job_figures_stand_under_their_own_headers(demo: LocalSource, size: tuple[int, int]) -> None:
    app = make_app(demo)
    async with app.run_test(size=size) as pilot:
        await wait_for(pilot, lambda: app.state.model.is_synced(("Job", "ReplicaSet")) and app.state.model.jobs.jobs,
                       30, "the demo's Job")
        await settle(pilot)
        await pilot.press("3")
        await settle(pilot)
        table = app.screen.query_one(VirtualTable)
        keys = [table.rows.key(i) for i in range(len(table.rows))]
        job_key = next(k for k in keys if k[0] == "Job")
        rs_key = next(k for k in keys if k[0] == "ReplicaSet")
        table.cursor = keys.index(job_key)
        await pilot.pause()
        header = table.render_line(0).text
        for label in ("READY", "DONE", "STATE"):
            assert under(table, header, label.lower()).startswith(label[:3]), (label, header)
        assert under(table, header, "desired") in ("DESIRED", "WANT"), header
        if size == (80, 24):  # short headers, whole words: it was `DES…` and `OWN…`
            assert header.split() == ["KIND", "▲", "NAMESPACE", "NAME", "WANT", "READY", "DONE", "PROGRESS",
                                      "STATE", "OWNER"], header
        job = app.state.model.jobs.jobs[job_key[1:]]
        top = round(table.scroll_y)
        job_line = table.render_line(keys.index(job_key) - top + 1).text
        assert under(table, job_line, "ready") == str(job.ready)
        assert under(table, job_line, "done") == str(job.succeeded)
        assert job.state.startswith(under(table, job_line, "state").rstrip("…")[:4]), job_line
        assert under(table, job_line, "owner") == ""
        rs = app.state.model.workloads[rs_key]
        table.cursor = keys.index(rs_key)
        await pilot.pause()
        top = round(table.scroll_y)
        rs_line = table.render_line(keys.index(rs_key) - top + 1).text
        assert under(table, rs_line, "ready") == str(rs.ready) and under(table, rs_line, "done") == "-"
        assert under(table, rs_line, "state") == ""
        assert under(table, rs_line, "bar").endswith("%"), rs_line  # the figure, even at 80 columns
