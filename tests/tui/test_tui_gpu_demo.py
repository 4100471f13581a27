"""The demo's time-sliced and MIG nodes on screen (#35): the Nodes table reads each in its own unit
(`8/8 ×4`, `2/7 1g`), `/` finds them by "time-slicing" and "mig", the header says what the GPU total is
made of, the node screen's GPUs block has the words, offers, carves and the two-replica warning, and the
pod screen warns of notebooks/ddp-pair's two replicas."""

from __future__ import annotations

from tui_helpers import run_async, settle, wait_for

from kubeview.cluster.local.demo import DEMO_PENDING
from kubeview.cluster.local.source import LocalSource
from kubeview.tui.app import make_app
from kubeview.tui.screens.node_detail import NodeDetailScreen
from kubeview.tui.widgets.allocated_resources import AllocatedResources
from kubeview.tui.widgets.cluster_header import ClusterHeader
from kubeview.tui.widgets.gpu_shape import GpuShapeView
from kubeview.tui.widgets.virtual_table import VirtualTable

WARNING = "notebooks/ddp-pair holds 2 time-slicing replicas of nvidia.com/gpu: they may be one physical GPU"


def row_text(table: VirtualTable, key: str) -> str:
    cells = table.rows.cells(key)
    return "  ".join(c if isinstance(c, str) else c.plain for c in cells)


@run_async
async def test_nodes_table_and_node_screens_say_shared_and_mig(demo: LocalSource) -> None:
    app = make_app(demo)
    async with app.run_test(size=(160, 48)) as pilot:
        await wait_for(pilot, lambda: app.state.model.pending_count() == DEMO_PENDING, 30, "the demo's pending pods")
        await settle(pilot)
        table = app.screen.query_one(VirtualTable)
        assert "8/8 ×4" in row_text(table, "gpu-ts-1")  # 2 L4s × 4 replicas, all held: never "8 GPUs"
        assert "2/7 1g" in row_text(table, "gpu-mig-1")  # 1g.10gb slices
        assert " 1/2 3g" in row_text(table, "dra-mig-node-1")  # DRA's two 3g.40gb devices
        assert str(table.rows.cells("gpu-node-1")[3]).rstrip().endswith(" 1/2")  # whole GPUs as before
        line = app.screen.query_one(ClusterHeader).render().plain.splitlines()[1]
        assert "12/16" in line and "(8 = 2 physical × 4 shared, 2 MIG slices) + 2/7 MIG slices" in line, line
        for text, hits in (("time-slicing", ["gpu-ts-1"]), ("1g.10gb", ["gpu-mig-1"])):
            await pilot.press("slash", *text, "enter")
            await settle(pilot)
            assert [table.rows.key(i) for i in range(len(table.rows))] == hits, text
            await pilot.press("escape")
            await settle(pilot)
        await pilot.press("G", "enter")  # gpu-ts-1, the last by name
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, NodeDetailScreen) and screen.node == "gpu-ts-1"
        block = screen.query_one(GpuShapeView)
        await wait_for(pilot, lambda: block.block is not None, 10, "the GPUs block")
        text = block.render().plain
        assert text.startswith("GPUs 8 advertised = 2 physical × 4 (time-slicing) · NVIDIA-L4"), text
        assert "nvidia.com/gpu" in text and "each of 2 GPUs: 4 time-slicing replicas" in text
        assert "⚠ " + WARNING in " ".join(text.split()), text
        await pilot.press("escape", "up", "up", "up", "enter")  # gpu-mig-1
        await settle(pilot)
        assert app.screen.node == "gpu-mig-1"  # type: ignore[attr-defined]
        text = app.screen.query_one(GpuShapeView).render().plain
        assert text.startswith("GPUs 7 1g.10gb slices of 1 GPU · NVIDIA-A100-SXM4-80GB · MIG mixed"), text
        assert "nvidia.com/mig-1g.10gb" in text and "2/7" in text and "each of 1 GPU: 7 × 1g.10gb" in text
        info = app.screen.query_one(AllocatedResources).render().renderables[0]  # type: ignore[attr-defined]
        assert "Largest 1g.10gb slice request that fits: 5" in info.plain  # in the node's unit
        await pilot.press("escape", "down", "enter")  # gpu-node-1: plain whole GPUs, no block
        await settle(pilot)
        assert app.screen.node == "gpu-node-1"  # type: ignore[attr-defined]
        assert not app.screen.query_one(GpuShapeView).display


@run_async
async def test_pod_screen_warns_of_two_replicas(demo: LocalSource) -> None:
    from kubeview.tui.screens.pod_detail import PodDetailScreen

    app = make_app(demo)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: app.state.model.pending_count() == DEMO_PENDING, 30, "the demo's pending pods")
        await settle(pilot)
        await pilot.press("2", "slash", *"ddp-pair", "enter")
        await settle(pilot)
        await pilot.press("enter")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, PodDetailScreen) and screen.key == ("notebooks", "ddp-pair")
        text = " ".join(str(screen.query_one("#pod-text").render()).split())
        assert "Shared GPUs" in text and "⚠ " + WARNING in text, text
