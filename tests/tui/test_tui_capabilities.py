"""The TUI offers what the source declares (cluster/source.py) and refuses the rest in one line.

The synthetic cluster neither edits Jobs nor preempts nodes; a bare source does not even scale. Each
action then ends in the refusal banner, never an AttributeError, and `P` is not offered on a node.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from tui_helpers import run_async, settle, wait_for

from kubeview.cluster.synthetic import SyntheticSource
from kubeview.model.events import KINDS, ConnectionState, Listed, SourceEvent
from kubeview.tui.app import make_app
from kubeview.tui.screens.node_detail import NodeDetailScreen
from kubeview.tui.screens.prompts import Confirm

SIZE = (120, 40)


class Bare:
    """Lists an empty cluster and can do nothing to it."""

    title = "bare"
    is_local = False

    def run(self, emit: Callable[[SourceEvent], None], stop: threading.Event) -> None:
        for kind in KINDS:
            emit(Listed(kind, []))
        emit(ConnectionState("live", 0.0))
        stop.wait()

    def close(self) -> None:
        pass


@run_async
async def test_a_source_that_cannot_change_jobs_gets_the_refusal(small_cluster: SyntheticSource) -> None:
    app = make_app(small_cluster)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        for act, refusal in ((lambda: app.job_action("batch", "train", parallelism=2), "cannot change Jobs."),
                             (lambda: app.job_action("batch", "train", suspend=True), "cannot change Jobs."),
                             (lambda: app.preempt("gpu-node-04"), "cannot preempt nodes.")):
            app.banner = ("", "")
            act()
            await wait_for(pilot, lambda: app.banner[1] == "error", what="the refusal")
            assert app.banner == (f"this cluster source {refusal}", "error")


@run_async
async def test_preempt_is_not_offered_where_the_source_cannot_preempt(small_cluster: SyntheticSource) -> None:
    app = make_app(small_cluster)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("enter")  # the first node
        await wait_for(pilot, lambda: isinstance(app.screen, NodeDetailScreen), what="the node screen")
        assert app.screen.check_action("preempt", ()) is False
        await pilot.press("P")
        await pilot.pause()
        assert not isinstance(app.screen, Confirm)


@run_async
async def test_a_source_that_cannot_scale_gets_the_refusal() -> None:
    app = make_app(Bare())
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert app.packing_label == "not managed here (start with --extender URL or --native-scheduler)"
        app.scale("Deployment", "default", "web", 3)
        await wait_for(pilot, lambda: app.banner[1] == "error", what="the refusal")
        assert app.banner == ("this cluster source cannot scale workloads.", "error")
