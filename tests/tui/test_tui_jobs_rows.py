"""The Jobs rows and panel pieces (pure): the strip's cells for small and big Jobs, the combined mapping."""

from __future__ import annotations

from kubeapi import fixtures

from kubeview.model.jobs.progress import IndexState
from kubeview.model.jobs.views import JobView
from kubeview.model.workloads import WorkloadView
from kubeview.tui.rows.jobs import WorkloadItems, cell_size, strip_cells


def test_one_cell_per_index_up_to_six_lines_then_shared_cells_show_the_worst() -> None:
    small = [IndexState.SUCCEEDED, IndexState.FAILED, IndexState.RUNNING, IndexState.PENDING, IndexState.NOT_STARTED]
    assert strip_cells(small).plain == "██▆▂·"
    assert strip_cells(small).spans[1].style == "bold red"  # a failure reads apart from a success
    big = [IndexState.SUCCEEDED] * 3600
    big[1234] = IndexState.FAILED
    big[3599] = IndexState.NOT_STARTED
    assert cell_size(600) == 1 and cell_size(601) == 2 and cell_size(3600) == 6
    text = strip_cells(big)
    lines = text.plain.split("\n")
    assert len(lines) == 6 and {len(line) for line in lines} == {100}
    assert lines[-1][-1] == "·"  # the last cell holds one index not started: not shown as done
    red = [s for s in text.spans if s.style == "bold red"]
    assert len(red) == 1 and red[0].start == 1234 // 6 + 2  # two newlines before the cell of index 1234


def test_workloads_and_jobs_share_one_mapping() -> None:
    job = JobView.from_api(fixtures.load("jobs/indexed/job-11-finished.json"))
    rs = WorkloadView.from_api("ReplicaSet", fixtures.load("replicaset.json"))
    items = WorkloadItems({rs.key: rs}, {job.key: job})
    assert sorted(items) == [("Job", "batch", "items-by-day"), rs.key]
    assert items[("Job", "batch", "items-by-day")] is job and items.get(("Job", "batch", "nope")) is None
    assert ("Job", "batch", "items-by-day") in items and ("Job", "x") not in items and len(items) == 2
