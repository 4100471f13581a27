"""Gangs in the TUI, on the real demo (`kubeview --demo`: vision/allreduce-workers, 2 × 2 GPUs blocked by
fragmentation, and vision/etl-stages, 1+1+5 cpu, blocked under spread and whole under pack): the
Workloads screen lists them, Enter opens a gang's panel, and Packing's what-if takes a gang. Every
figure asserted is read back from the embedded cluster's own objects or from `gang_fit` itself."""

from __future__ import annotations

import io

import pytest
from rich.console import Console
from tui_helpers import run_async, settle, under, wait_for

from kubeview.cluster.local.demo import DEMO_PENDING
from kubeview.cluster.local.source import LocalSource
from kubeview.scheduling.config import PackingConfig
from kubeview.scheduling.gang_fit import fit_gang, fit_of
from kubeview.tui.app import KubeviewApp, make_app
from kubeview.tui.rows.gang_whatif import GangSpec, hypothetical_gang, members_on, verdict_detail
from kubeview.tui.screens.gang_detail import GangDetailScreen
from kubeview.tui.screens.packing import PackingScreen
from kubeview.tui.screens.prompts import TextPrompt
from kubeview.tui.screens.workloads import WorkloadsScreen

ALLREDUCE = ("PodGroup", "vision", "allreduce-workers")
ETL = ("PodGroup", "vision", "etl-stages")


async def demo_shown(pilot, app: KubeviewApp, screen: str | None = None) -> None:  # noqa: ANN001
    """The demo listed with its pending pods and gangs; then the screen of key `screen`, settled."""
    await wait_for(pilot, lambda: app.state.model.pending_count() == DEMO_PENDING
                   and len(app.state.model.gangs.gangs()) == 2, 30, "the demo's pending pods and gangs")
    await settle(pilot)
    if screen is not None:
        await pilot.press(screen)
        await settle(pilot)


def flat(text: str) -> str:
    """Text with its wrapping undone (the panel wraps long messages to the screen's width)."""
    return " ".join(text.split())


def printed(renderable: object) -> str:
    """A Rich renderable (the help's key tables) as the text it prints."""
    console = Console(width=200, file=io.StringIO(), record=True)
    console.print(renderable)
    return console.export_text()


def condition_message(source: LocalSource, key: tuple[str, str, str]) -> str:
    group = source.get(*key)
    return next(c["message"] for c in group["status"]["conditions"] if c["type"] == "PodGroupInitiallyScheduled")


@pytest.mark.parametrize("size", [(120, 40), (80, 24)])
@run_async
async def test_workloads_lists_the_demo_gangs_each_figure_under_its_header(demo: LocalSource,
                                                                           size: tuple[int, int]) -> None:
    app = make_app(demo)
    async with app.run_test(size=size) as pilot:
        await demo_shown(pilot, app, "3")
        screen = app.screen
        assert isinstance(screen, WorkloadsScreen)
        table = screen.gang_table()
        assert table.display and [table.rows.key(i) for i in range(len(table.rows))] == [ALLREDUCE, ETL]
        header = table.render_line(0).text
        # whole labels, or at 80 columns short ones: never `PL… RU… PE… FI…` (#42 item 7)
        for column, labels in (("scheduler", ("SCHEDULER", "SCHED")), ("placed", ("PLACED", "PLC")),
                               ("running", ("RUNNING", "RUN")), ("pending", ("PENDING", "PEND")),
                               ("finished", ("FINISHED", "DONE")), ("state", ("STATE",)), ("reason", ("REASON",))):
            assert under(table, header, column) in labels, (column, header)
        for row, (key, members, min_count) in enumerate(((ALLREDUCE, 2, 2), (ETL, 3, 3))):
            line = table.render_line(row + 1).text
            pods = [p for p in demo.pods("vision") if p["spec"]["schedulingGroup"]["podGroupName"] == key[2]]
            assert len(pods) == members and not any(p["spec"].get("nodeName") for p in pods)  # none bound
            assert under(table, line, "name").rstrip("…")[:4] == key[2][:4]
            assert under(table, line, "min") == f"{min_count}/{members}"
            assert (under(table, line, "placed"), under(table, line, "running"), under(table, line, "pending"),
                    under(table, line, "finished")) == ("0", "0", str(members), "0")
            assert under(table, line, "state") == "waiting"
            said = under(table, line, "reason")  # the group's own condition, cut at the end at most
            assert len(said) >= 20 and condition_message(demo, key).startswith(said.rstrip("…")), line
        assert screen.check_action("switch_table", ()) and screen.check_action("open_gang", ())  # in the footer
        await pilot.press("slash", *"etl", "enter")  # `/` filters the gangs too
        await wait_for(pilot, lambda: len(table.rows) == 1, 5, "the filtered gangs")
        assert table.rows.key(0) == ETL
        await pilot.press("escape")
        await wait_for(pilot, lambda: len(table.rows) == 2, 5, "every gang again")


@run_async
async def test_enter_on_a_gang_shows_members_their_own_reasons_and_the_fit(demo: LocalSource) -> None:
    app = make_app(demo)
    async with app.run_test(size=(120, 40)) as pilot:
        await demo_shown(pilot, app, "3")
        await pilot.press("tab", "enter")  # the gangs table, its first row
        await wait_for(pilot, lambda: isinstance(app.screen, GangDetailScreen), 5, "the gang's panel")
        await settle(pilot)
        screen = app.screen
        text = flat(screen.query_one("#gang-text").render().plain)
        assert "PodGroup vision/allreduce-workers waiting" in text
        assert "minCount 2 · 2 members: placed 0 · running 0 · pending 2 · finished 0" in text
        assert "workload allreduce" in text and "PodGroupInitiallyScheduled=False Unschedulable" in text
        assert flat(condition_message(demo, ALLREDUCE)) in text
        for name in ("allreduce-0", "allreduce-1"):  # each member's own words, as the scheduler wrote them
            cond = next(c for c in demo.get("Pod", "vision", name)["status"]["conditions"] if c["type"] == "PodScheduled")
            assert flat(f"{name} pending {cond['reason']}: {cond['message']}") in text
        with app.state.lock:
            model = app.state.model
            fit = fit_of(model, model.gangs.get(*ALLREDUCE), PackingConfig(policy="spread"))
        assert not fit.fits and fit.room == 0
        assert "Fit now under spread: does not fit" in text and flat(fit.summary) in text
        assert "largest free block per node: dra-mig-node-1 1, dra-node-1 1, gpu-node-1 1, gpu-node-2 1" in text
        assert f"excluded (took none): {len(fit.excluded)} nodes" in text
        for reason, n in fit.excluded_counts().items():
            assert f"{n} × {reason}" in text

        await pilot.press("escape")  # back where Enter was pressed: the gangs table, its cursor kept
        await wait_for(pilot, lambda: isinstance(app.screen, WorkloadsScreen), 5, "the workloads")
        assert app.screen.gang_table().has_focus
        await pilot.press("down", "enter")
        await wait_for(pilot, lambda: isinstance(app.screen, GangDetailScreen) and app.screen.key == ETL, 5,
                       "the etl panel")
        await settle(pilot)
        text = flat(app.screen.query_one("#gang-text").render().plain)
        assert "PodGroup vision/etl-stages waiting" in text and "3 members" in text
        assert "etl-writer" in text and "etl-reader-0" in text


@run_async
async def test_packing_what_if_takes_a_typed_gang(demo: LocalSource) -> None:
    app = make_app(demo)
    async with app.run_test(size=(120, 40)) as pilot:
        await demo_shown(pilot, app, "4")
        screen = app.screen
        assert isinstance(screen, PackingScreen)
        await pilot.press("m")
        await wait_for(pilot, lambda: isinstance(app.screen, TextPrompt), 5, "the gang prompt")
        await pilot.press(*"four", "enter")  # not a gang: the prompt stays and says why, one line
        await pilot.pause()
        assert isinstance(app.screen, TextPrompt)
        assert "is not a gang: say PODS x GPUS" in app.screen.query_one(".hint").render().plain
        await pilot.press(*["backspace"] * 4, *"4 pods x 8 GPUs", "enter")  # (× is a paste, not a key)
        await wait_for(pilot, lambda: app.screen is screen, 5, "the packing screen")
        await pilot.pause()
        assert screen.gang and screen.gang_spec == GangSpec(4, 8)
        with app.state.lock:
            alloc = app.state.model.allocation()
        live = fit_gang(alloc, hypothetical_gang(GangSpec(4, 8)), 4, PackingConfig(policy="spread"))
        summary = screen.query_one("#whatif-summary").render().plain
        assert "gang what-if: 4 × 8 GPUs, minCount 4" in summary
        assert f"live → does not fit  {verdict_detail(live)}" in summary and "room for 0" in summary

        await pilot.press("m")
        await wait_for(pilot, lambda: isinstance(app.screen, TextPrompt), 5, "the gang prompt")
        await pilot.press(*"2x1", "enter")  # the field's text is selected: typing replaces it
        await wait_for(pilot, lambda: app.screen is screen, 5, "the packing screen")
        await pilot.pause()
        live = fit_gang(alloc, hypothetical_gang(GangSpec(2, 1)), 2, PackingConfig(policy="spread"))
        assert live.fits
        summary = screen.query_one("#whatif-summary").render().plain
        assert f"live → fits  {verdict_detail(live)}" in summary and f"edited → fits  {verdict_detail(live)}" in summary
        table = screen.main_widget()
        placed = {table.rows.key(i): under(table, table.render_line(i + 1).text, "live") for i in range(len(table.rows))}
        assert {n: int(c) for n, c in placed.items() if c.isdigit()} == dict(members_on(live))

        await pilot.press("m")
        await wait_for(pilot, lambda: isinstance(app.screen, TextPrompt), 5, "the gang prompt")
        await pilot.press("escape")  # cancelled: the gang stays
        await wait_for(pilot, lambda: app.screen is screen, 5, "the packing screen")
        assert screen.gang_spec == GangSpec(2, 1)
        await pilot.press("n")  # back to the hypothetical pod and its scores
        await pilot.pause()
        assert not screen.gang and screen.query_one("#whatif").columns[2].label == "LIVE"


@pytest.mark.parametrize("size", [(120, 40), (80, 24)])
@run_async
async def test_packing_what_if_of_a_waiting_gang_then_apply_binds_it_whole(demo: LocalSource,
                                                                            size: tuple[int, int]) -> None:
    """etl-stages: kube-scheduler's cycle under spread cannot place it; the edited pack can, and once pack
    is applied the embedded scheduler binds all three members together."""
    app = make_app(demo)
    async with app.run_test(size=size) as pilot:
        await demo_shown(pilot, app, "4")
        screen = app.screen
        picker = screen.query_one("#pod-picker")
        picker.focus()
        etl = picker.get_option_index("gang|" + "|".join(ETL))
        await pilot.press(*["down"] * etl, "enter")
        await pilot.pause()
        assert screen.gang and screen.gang_key == ETL
        screen.main_widget().focus()
        await pilot.press("p", "p")  # spread -> balanced -> pack, edited only
        await pilot.pause()
        w = screen.gang_whatif
        with app.state.lock:
            model = app.state.model
            gang = model.gangs.get(*ETL)
            live, edited = fit_of(model, gang, PackingConfig(policy="spread")), fit_of(model, gang, w.config)
        assert w.config.policy == "pack" and not live.fits and edited.fits
        assert (w.live.fits, w.live.summary, w.edited.fits, w.edited.summary) == (False, live.summary, True, edited.summary)
        summary = screen.query_one("#whatif-summary").render().plain
        assert "gang vision/etl-stages: 2 × 1 cpu, 1Gi + 1 × 5 cpu, 4Gi, minCount 3" in summary
        assert "live → does not fit  room for 2" in summary and "edited → fits  on gpu-node-1 2, gpu-node-2" in summary
        box = screen.query_one("#whatif-summary")
        shown = [box.render_line(y).text.strip() for y in range(box.size.height)]  # what the box really shows
        assert [line.split(" → ")[0] for line in shown if " → " in line] == ["live", "edited"], shown
        assert any(line.startswith("gang vision/etl-stages") for line in shown), shown
        table = screen.main_widget()
        assert [c.label for c in table.columns][2:4] == ["LIVE PODS", "EDITED PODS"]
        shown = {table.rows.key(i): under(table, table.render_line(i + 1).text, "edited")
                 for i in range(len(table.rows))}
        assert {n: int(c) for n, c in shown.items() if c.isdigit()} == dict(members_on(edited)) == {
            "gpu-node-1": 2, "gpu-node-2": 1}

        await pilot.press("a")  # pack goes live on the embedded scheduler: the gang binds, all of it
        await wait_for(pilot, lambda: all((demo.get("Pod", "vision", n)["spec"].get("nodeName"))
                                          for n in ("etl-reader-0", "etl-reader-1", "etl-writer")), 30, "etl bound")
        await settle(pilot)
        await pilot.press("3")
        await settle(pilot)
        gangs = app.screen.gang_table()
        line = gangs.render_line(2).text
        assert under(gangs, line, "name") == "etl-stages" and under(gangs, line, "pending") == "0"
        assert under(gangs, line, "state") in ("scheduled", "running") and under(gangs, line, "reason") == ""


@run_async
async def test_help_lists_the_gang_keys_and_every_binding_has_id_and_tooltip(demo: LocalSource) -> None:
    from textual.binding import Binding

    from kubeview.tui.screens.help import HelpScreen
    from kubeview.tui.screens.prompts import NumberPrompt

    for cls in (WorkloadsScreen, GangDetailScreen, PackingScreen, TextPrompt, NumberPrompt):
        for b in cls.BINDINGS:
            assert isinstance(b, Binding) and b.description and b.id and b.tooltip, (cls.__name__, b)
    app = make_app(demo)
    async with app.run_test(size=(120, 40)) as pilot:
        await demo_shown(pilot, app)
        await pilot.press("question_mark")
        await wait_for(pilot, lambda: isinstance(app.screen, HelpScreen), 5, "the help")
        text = "\n".join(printed(s.content) for s in app.screen.query(".help-section"))
        for b in (*WorkloadsScreen.BINDINGS, *GangDetailScreen.BINDINGS, *PackingScreen.BINDINGS):
            assert b.tooltip in text, b
