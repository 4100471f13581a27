"""Snapshots of every screen at 120x40, driven by the deterministic synthetic source.

Regenerate with `pytest tests/tui/test_tui_snapshots.py --snapshot-update` and look at the SVGs
in tests/__snapshots__/ before committing them.
"""

from __future__ import annotations

from recorded_render import RecordedRenderJob
from textual.pilot import Pilot
from tui_helpers import settle, wait_for

from kubeview.cluster.synthetic import SyntheticSource
from kubeview.tui.app import make_app
from kubeview.tui.screens.render import RenderScreen

SIZE = (120, 40)


def cluster() -> SyntheticSource:
    return SyntheticSource(nodes=12, pods=80, seed=1)


def keys(*presses: str):  # noqa: ANN201
    async def run_before(pilot: Pilot) -> None:
        await settle(pilot)
        for key in presses:
            await pilot.press(key)
            await settle(pilot)

    return run_before


def test_nodes(snap_compare) -> None:  # noqa: ANN001
    assert snap_compare(make_app(cluster()), terminal_size=SIZE, run_before=keys())


def test_nodes_sorted_by_gpu_fit_filtered(snap_compare) -> None:  # noqa: ANN001
    assert snap_compare(make_app(cluster()), terminal_size=SIZE, run_before=keys("F", "slash", "g", "p", "u"))


def test_node_detail(snap_compare) -> None:  # noqa: ANN001
    assert snap_compare(make_app(cluster()), terminal_size=SIZE, run_before=keys("G", "up", "enter"))


def test_pods(snap_compare) -> None:  # noqa: ANN001
    assert snap_compare(make_app(cluster()), terminal_size=SIZE, run_before=keys("2"))


def test_workloads(snap_compare) -> None:  # noqa: ANN001
    assert snap_compare(make_app(cluster()), terminal_size=SIZE, run_before=keys("3"))


def test_workloads_scale_prompt(snap_compare) -> None:  # noqa: ANN001
    assert snap_compare(make_app(cluster()), terminal_size=SIZE, run_before=keys("3", "s"))


def test_packing_edited(snap_compare) -> None:  # noqa: ANN001
    assert snap_compare(make_app(cluster()), terminal_size=SIZE, run_before=keys("4", "p", "n"))


def test_help(snap_compare) -> None:  # noqa: ANN001
    assert snap_compare(make_app(cluster()), terminal_size=SIZE, run_before=keys("question_mark"))


def _render(moment: str):  # noqa: ANN202
    async def run_before(pilot: Pilot) -> None:
        await settle(pilot)
        screen = pilot.app.screen
        assert isinstance(screen, RenderScreen)
        job = pilot.app.render_job
        await wait_for(pilot, lambda: job.polls >= len(job.statuses), what="the recorded statuses")
        await wait_for(pilot, lambda: screen.query_one("#render-image")._image is not None, what="the image")
        await wait_for(pilot, lambda: getattr(screen.progress, "status", None) is job.status, what="the last status")
        await pilot.pause()

    return run_before


def test_render_running(snap_compare) -> None:  # noqa: ANN001
    app = make_app(cluster(), RecordedRenderJob("running"))
    assert snap_compare(app, terminal_size=SIZE, run_before=_render("running"))


def test_render_finished(snap_compare) -> None:  # noqa: ANN001
    app = make_app(cluster(), RecordedRenderJob("finished"))
    assert snap_compare(app, terminal_size=SIZE, run_before=_render("finished"))


def test_capacity(snap_compare) -> None:  # noqa: ANN001
    """A CA node group at its max with a Job's pods waiting (its story and rough time) beside a NodePool."""
    from capacity_source import CapacitySource

    assert snap_compare(make_app(CapacitySource()), terminal_size=SIZE, run_before=keys("7"))


def test_capacity_group(snap_compare) -> None:  # noqa: ANN001
    from capacity_source import CapacitySource

    assert snap_compare(make_app(CapacitySource()), terminal_size=SIZE, run_before=keys("7", "enter"))
