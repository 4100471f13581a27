"""Enter on a pod shows its recent Events, as kubectl describe does, and follows the watch.

The cluster is the test API server (tests/kubeapi) read by the real `kubernetes` client; its Events
are the recorded EventList and a watch built from it (`fixtures.event_watch_lines`).
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import AsyncIterator

from kubeapi import KubeAPI, WatchScript, fixtures
from textual.widgets import Static
from tui_helpers import run_async, settle, wait_for

from kubeview.cluster.kube.source import KubeSource
from kubeview.tui.app import make_app
from kubeview.tui.screens.pod_detail import PodDetailScreen
from kubeview.tui.widgets.virtual_table import VirtualTable

EVENTS = "/api/v1/events"


def detail_text(app) -> str:  # noqa: ANN001
    return str(app.screen.query_one("#pod-text", Static).render())


def event_rows(lines: list[str]) -> list[str]:
    """The Events block's rows, a wrapped message's lines (under its column) joined to their row."""
    rows: list[str] = []
    for line in lines:
        if line.startswith("  ") and not line[2:3].isspace() or not rows:
            rows.append(line)
        else:
            rows[-1] += " " + line.strip()
    return rows


@contextlib.asynccontextmanager
async def pod_view(api: KubeAPI, name: str) -> AsyncIterator[tuple]:
    """The TUI on the test API server (Events watched), showing pod default/NAME: (pilot, app)."""
    source = KubeSource(str(api.kubeconfig), events=True)
    app = make_app(source)
    try:
        async with app.run_test(size=(160, 48)) as pilot:
            await settle(pilot)
            await open_pod(pilot, app, name)
            yield pilot, app
    finally:
        source.close()


async def open_pod(pilot, app, name: str) -> None:  # noqa: ANN001
    await pilot.press("2", "slash", *name, "enter")
    await settle(pilot)
    assert app.screen.query_one(VirtualTable).cursor_key == ("default", name)
    await pilot.press("enter")
    await pilot.pause()
    assert isinstance(app.screen, PodDetailScreen) and app.screen.key == ("default", name)


@run_async
async def test_the_pod_view_lists_its_events_newest_last_and_follows_the_watch(kube_api: KubeAPI) -> None:
    cue = threading.Event()  # the watch of Events delivers its lines once the pod view is open
    kube_api.script_watch(EVENTS, WatchScript(fixtures.event_watch_lines(), gate=cue))
    async with pod_view(kube_api, "gpu-c") as (pilot, app):
        text = detail_text(app)
        lines = text.splitlines()
        head = lines.index("Events") + 1
        assert lines[head].split() == ["Type", "Reason", "Age", "From", "Message"]
        events = event_rows(lines[head + 1:])
        rows = [line.split(None, 2) for line in events[:2]]
        assert [r[:2] for r in rows] == [["Warning", "FailedScheduling"]] * 2
        assert "(x2 over " in events[1] and "(x" not in events[0]  # the series, newest last
        assert "default-scheduler  0/5 nodes are available: 5 Insufficient nvidia.com/gpu." in " ".join(lines)

        cue.set()
        await wait_for(pilot, lambda: "(x3 over " in detail_text(app), what="the third FailedScheduling")
        await pilot.press("escape")
        await pilot.pause()
        await pilot.press("escape")  # out of the filter
        await open_pod(pilot, app, "gpu-b")
        text = detail_text(app)
        assert text.index("Scheduled") < text.index("FailedMount")  # newest last
        assert 'kubelet            MountVolume.SetUp failed for volume "data"' in text


@run_async
async def test_when_events_are_forbidden_the_pod_view_says_so(kube_api: KubeAPI) -> None:
    kube_api.respond("GET", EVENTS, 403, {"kind": "Status", "apiVersion": "v1", "status": "Failure", "code": 403,
                                          "reason": "Forbidden", "details": {"kind": "events"},
                                          "message": 'events is forbidden: User "alice" cannot list resource '
                                                     '"events" in API group "" at the cluster scope'})
    async with pod_view(kube_api, "gpu-c") as (_, app):
        text = " ".join(detail_text(app).split())
        assert "Events events are not shown: " in text and "forbidden" in text
        assert "0/5 nodes are available" in text  # the scheduler's reason from the pod still shows
        assert app.state.model.connection.state == "live"
