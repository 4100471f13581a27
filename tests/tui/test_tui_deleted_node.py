"""A preempted (deleted) node's DRA devices are gone on its page and in every GPU figure (#24 item 5):
in `--demo`, `P` `y` on dra-mig-node-1 left its page saying `node not found (deleted?)` while listing
its two MIG devices as free."""

from __future__ import annotations

import pytest
from tui_helpers import run_async, settle, wait_for

from kubeview.cluster.local.source import LocalSource
from kubeview.tui.app import make_app
from kubeview.tui.screens.node_detail import NodeDetailScreen
from kubeview.tui.screens.prompts import Confirm
from kubeview.tui.widgets.device_table import DeviceTableView

NODE = "dra-mig-node-1"


def device_text(app) -> str:  # noqa: ANN001
    return app.screen.query_one(DeviceTableView).render().plain


@pytest.mark.parametrize("size", [(160, 48), (100, 30), (80, 24)])
@run_async
async def test_preempted_node_devices_are_gone_not_free(demo: LocalSource, size: tuple[int, int]) -> None:
    app = make_app(demo)
    async with app.run_test(size=size) as pilot:
        await wait_for(pilot, lambda: app.state.model.is_synced(("Node", "Pod", "ResourceSlice")), 30, "the lists")
        await settle(pilot)
        with app.state.lock:
            ledger = app.state.model.gpus
            mine = ledger.node(NODE)
            assert mine is not None and len(mine.devices) == 2 and mine.gpu_free >= 1  # premise: a free MIG
        await pilot.press("1", "slash", *NODE, "enter", "enter")
        await wait_for(pilot, lambda: isinstance(app.screen, NodeDetailScreen) and app.screen.node == NODE,
                       what="the node's page")
        await settle(pilot)
        assert " free" in device_text(app)
        await pilot.press("P")
        await wait_for(pilot, lambda: isinstance(app.screen, Confirm) and app.screen.is_active, what="the question")
        await pilot.pause()
        await pilot.press("y")
        await wait_for(pilot, lambda: "preempted" in app.banner[0], what="the preemption")
        await wait_for(pilot, lambda: NODE not in app.state.model.nodes, what="the node to go")
        await settle(pilot)
        text = device_text(app)
        assert " free" not in text and "gone" in text, text
        assert text.count("gone") >= 3 and "counted nowhere" in text, text  # the title and each device
        with app.state.lock:
            mine = ledger.node(NODE)
            assert {s.state for s in mine.devices} == {"gone"} and mine.gpu_total == 0
