"""The demo at 80x24 (the smallest size the README supports) and 160x48 (#42 items 7 and 8), read off
the screen as drawn: the help dialog inside the screen and wrapped, static pods told apart, the GPU
total kept on the header's second line, WHY NOT naming its resource, gang headers readable, the
Render hint whole, the gang prompt a centred modal; at 160 columns names whole beside the reasons.
"""

from __future__ import annotations

import io
import re

from rich.console import Console
from test_tui_demo_tables import lines_of
from test_tui_small_terminals import demo_at
from tui_helpers import run_async, settle, under, wait_for

from kubeview.cluster.local.source import LocalSource
from kubeview.tui.screens.help import HelpScreen
from kubeview.tui.screens.prompts import TextPrompt
from kubeview.tui.widgets.cluster_header import ClusterHeader
from kubeview.tui.widgets.virtual_table import VirtualTable

SMALL, LARGE = (80, 24), (160, 48)


def screen_lines(app) -> list[str]:  # noqa: ANN001
    """The screen as drawn (a modal over the screen below it)."""
    return [strip.text for strip in app.screen._compositor.render_strips()]


@run_async
async def test_the_help_fits_80x24_and_wraps_at_words(demo: LocalSource) -> None:
    async with demo_at(demo, SMALL) as (app, pilot):
        await pilot.press("question_mark")
        await wait_for(pilot, lambda: isinstance(app.screen, HelpScreen), what="the help")
        await pilot.pause()
        dialog = app.screen.query_one("#help")
        assert dialog.region.x >= 0 and dialog.region.right <= SMALL[0], dialog.region  # was 90 wide
        lines = screen_lines(app)
        for y in range(dialog.region.y, dialog.region.bottom):
            assert lines[y][dialog.region.right - 1] in "█▀▄", (y, lines[y])  # the right border drawn
        for section in app.screen.query(".help-section"):
            width = section.content_region.width
            console = Console(width=width, file=io.StringIO(), record=True)
            table = section.content  # the section's rich Table, printed at the width it has
            console.print(table)
            printed = console.export_text()
            assert all(len(line.rstrip()) <= width for line in printed.splitlines())
            for said in table.columns[1]._cells:  # every key's words whole, the long ones wrapped
                assert " ".join(str(said).split()) in " ".join(printed.split()), (said, printed)


@run_async
async def test_static_pods_read_apart_at_80_columns(demo: LocalSource) -> None:
    async with demo_at(demo, SMALL) as (app, pilot):
        await pilot.press("2")
        await settle(pilot)
        table = app.screen.query_one(VirtualTable)
        lines = lines_of(table)
        static = {key: under(table, line, "name") for key, line in lines.items()
                  if key[0] == "kube-system" and key[1].endswith("-cpu-node-1")}
        assert len(static) == 4, static  # etcd, kube-apiserver, kube-controller-manager, kube-scheduler
        assert len(set(static.values())) == 4, static  # were three `kube-…de-1`
        for (_, name), shown in static.items():
            assert shown == name or name.startswith(shown.removesuffix("…")), (name, shown)


@run_async
async def test_the_header_keeps_the_gpu_total_at_80_columns(demo: LocalSource) -> None:
    async with demo_at(demo, SMALL) as (app, pilot):
        header = app.screen.query_one(ClusterHeader)
        await wait_for(pilot, lambda: header.summary.cpu.used is not None and header.summary.memory.used is not None,
                       what="a usage sample (its `used` figures are what pushed the GPU total off)")
        line = header.render().plain.splitlines()[1]
        assert len(line) <= SMALL[0] and "GPU" in line and "12/16 75%" in line, line  # was `used 246Mi │ G…`
        # 8 of the 16 are gpu-ts-1's time-sliced replicas (#35): said before the cpu and memory bars
        assert "cpu" in line and "mem" in line and "(8 shared)" in line and not line.endswith("…"), line
    async with demo_at(demo, LARGE) as (app, pilot):
        header = app.screen.query_one(ClusterHeader)
        await wait_for(pilot, lambda: header.summary.memory.used is not None, what="a usage sample")
        line = header.render().plain.splitlines()[1]
        # all of it at 160: the memory used is the demo's live processes' (a measured figure, not a constant)
        assert re.search(r"used [\d.]+[KMGT]i ", line) and "GPU ██████·· 12/16 75%" in line, line
        assert "(8 = 2 physical × 4 shared, 2 MIG slices) + 2/7 MIG slices" in line, line


@run_async
async def test_why_not_names_its_resource_at_80_columns(demo: LocalSource) -> None:
    async with demo_at(demo, SMALL) as (app, pilot):
        await pilot.press("4")
        await settle(pilot)
        table = app.screen.query_one("#whatif", VirtualTable)
        await wait_for(pilot, lambda: len(table.rows) == 9, what="the what-if of the hypothetical 2-GPU pod")
        header = table.render_line(0).text
        assert "…" not in header, header
        said = {key: under(table, line, "why") for key, line in lines_of(table).items()}
        assert said["gpu-node-1"] in ("Insufficient nvidia.com/gpu", "short of GPU"), said  # was `Insufficient …`
        assert said["cpu-node-1"] in ("Insufficient cpu", "short of cpu"), said
        assert said["dra-node-1"] in ("cannot allocate all claims", "claims don't fit"), said


@run_async
async def test_gang_headers_read_at_80_columns(demo: LocalSource) -> None:
    async with demo_at(demo, SMALL) as (app, pilot):
        await pilot.press("3")
        await settle(pilot)
        table = app.screen.gang_table()
        header = table.render_line(0).text
        assert "…" not in header, header  # was `SCH… NAMESPACE NAME MIN/… PL… RU… PE… FI…`
        assert header.split() == ["SCHED", "NS", "NAME", "MIN/N", "PLC", "RUN", "PEND", "DONE", "STATE", "REASON"]


@run_async
async def test_the_render_hint_is_whole_at_80_columns(demo: LocalSource) -> None:
    async with demo_at(demo, SMALL) as (app, pilot):
        await pilot.press("colon", *"render", "enter")
        await wait_for(pilot, lambda: app.screen.query("#render-result"), what="the Render screen")
        await pilot.pause()
        shown = " ".join(" ".join(screen_lines(app)).split())
        assert "Start one with: kubeview --demo --render three-spheres --cpu 800m" in shown, shown  # `--cpu` was cut
        assert "the image appears here as samples" in shown and "arrive" in shown, shown  # wrapped, not cut


@run_async
async def test_the_gang_prompt_is_a_centred_modal(demo: LocalSource) -> None:
    async with demo_at(demo, SMALL) as (app, pilot):
        await pilot.press("4")
        await settle(pilot)
        await pilot.press("m")
        await wait_for(pilot, lambda: isinstance(app.screen, TextPrompt), what="the gang prompt")
        await pilot.pause()
        dialog = app.screen.query_one(".dialog")
        width, height = SMALL
        assert abs(dialog.region.x - (width - dialog.region.right)) <= 1, dialog.region  # was at x 0, y 0
        assert abs(dialog.region.y - (height - dialog.region.bottom)) <= 1, dialog.region
        assert screen_lines(app)[0].startswith(" Packing "), screen_lines(app)[0]  # over the screen, not blank
        await pilot.press("escape")


@run_async
async def test_names_take_the_room_at_160_columns(demo: LocalSource) -> None:
    async with demo_at(demo, LARGE) as (app, pilot):
        await pilot.press("2")
        await settle(pilot)
        table = app.screen.query_one(VirtualTable)
        lines = lines_of(table)
        for key, line in lines.items():
            assert under(table, line, "name") == key[1], line  # were `consum…-5mzsm`, `kube-a…node-1`
            assert under(table, line, "node") != "dra-mi…ode-1", line
        consumers = [line for key, line in lines.items() if key[0] == "batch" and "Pending" in line]
        assert len(consumers) == 3
        for line in consumers:  # the whole reason, not `3 Insufficient cpu, +1 more` beside spare cells
            assert under(table, line, "reason") == "3 Insufficient cpu, 6 node(s) had untolerated taint(s)", line


@run_async
async def test_the_plan_dialog_fits_80_columns(demo: LocalSource) -> None:
    """The Plan dialog is 110 wide at 120 columns and the screen's width at 80 (its border was off it)."""
    from kubeview.tui.screens.plan import PlanScreen

    async with demo_at(demo, SMALL) as (app, pilot):
        await pilot.press("4")
        await settle(pilot)
        await pilot.press("P")
        await wait_for(pilot, lambda: isinstance(app.screen, PlanScreen), what="the Plan dialog")
        await pilot.pause()
        dialog = app.screen.query_one("#plan")
        assert dialog.region.x >= 0 and dialog.region.right <= SMALL[0], dialog.region
