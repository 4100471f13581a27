"""Pods sort by name naturally (#24 item 16: `-86, -9, -90`, character by character): listed and
watched pods alike, on the Pods table at every supported size."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

import pytest
from tui_helpers import run_async, settle, wait_for

from kubeview.model.events import KINDS, ConnectionState, Listed, SourceEvent, WatchEvent
from kubeview.tui.app import make_app
from kubeview.tui.widgets.virtual_table import VirtualTable


def pod(name: str) -> dict:
    return {"metadata": {"namespace": "ns", "name": name, "resourceVersion": "1", "uid": name},
            "spec": {"nodeName": "node-1", "containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}]},
            "status": {"phase": "Running"}}


class NumberedPods:
    """Lists app-90, app-9, app-86, app-100, then a watch adds app-10."""

    title = "numbered"
    is_local = False

    def run(self, emit: Callable[[SourceEvent], None], stop: threading.Event) -> None:
        node = {"metadata": {"name": "node-1", "resourceVersion": "1"},
                "status": {"allocatable": {"cpu": "64", "memory": "64Gi", "pods": "110"},
                           "capacity": {"cpu": "64", "memory": "64Gi", "pods": "110"}}}
        objects = {"Node": [node], "Pod": [pod(f"app-{n}") for n in (90, 9, 86, 100)]}
        for kind in KINDS:
            emit(Listed(kind, objects.get(kind, [])))
        emit(ConnectionState("live", time.time()))
        emit(WatchEvent("Pod", "ADDED", pod("app-10")))
        stop.wait()

    def scale(self, kind: str, namespace: str, name: str, replicas: int) -> str:
        raise NotImplementedError

    def close(self) -> None:
        pass


@pytest.mark.parametrize("size", [(160, 48), (100, 30), (80, 24)])
@run_async
async def test_pods_sort_naturally(size: tuple[int, int]) -> None:
    app = make_app(NumberedPods())
    async with app.run_test(size=size) as pilot:
        await wait_for(pilot, lambda: len(app.state.model.pods) == 5, what="the five pods")
        await settle(pilot)
        await pilot.press("2")
        await settle(pilot)
        table = app.screen.query_one(VirtualTable)
        names = [table.rows.key(i)[1] for i in range(len(table.rows))]
        assert names == ["app-9", "app-10", "app-86", "app-90", "app-100"], names
        await pilot.press("slash", *"app-", "enter")  # the index of a filter keeps the order
        await settle(pilot)
        assert [table.rows.key(i)[1] for i in range(len(table.rows))] == names
