"""Kueue's queues where the user looks (#40): the header's "+N held by queue", the Quota screen's
ClusterQueue table (GPU reserved against nominal as a bar, Kueue's counts, the first Workload waiting in
Kueue's words), its panel, and the queue screen Enter opens. The source is a stand-in that lists once
(no API server), fed the objects of tests/model/test_queues.py (shaped as Kueue v0.17.0 writes them).
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

from tui_helpers import run_async, settle, under, wait_for

from kubeview.model.events import KINDS, ConnectionState, Listed, SourceEvent
from kubeview.model.queues.positions import Position, Positions, QueuePositions
from kubeview.tui.screens.queue_detail import QueueDetailScreen
from kubeview.tui.screens.quota import QuotaScreen
from kubeview.tui.widgets.cluster_header import ClusterHeader
from kubeview.tui.widgets.virtual_table import VirtualTable

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "model"))
from test_queues import cluster_queue, local_queue, workload  # noqa: E402

from kubeview.tui.app import make_app  # noqa: E402

QUEUE_KINDS = ("kueue.ClusterQueue", "kueue.LocalQueue", "kueue.ResourceFlavor", "kueue.Workload")
WAITING = ("couldn't assign flavors to pod set main: insufficient unused quota for nvidia.com/gpu in flavor "
           "gpu-a100, 1 more needed")


class QueueCluster:
    """One 8-GPU node; a ClusterQueue of 4 GPUs nominal, all reserved; two Workloads waiting."""

    title = "kueue"
    is_local = False

    def __init__(self, jobs: bool = False) -> None:
        self.jobs = jobs  # also the suspended Jobs owning the waiting Workloads

    def run(self, emit: Callable[[SourceEvent], None], stop: threading.Event) -> None:
        node = {"metadata": {"name": "n1"}, "status": {"allocatable": {"cpu": "64", "memory": "256Gi", "pods": "110",
                                                                       "nvidia.com/gpu": "8"},
                                                       "conditions": [{"type": "Ready", "status": "True"}]}}
        objects: dict[str, list[dict]] = {"Node": [node], **{kind: _raw(kind) for kind in QUEUE_KINDS}}
        if self.jobs:
            objects["Job"] = [_job("team-a", "big", 2), _job("team-b", "late", 1)]
        for kind in (*KINDS, *QUEUE_KINDS):
            emit(Listed(kind, objects.get(kind, [])))
        emit(ConnectionState("live", time.time()))
        stop.wait()

    def close(self) -> None:
        pass


def _raw(kind: str) -> list[dict]:
    """test_queues.team()'s objects (job-late's message as Kueue words a 1-GPU pod set)."""
    return {
        "kueue.ClusterQueue": [cluster_queue()],
        "kueue.LocalQueue": [local_queue("team-a"), local_queue("team-b")],
        "kueue.ResourceFlavor": [{"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ResourceFlavor",
                                  "metadata": {"name": "gpu-a100"}, "spec": {}}],
        "kueue.Workload": [workload("team-a", "job-train-abc12", admitted=True),
                           workload("team-b", "job-eval-def34", admitted=True),
                           workload("team-a", "job-big-ghi56", admitted=False, created="2026-11-29T10:05:00Z"),
                           _one_more(workload("team-b", "job-late-jkl78", admitted=False, gpus=1,
                                              created="2026-11-29T10:06:00Z", priority=10))],
    }[kind]


def _job(namespace: str, name: str, parallelism: int) -> dict:
    """A Job as Kueue leaves it while its Workload waits: suspended, labelled with its LocalQueue."""
    return {"apiVersion": "batch/v1", "kind": "Job",
            "metadata": {"namespace": namespace, "name": name, "uid": f"uid-{name}", "resourceVersion": "5",
                         "labels": {"kueue.x-k8s.io/queue-name": "team-q"}},
            "spec": {"parallelism": parallelism, "completions": parallelism, "suspend": True,
                     "completionMode": "NonIndexed", "template": {"spec": {"containers": [{"name": "c", "image": "x"}]}}},
            "status": {}}


def _one_more(obj: dict) -> dict:
    obj["status"]["conditions"][0]["message"] = WAITING
    return obj


@run_async
async def test_the_header_counts_the_pods_kueue_holds() -> None:
    app = make_app(QueueCluster())
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await wait_for(pilot, lambda: app.summary.held_by_queue == 3, what="the header's count")
        await pilot.pause()
        line1 = str(app.screen.query_one(ClusterHeader).render()).splitlines()[0]
        assert len(line1) <= 80 and "(+3 held by queue)" in line1, line1


@run_async
async def test_quota_screen_shows_the_clusterqueue_and_enter_opens_it() -> None:
    app = make_app(QueueCluster())
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(pilot)
        await pilot.press("8")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, QuotaScreen)
        table = screen.query_one("#queue-table", VirtualTable)
        await wait_for(pilot, lambda: table.rows.index("team-cq") is not None and table.size.width > 0,
                       what="the ClusterQueue's row")
        line = table.render_line(1 + table.rows.index("team-cq")).text  # type: ignore[operator]
        cells = {c.key: under(table, line, c.key) for c in table.columns}
        assert cells["queue"] == "team-cq" and cells["gpu"].endswith("4/4") and cells["pending"] == "1"
        assert cells["cpu"].endswith("4/32") and cells["memory"].endswith("16Gi/128Gi"), cells
        assert cells["note"].startswith("team-b/job-late-jkl78: Pending — couldn't"), cells
        table.focus()
        table.cursor = table.rows.index("team-cq") or 0
        await settle(pilot)
        assert "ClusterQueue [b]team-cq[/b]" in screen.panel and WAITING in screen.panel
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, QueueDetailScreen) and bool(app.screen.text),
                       what="the queue screen")
        text = app.screen.text  # type: ignore[attr-defined]
        assert "gpu-a100 nvidia.com/gpu 4/4 (full)" in text
        assert "team-a/team-q (1 pending, 1 admitted)" in text
        assert text.index("job-late-jkl78") < text.index("job-big-ghi56")  # priority 10 first
        assert "team-a/job-train-abc12: admitted" in text


@run_async
async def test_the_jobs_row_and_panel_say_kueue_holds_it() -> None:
    from textual.widgets import Static

    app = make_app(QueueCluster(jobs=True))
    async with app.run_test(size=(200, 48)) as pilot:
        await settle(pilot)
        await pilot.press("3")
        await settle(pilot)
        table = app.screen.query_one("#workload-table", VirtualTable)
        key = ("Job", "team-b", "late")
        await wait_for(pilot, lambda: table.rows.index(key) is not None, what="the Job's row")
        assert "held by queue team-q: Pending" in " ".join(str(c) for c in table.rows.cells(key))
        table.cursor = table.rows.index(key) or 0
        await settle(pilot)
        panel = str(app.screen.query_one("#job-panel", Static).render())
        assert "held by queue team-q: Pending" in panel and WAITING in panel
        assert "from Kueue's Workload team-b/job-late-jkl78 (its QuotaReserved condition)" in panel


class PositionsCluster(QueueCluster):
    """QueueCluster that reports Kueue's positions as the kube source does (`ReportsQueuePositions`): a round
    each time it is asked while `want_positions` is set. Kueue puts job-big first although job-late has the
    higher priority (its answer, not kubeview's ordering, is what the screens show)."""

    ROUND = Positions({"team-cq": {("team-a", "job-big-ghi56"): Position("team-cq", 0, "team-q", 0),
                                   ("team-b", "job-late-jkl78"): Position("team-cq", 1, "team-q", 0)}})

    def __init__(self) -> None:
        super().__init__()
        self.want_positions = threading.Event()
        self.rounds = 0

    def run(self, emit: Callable[[SourceEvent], None], stop: threading.Event) -> None:
        threading.Thread(target=super().run, args=(emit, stop), daemon=True).start()
        while not stop.is_set():
            if self.want_positions.wait(0.05):
                self.rounds += 1
                emit(QueuePositions(self.ROUND))
                stop.wait(0.05)


@run_async
async def test_the_queue_screens_ask_for_kueues_positions_only_while_shown_and_show_them() -> None:
    source = PositionsCluster()
    app = make_app(source)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(pilot)
        assert not source.want_positions.is_set() and source.rounds == 0  # the Nodes screen shows none
        await pilot.press("8")
        await wait_for(pilot, lambda: ", 1st in team-cq (1st in team-q): Pending" in app.screen.panel,  # type: ignore[attr-defined]
                       what="Kueue's position in the panel")
        assert source.want_positions.is_set()
        table = app.screen.query_one("#queue-table", VirtualTable)
        table.focus()
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, QueueDetailScreen) and bool(app.screen.text),
                       what="the queue screen")
        await settle(pilot)
        text = app.screen.text  # type: ignore[attr-defined]
        assert "team-a/job-big-ghi56, 1st in team-cq (1st in team-q): Pending" in text
        assert "team-b/job-late-jkl78, 2nd in team-cq (1st in team-q): Pending" in text
        assert text.index("job-big-ghi56") < text.index("job-late-jkl78")  # Kueue's order over priority
        assert source.want_positions.is_set()  # the queue screen wants them too
        await pilot.press("escape", "1")
        await wait_for(pilot, lambda: not source.want_positions.is_set(), what="positions no longer asked for")
        rounds = source.rounds
        await pilot.pause(0.3)
        assert source.rounds == rounds  # no round while no queue screen is up
