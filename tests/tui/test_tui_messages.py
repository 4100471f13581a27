"""What the TUI says: sort arrows match the order, units on requests, one render message, status lines
that go with their screen, long refusals read whole, pods bigger than any node said to never fit."""

from __future__ import annotations

from dataclasses import replace

import pytest
from textual.widgets import Static
from tui_helpers import run_async, settle, wait_for

from kubeview.cluster.synthetic import SyntheticSource
from kubeview.tui.app import make_app
from kubeview.tui.format import requests_summary
from kubeview.tui.summary import EMPTY, MORE, Totals, fit_parts, gpu_parts
from kubeview.tui.widgets.banner import Banner
from kubeview.tui.widgets.cluster_header import ClusterHeader
from kubeview.tui.widgets.virtual_table import VirtualTable

SIZE = (120, 40)
FORBIDDEN = ('replicasets.apps "app-00001" is forbidden: User "system:serviceaccount:default:viewer" cannot '
             'patch resource "replicasets/scale" in API group "apps" in the namespace "default" (403 Forbidden)')


def header(table: VirtualTable) -> str:
    return table.render_line(0).text


@run_async
async def test_the_sort_arrow_points_the_way_rows_go(small_cluster: SyntheticSource) -> None:
    app = make_app(small_cluster)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        table = app.screen.query_one(VirtualTable)
        assert "NAME ▲" in header(table)  # a to z
        await pilot.press("F")  # largest fit first: descending
        await pilot.pause()
        assert "FIT ▼" in header(table)
        await pilot.press("F")
        await pilot.pause()
        assert "FIT ▲" in header(table)
        await pilot.press("2", "o", "o", "o", "o")  # pods by cpu, largest first
        await pilot.pause()
        assert "CPU ▼" in header(app.screen.query_one(VirtualTable))


def test_requests_say_what_and_in_which_unit() -> None:
    assert requests_summary({"cpu": 1000, "memory": 2**30, "nvidia.com/gpu": 2, "pods": 1}) == "cpu 1, mem 1Gi, 2 GPU"
    assert requests_summary({"cpu": 500}) == "cpu 500m, no memory request"


@run_async
async def test_packing_asks_with_units(small_cluster: SyntheticSource) -> None:
    app = make_app(small_cluster)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("4")
        await pilot.pause()
        text = str(app.screen.query_one("#whatif-summary", Static).render())
        assert "asks cpu 1, mem 1Gi, 2 GPU" in text


def test_a_pod_bigger_than_every_node_never_fits_in_the_header() -> None:
    summary = replace(EMPTY, gpu=Totals(2, 6, None), gpu_free=3, gpu_largest=1,
                      gpu_fits=((1, 3, 3, True), (2, 0, 1, True), (4, 0, 0, False), (8, 0, 0, False)))
    line = ClusterHeader()._line3(summary).plain
    assert "2-GPU pods: room for 0 (fragmented)" in line
    assert "4-GPU pods never fit (no node has 4)" in line and "lost" not in line.lower()


def test_the_gpu_line_drops_whole_parts_least_important_first() -> None:
    summary = replace(EMPTY, gpu=Totals(4, 8, None), gpu_free=4, gpu_largest=1, idle_gpus=2,
                      gpu_fits=((1, 4, 4, True), (2, 0, 2, True), (4, 0, 0, False), (8, 0, 0, False)))
    full = ClusterHeader()._line3(summary).plain
    assert full == (" GPUs 4 free, largest placeable 1 │ 2 allocated idle (<5%) · 1-GPU pods: room for 4 · 2-GPU pods: "
                    "room for 0 (fragmented) · 4-GPU pods never fit (no node has 4) · 8-GPU pods never fit (no node has 8)")
    assert ClusterHeader()._line3(summary, len(full)).plain == full
    # dropped first: sizes that never fit, the room per size, then fragmentation losses, then idle GPUs
    for width, kept in ((len(full) - 1, 3), (120, 1), (100, 1), (80, 0), (40, 0)):
        line = ClusterHeader()._line3(summary, width).plain
        assert len(line) <= width and line.endswith(" · …"), (width, line)
        parts = line.removesuffix(" · …").split(" · ")
        assert parts[0].startswith(" GPUs 4 free, largest placeable 1") and len(parts) - 1 == kept, (width, line)
        assert ("2 allocated idle (<5%)" in parts[0]) == (width >= 80)
        assert ("2-GPU pods: room for 0 (fragmented)" in parts) == (width >= 100)
    assert fit_parts(gpu_parts(summary), 10) == [gpu_parts(summary)[0], MORE]  # the first part always


@run_async
async def test_the_render_screen_without_a_render_says_one_thing(small_cluster: SyntheticSource) -> None:
    app = make_app(small_cluster)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("colon", *"render", "enter")
        await pilot.pause()
        shown = "\n".join(strip.text for strip in app.screen._compositor.render_strips())  # what is on screen
        assert "No render is running" in shown and "waiting for the producer" not in shown


@run_async
async def test_a_screen_status_goes_with_it_but_a_failed_watch_stays(small_cluster: SyntheticSource) -> None:
    app = make_app(small_cluster)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("colon", *"xyz", "enter")
        await pilot.pause()
        assert app.banner[0].startswith("no screen 'xyz'")
        await pilot.press("2")
        await pilot.pause()
        assert app.banner == ("", "") and not app.screen.query_one(Banner).display
        app.banner = app.sticky_banner = ("watch failed: connection refused", "error")
        await pilot.press("3")
        await pilot.pause()
        assert app.banner == ("watch failed: connection refused", "error")


@run_async
async def test_a_long_refusal_is_read_whole(small_cluster: SyntheticSource) -> None:
    app = make_app(small_cluster)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        app.banner = (FORBIDDEN, "error")
        await pilot.pause()
        banner = app.screen.query_one(Banner)
        assert banner.size.height > 1  # wrapped, not cut at the screen's width
        lines = [banner.render_line(y).text.strip() for y in range(banner.size.height)]
        assert " ".join(" ".join(lines).split()) == FORBIDDEN


@pytest.mark.parametrize("size", [(160, 48), (100, 30), (80, 24)])
@run_async
async def test_an_action_result_expires(small_cluster: SyntheticSource, size: tuple[int, int]) -> None:
    """#24 item 16: an action's message lingered until the next action. It goes by itself now; a progress
    line waits for its result, an app-wide failure (sticky) stays."""
    app = make_app(small_cluster)
    app.banner_seconds = {"ok": 0.2, "error": 0.2}
    shown: list[tuple[str, str]] = []
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        app.watch(app, "banner", lambda banner: shown.append(banner), init=False)
        await pilot.press("3", "plus")  # scale the first workload: a result, ok or refused
        await wait_for(pilot, lambda: any(b[1] in ("ok", "error") for b in shown), what="the result")
        await wait_for(pilot, lambda: app.banner == ("", ""), what="the result to expire")
        result = next(b for b in shown if b[1] in ("ok", "error"))
        assert result[0] and shown.index(result) < len(shown) - 1 and shown[-1] == ("", "")
        assert not app.screen.query_one(Banner).display
        app.banner = ("scaling…", "")  # a progress line: no clock
        assert app._banner_timer is None
        app.banner = app.sticky_banner = ("watch failed: boom", "error")  # about the whole app: stays
        await wait_for(pilot, lambda: app._banner_timer is None, what="its clock to run out")
        assert app.banner == ("watch failed: boom", "error")


@run_async
async def test_one_replica_is_said_in_the_singular(small_cluster: SyntheticSource) -> None:
    """#24 item 16: "left at 1 replicas"."""
    from kubeview.tui.screens.prompts import Confirm, NumberPrompt

    app = make_app(small_cluster)
    app.banner_seconds = {}  # nothing expires here: the line is read after the dialog closes
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("3")
        await settle(pilot)
        key = app.screen.query_one(VirtualTable).cursor_key
        assert app.state.model.workloads[key].desired == 1  # premise: the first workload has one replica
        await pilot.press("s")
        await wait_for(pilot, lambda: isinstance(app.screen, NumberPrompt), what="the prompt")
        await pilot.press("backspace", "0", "enter")
        await wait_for(pilot, lambda: isinstance(app.screen, Confirm) and app.screen.is_active, what="the question")
        await pilot.pause()
        await pilot.press("n")
        await wait_for(pilot, lambda: app.banner[1] == "ok", what="the answer")
        assert app.banner[0] == f"{key[0]} {key[1]}/{key[2]} left at 1 replica."
        await pilot.press("s")
        await wait_for(pilot, lambda: isinstance(app.screen, NumberPrompt), what="the prompt")
        await pilot.press("enter")
        await wait_for(pilot, lambda: "already" in app.banner[0], what="the answer")
        assert app.banner[0] == f"{key[0]} {key[1]}/{key[2]} already has 1 replica."


def test_a_big_list_says_how_far_it_got_until_it_is_done() -> None:
    """A 50,000-pod list is ten pages and tens of seconds: the header says it moves, then drops it."""
    from kubeview.model.cluster import ClusterModel
    from kubeview.model.events import Listed, Listing
    from kubeview.tui.summary import summarize

    model = ClusterModel("big")
    assert model.apply(Listing("Pod", 5000)) and model.apply(Listing("Pod", 10000))
    line = ClusterHeader()._line1(summarize(model)).plain
    assert "connecting… listing Pod 10,000…" in line
    model.apply(Listed("Pod", [], "7"))
    assert "listing" not in ClusterHeader()._line1(summarize(model)).plain
