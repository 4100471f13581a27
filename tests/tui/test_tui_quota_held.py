"""Held by quota where the user looks (#40): the Workloads row's STATE, the Job's panel (the API server's
words, where they come from, the never-created indexes marked on the strip) and the header's pending
split. The source is a stand-in that lists once (no API server), fed the objects of
tests/model/test_quota.py, whose FailedCreate message is the one the real plane records
(tests/realk8s/test_quota_real.py).
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

from textual.widgets import Static
from tui_helpers import run_async, settle, wait_for

from kubeview.model.events import KINDS, ConnectionState, Listed, SourceEvent, WatchEvent
from kubeview.tui.app import make_app
from kubeview.tui.widgets.cluster_header import ClusterHeader
from kubeview.tui.widgets.virtual_table import VirtualTable

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "model"))
from test_quota import GPU_MSG, event, held_model, job, pod, quota  # noqa: E402

WORDS = "held by quota gpus: requests.nvidia.com/gpu 2/2 — 1 pod not created"


class HeldCluster:
    """A namespace at its GPU quota: an Indexed Job with indexes 0 and 2 running, index 1 refused."""

    title = "quota"
    is_local = False

    def run(self, emit: Callable[[SourceEvent], None], stop: threading.Event) -> None:
        node = {"metadata": {"name": "n1"}, "status": {"allocatable": {"cpu": "64", "memory": "256Gi", "pods": "110",
                                                                       "nvidia.com/gpu": "8"},
                                                       "conditions": [{"type": "Ready", "status": "True"}]}}
        objects = {
            "Node": [node],
            "Pod": [pod("team-a", "train-0", job="train", index=0), pod("team-a", "train-2", job="train", index=2)],
            "Job": [job("team-a", "train", parallelism=3, completions=6, indexed=True)],
            "ResourceQuota": [quota(hard={"requests.nvidia.com/gpu": "2"}, used={"requests.nvidia.com/gpu": "2"})],
            "Event": [event("team-a", "Job", "train", GPU_MSG, uid="uid-train", count=3)],
        }
        for kind in (*KINDS, "Event", "ResourceQuota"):
            emit(Listed(kind, objects.get(kind, [])))
        emit(ConnectionState("live", time.time()))
        stop.wait()

    def close(self) -> None:
        pass


@run_async
async def test_the_row_the_panel_and_the_header_say_held_by_quota() -> None:
    app = make_app(HeldCluster())
    async with app.run_test(size=(200, 48)) as pilot:
        await settle(pilot)
        await wait_for(pilot, lambda: app.summary.held_by_quota == 1, what="the header's count")
        line1 = str(app.screen.query_one(ClusterHeader).render()).splitlines()[0]
        assert "0 pending (+1 held by quota)" in line1, line1
        await pilot.press("3")
        await settle(pilot)
        table = app.screen.query_one("#workload-table", VirtualTable)
        key = ("Job", "team-a", "train")
        await wait_for(pilot, lambda: table.rows.index(key) is not None, what="the Job's row")
        assert WORDS in " ".join(str(c) for c in table.rows.cells(key))
        table.cursor = table.rows.index(key) or 0
        await settle(pilot)
        panel = str(app.screen.query_one("#job-panel", Static).render())
        assert WORDS in panel and GPU_MSG in panel
        assert "from job-controller's FailedCreate Events (x3) and the Job's status" in panel
        assert "✕ held by quota 1" in panel
        strip = panel.splitlines()[-1]
        assert strip.startswith("▆✕▆··"), strip  # index 1 never created: the quota refused its pod


@run_async
async def test_the_header_keeps_held_at_80_columns() -> None:
    app = make_app(HeldCluster())
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await wait_for(pilot, lambda: app.summary.held_by_quota == 1, what="the header's count")
        await pilot.pause()
        line1 = str(app.screen.query_one(ClusterHeader).render()).splitlines()[0]
        assert len(line1) <= 80 and "(+1 held by quota)" in line1, line1


def test_a_deployment_says_its_replicasets_hold() -> None:
    from kubeview.model.workloads import WorkloadView
    from kubeview.tui.screens.workloads import held_rows

    m = held_model()
    rs = {"metadata": {"namespace": "team-a", "name": "web-1", "resourceVersion": "1",
                       "ownerReferences": [{"kind": "Deployment", "name": "web", "controller": True}]},
          "spec": {"replicas": 3}, "status": {"replicas": 2}}
    m.apply(Listed("ReplicaSet", [rs]))
    m.apply(WatchEvent("Event", "ADDED", {**event("team-a", "ReplicaSet", "web-1", GPU_MSG, ev="e9"),
                                         "source": {"component": "replicaset-controller"}}))
    rows = held_rows(m.held(), m.workloads)
    assert rows[("Deployment", "team-a", "web")] is rows[("ReplicaSet", "team-a", "web-1")]
    assert rows[("Deployment", "team-a", "web")].words() == WORDS
    assert isinstance(m.workloads[("ReplicaSet", "team-a", "web-1")], WorkloadView)
