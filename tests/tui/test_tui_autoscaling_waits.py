"""A pending pod says what it waits for in the TUI: the Pods table's REASON, the pod's detail and the
header's pending count split into room / nodes / never, in the words of model/autoscaling/waits.py.

The source is a stand-in that lists once (no API server): the objects are the autoscaling fixtures
(tests/fixtures/autoscaling, each saying where its shape comes from), which the kube source delivers
the same way (tests/realk8s/test_autoscaling_source.py).
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

from textual.widgets import Static
from tui_helpers import run_async, settle, wait_for

from kubeview.model.autoscaling.store import CA_STATUS, KARPENTER_NODECLAIM, KARPENTER_NODEPOOL
from kubeview.model.events import KINDS, ConnectionState, Listed, SourceEvent
from kubeview.tui.app import make_app
from kubeview.tui.screens.pod_detail import PodDetailScreen
from kubeview.tui.widgets.cluster_header import ClusterHeader
from kubeview.tui.widgets.virtual_table import VirtualTable

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "model"))
from autoscaling_builders import fixture, node, of_kind, pod  # noqa: E402


class ListedOnce:
    """A stand-in cluster that lists once and stays live: nodes, pending pods, the autoscalers' Events,
    CA's status and Karpenter's NodePools and NodeClaims (the fixtures)."""

    title = "autoscaling"
    is_local = False

    def run(self, emit: Callable[[SourceEvent], None], stop: threading.Event) -> None:
        objects = {
            "Node": [node(f"g{i}", {"kwok-nodegroup": "gpu-pool", "pool": "gpu"}) for i in range(6)]
            + [node(f"k{i}", {"karpenter.sh/nodepool": "gpu"}) for i in range(6)],
            "Pod": [pod("batch-0", gpus=8, selector={"pool": "gpu"}), pod("train-0", gpus=8),
                    pod("train-1", gpus=8), pod("quiet"), pod("batch-3", gpus=8, selector={"pool": "none"})],
            "Event": fixture("events.yaml"),
            CA_STATUS: fixture("ca-status-yaml.yaml"),
            KARPENTER_NODEPOOL: of_kind("karpenter.yaml", "NodePool"),
            KARPENTER_NODECLAIM: of_kind("karpenter.yaml", "NodeClaim"),
        }
        for kind in (*KINDS, "Event", CA_STATUS, KARPENTER_NODEPOOL, KARPENTER_NODECLAIM):
            emit(Listed(kind, objects.get(kind, [])))
        emit(ConnectionState("live", time.time()))
        stop.wait()

    def close(self) -> None:
        pass


def row_text(app, key: tuple[str, str]) -> str:  # noqa: ANN001
    table = app.screen.query_one(VirtualTable)
    return " ".join(str(c) for c in table.rows.cells(key))


@run_async
async def test_the_reason_the_detail_and_the_header_say_it() -> None:
    app = make_app(ListedOnce())
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(pilot)
        header = app.screen.query_one(ClusterHeader)
        await wait_for(pilot, lambda: app.summary.pending_never == 2, what="the header's counts")
        line1 = str(header.render()).splitlines()[0]
        assert "5 pending (1 room, 2 nodes, 2 never)" in line1, line1
        await pilot.press("2")
        await settle(pilot)
        assert "NodePool gpu at its limit nvidia.com/gpu 48/48" in row_text(app, ("default", "train-0"))
        assert "waiting for a node: node group gpu-pool scaling 6 → 38 (in progress" in row_text(
            app, ("default", "batch-0"))
        assert "waiting for a node: NodeClaim gpu-x7k2p of NodePool gpu launching" in row_text(
            app, ("default", "train-1"))
        assert "Insufficient nvidia.com/gpu" in row_text(app, ("default", "quiet"))  # nothing said: the scheduler's
        # CA said no group fits it, naming none: the scheduler's words stay (in red), the verdict is counted
        assert "Insufficient nvidia.com/gpu" in row_text(app, ("default", "batch-3"))
        await pilot.press("slash", *"train-0", "enter")
        await settle(pilot)
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, PodDetailScreen)
        text = str(app.screen.query_one("#pod-text", Static).render())
        assert "What it waits for: nothing that will come" in text
        assert "NodePool gpu at its limit nvidia.com/gpu 48/48" in text
        assert "autoscaler: Failed to schedule pod, all available instance types exceed limits for nodepool" in text


@run_async
async def test_the_header_fits_80_columns() -> None:
    app = make_app(ListedOnce())
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await wait_for(pilot, lambda: app.summary.pending_never == 2, what="the header's counts")
        await pilot.pause()
        line1 = str(app.screen.query_one(ClusterHeader).render()).splitlines()[0]
        # the split kept whole; the packing policy after it cut, as it always was at 80 columns
        assert len(line1) <= 80 and "5 pending (2 never) │ packing" in line1, line1
