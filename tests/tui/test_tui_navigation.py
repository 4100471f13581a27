"""Pilot-driven: every screen by `:name` and by digit, node detail, help, palette, filter, sort, quit."""

from __future__ import annotations

import pytest
from tui_helpers import run_async, settle, wait_for

from kubeview.cluster.synthetic import SyntheticSource
from kubeview.model.events import Listed
from kubeview.tui.app import make_app
from kubeview.tui.format import reason_key, reason_point
from kubeview.tui.key_index import natural_sorted
from kubeview.tui.screens import indexed
from kubeview.tui.screens.capacity import CapacityScreen
from kubeview.tui.screens.help import HelpScreen
from kubeview.tui.screens.node_detail import NodeDetailScreen
from kubeview.tui.screens.nodes import NodesScreen
from kubeview.tui.screens.packing import PackingScreen
from kubeview.tui.screens.pods import PodsScreen
from kubeview.tui.screens.quota import QuotaScreen
from kubeview.tui.screens.render import RenderScreen
from kubeview.tui.screens.tune import TuneScreen
from kubeview.tui.screens.workloads import WorkloadsScreen
from kubeview.tui.widgets.allocated_resources import AllocatedResources
from kubeview.tui.widgets.prompt_bar import PromptBar
from kubeview.tui.widgets.virtual_table import VirtualTable

SIZE = (120, 40)
SCREENS = {"nodes": NodesScreen, "pods": PodsScreen, "workloads": WorkloadsScreen, "packing": PackingScreen,
           "render": RenderScreen, "tune": TuneScreen, "capacity": CapacityScreen, "quota": QuotaScreen}


def rows(app) -> list:  # noqa: ANN001
    table = app.screen.query_one(VirtualTable)
    return [table.rows.key(i) for i in range(len(table.rows))]


@run_async
async def test_starts_on_nodes_with_every_node(small_cluster: SyntheticSource) -> None:
    app = make_app(small_cluster)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert isinstance(app.screen, NodesScreen)
        assert rows(app) == sorted(app.state.model.nodes)
        assert app.summary.nodes == 12 and app.summary.pods == 80 and app.summary.pending == 5


@pytest.mark.parametrize("name", list(SCREENS))
@run_async
async def test_colon_jumps_to_every_screen(small_cluster: SyntheticSource, name: str) -> None:
    app = make_app(small_cluster)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("colon")
        assert app.screen.query_one(PromptBar).input.has_focus
        await pilot.press(*name[:3], "enter")  # any unique prefix will do
        await pilot.pause()
        assert isinstance(app.screen, SCREENS[name])
        assert app.screen.query_one(VirtualTable).has_focus  # keys go to the table, not the prompt


@run_async
async def test_digits_and_unknown_names(small_cluster: SyntheticSource) -> None:
    app = make_app(small_cluster)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        for key, screen in zip("23456781", SCREENS.values(), strict=False):
            await pilot.press(key)
            await pilot.pause()
            assert isinstance(app.screen, list(SCREENS.values())[int(key) - 1]), (key, screen)
        await pilot.press("colon", "x", "y", "z", "enter")
        await pilot.pause()
        assert isinstance(app.screen, NodesScreen)
        assert app.banner == ("no screen 'xyz'; try one of nodes, pods, workloads, packing, render, tune, capacity, "
                              "quota", "error")


@run_async
async def test_pods_screen_shows_pending_reasons(small_cluster: SyntheticSource) -> None:
    app = make_app(small_cluster)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("2")
        await settle(pilot)
        keys = rows(app)
        assert len(keys) == 80 and keys == natural_sorted(keys)
        pending = [k for k in keys if app.state.model.pods[k].pending]
        assert len(pending) == 5
        table = app.screen.query_one(VirtualTable)
        cells = table.rows.cells(pending[0])
        reason = app.state.model.pods[pending[0]].pending_reason
        assert str(cells[3]) == "Pending" and reason.startswith("0/12 nodes are available: ")
        shown = str(cells[-1])  # whole where it fits, else whole parts of its point, no "0/12 nodes" prefix
        if len(reason) <= table.width_of["reason"]:
            assert shown == reason
        else:
            assert reason_key(reason).startswith(shown.removesuffix(", …")) and shown.startswith(reason_point(reason))


@run_async
async def test_enter_opens_the_node_with_its_pods_and_allocation(small_cluster: SyntheticSource) -> None:
    app = make_app(small_cluster)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("down", "enter")
        await pilot.pause()
        assert isinstance(app.screen, NodeDetailScreen)
        node = app.screen.node
        assert node == sorted(app.state.model.nodes)[1]
        figures = app.screen.query_one(AllocatedResources).node
        assert figures is not None and figures.name == node
        on_node = [p.key for p in app.state.model.pods_on(node)]
        assert rows(app) == on_node
        cpu = figures.resources.index("cpu")
        assert figures.requested[cpu] == sum(app.state.model.pods[k].requests.get("cpu", 0) for k in on_node)
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, NodesScreen)


@run_async
async def test_slash_filters_and_escape_clears(small_cluster: SyntheticSource) -> None:
    app = make_app(small_cluster)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("slash", *"gpu")
        await pilot.pause()
        gpu_nodes = [n for n in sorted(app.state.model.nodes) if n.startswith("gpu")]
        assert rows(app) == gpu_nodes  # the filter applies while typing
        await pilot.press("enter")
        await pilot.pause()
        assert rows(app) == gpu_nodes and app.screen.query_one(VirtualTable).has_focus
        await pilot.press("slash", "escape")
        await pilot.pause()
        assert len(rows(app)) == 12

        await pilot.press("2", "slash", *"pending")
        await pilot.pause()
        assert len(rows(app)) == 5 and all(app.state.model.pods[k].pending for k in rows(app))
        await pilot.press("enter")


@run_async
async def test_sorting_nodes_by_gpu_fit_and_pods_by_cpu(small_cluster: SyntheticSource) -> None:
    app = make_app(small_cluster)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("F")
        await pilot.pause()
        fits = {n: i for i, n in enumerate(sorted(app.state.model.nodes))}
        largest = app.state.model.largest_fit()
        shown = [int(largest[fits[n]]) for n in rows(app)]
        assert shown == sorted(shown, reverse=True)
        await pilot.press("F")  # again: reversed
        await pilot.pause()
        assert [int(largest[fits[n]]) for n in rows(app)] == sorted(shown)

        await pilot.press("2", "o", "o", "o", "o")  # namespace -> name -> node -> phase -> cpu
        await pilot.pause()
        assert app.screen.sort_column == "cpu"
        cpus = [app.state.model.pods[k].requests.get("cpu", 0) for k in rows(app)]
        assert cpus == sorted(cpus, reverse=True)


async def pods_table(pilot) -> VirtualTable:  # noqa: ANN001
    """Settle, go to the pods screen, and give its table."""
    await settle(pilot)
    await pilot.press("2")
    await pilot.pause()
    return pilot.app.screen.query_one(VirtualTable)


@run_async
async def test_a_sort_in_the_background_says_so_in_the_header_then_shows_its_rows(
        small_cluster: SyntheticSource, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(indexed, "BACKGROUND_ROWS", 1)  # the small cluster's pods take the worker path
    app = make_app(small_cluster)
    async with app.run_test(size=SIZE) as pilot:
        table = await pods_table(pilot)
        table.note = "sorting by node 80 rows…"
        assert "sorting by node 80 rows…" in table.render_line(0).text  # drawn in the header line
        table.note = ""
        await pilot.press("o", "o")  # namespace -> name -> node: sorts in a worker
        assert table.sort_column == "node"  # the header answers at once
        await wait_for(pilot, lambda: not app.screen.busy, 10, "the sort to finish")
        await pilot.pause()
        assert table.note == ""
        nodes = [app.state.model.pods[k].node or "" for k in rows(app)]
        assert nodes == sorted(nodes)


@run_async
async def test_every_screen_is_built_and_filled_before_its_first_visit(small_cluster: SyntheticSource) -> None:
    app = make_app(small_cluster)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await wait_for(pilot, lambda: all(not s._stale for s in app._mode_screens.values()), 10, "warm screens")
        # no render job: no render screen
        assert set(app._mode_screens) == {"pods", "workloads", "packing", "capacity", "quota"}
        assert all(s.is_mounted for s in app._mode_screens.values())
        pods = app._mode_screens["pods"]
        assert len(pods.query_one(VirtualTable).rows) == len(app.state.model.pods)  # rows there already
        assert app.is_screen_installed("node-detail") and isinstance(app.screen, NodesScreen)
        await pilot.press("2")
        await pilot.pause()
        assert app.screen is pods


@run_async
async def test_cells_keep_their_own_style(small_cluster: SyntheticSource) -> None:
    """`Text("Running", style="green")` is drawn green (rich's `Text.render` leaves a span-less
    Text's own style to the console, and the table used to drop it)."""
    app = make_app(small_cluster)
    async with app.run_test(size=SIZE) as pilot:
        table = await pods_table(pilot)
        phases = {}
        for y in range(1, 20):
            for seg in table.render_line(y):
                if seg.text in ("Running", "Pending"):
                    phases[seg.text] = seg.style
        assert phases["Running"].color.name == "green"
        assert phases["Pending"].color.name == "yellow" and phases["Pending"].bold


@run_async
async def test_help_lists_every_key_and_closes(small_cluster: SyntheticSource) -> None:
    app = make_app(small_cluster)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("question_mark")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, NodesScreen)


@run_async
async def test_palette_offers_the_screen_actions(small_cluster: SyntheticSource) -> None:
    from kubeview.tui.commands import KubeviewCommands

    app = make_app(small_cluster)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("3")
        await pilot.pause()
        await pilot.press("ctrl+p")
        await pilot.pause()
        provider = KubeviewCommands(app.screen)
        names = [name for name, *_ in provider._entries()]
        assert "Workloads: Scale +1" in names and "Workloads: Scale to…" in names
        assert "Go to the pods screen" in names and "Quit and stop everything kubeview started" in names


@run_async
async def test_q_quits_and_stops_the_source(small_cluster: SyntheticSource) -> None:
    app = make_app(small_cluster)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("q")
        await wait_for(pilot, lambda: app._stop.is_set(), 5, "the stop event")
    assert app.return_code == 0


class _BrokenSource:
    """A source whose watch fails once listed, as a real one does on a programming error (before the
    first list, a failure ends the TUI with one line: tests/tui/test_tui_unreachable.py)."""

    title = "broken"
    is_local = False

    def run(self, emit, stop) -> None:  # noqa: ANN001
        emit(Listed("Node", [], "1"))
        emit(Listed("Pod", [], "1"))
        raise RuntimeError("the watch stream ended unexpectedly")

    def scale(self, kind: str, namespace: str, name: str, replicas: int) -> str:
        return ""

    def close(self) -> None:
        pass


@run_async
async def test_a_failed_watch_shows_a_banner_not_a_traceback() -> None:
    app = make_app(_BrokenSource())
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.banner[1] == "error", 10, "the banner")
        assert app.banner == ("watch failed: the watch stream ended unexpectedly", "error")
        assert isinstance(app.screen, NodesScreen)  # still running, still usable
        await pilot.press("2")
        await pilot.pause()
        assert isinstance(app.screen, PodsScreen)


@pytest.mark.parametrize("size", [(160, 48), (100, 30), (80, 24)])
@run_async
async def test_escape_clears_an_applied_filter(small_cluster: SyntheticSource, size: tuple[int, int]) -> None:
    """#24 item 8: the hint and `?` say "Escape clears"; after Enter, Escape on the table did nothing."""
    app = make_app(small_cluster)
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        await pilot.press("slash", *"gpu", "enter")
        await pilot.pause()
        assert len(rows(app)) == 3 and app.screen.query_one(VirtualTable).has_focus
        await pilot.press("escape")
        await pilot.pause()
        assert len(rows(app)) == 12 and app.screen.filter_text == ""
        assert app.screen.query_one(PromptBar).input.value == ""  # the prompt no longer shows "gpu"
        assert isinstance(app.screen, NodesScreen)

        await pilot.press("enter")  # a node's page: Escape clears its filter first, then goes back
        await pilot.pause()
        assert isinstance(app.screen, NodeDetailScreen)
        await pilot.press("slash", *"zzz", "enter", "escape")
        await pilot.pause()
        assert isinstance(app.screen, NodeDetailScreen) and app.screen.filter_text == ""
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, NodesScreen)
