"""Small things the TUI said wrong or not at all (#42 item 11): "1 consumers took part", `+` with no
render running doing nothing, Packing's footer "n n GPUs", Pods' "NAME ▲" over rows sorted by
namespace first, the Tune plot's trial axis at 0.50 … 1.50."""

from __future__ import annotations

import re
from dataclasses import replace

import plotext
from recorded_render import RecordedRenderJob
from tui_helpers import run_async, settle, wait_for

from kubeview.cluster.local.source import LocalSource
from kubeview.cluster.synthetic import SyntheticSource
from kubeview.tui.app import make_app
from kubeview.tui.format import counted
from kubeview.tui.key_index import natural
from kubeview.tui.screens.render import RenderScreen
from kubeview.tui.screens.tune import draw_per_trial, integer_ticks
from kubeview.tui.widgets.quiet_footer import QuietFooter
from kubeview.tui.widgets.virtual_table import VirtualTable
from kubeview.tune.records import TrialRecord


def notes(app) -> list[str]:  # noqa: ANN001
    return [n.message for n in app._notifications]


class OneConsumer(RecordedRenderJob):
    """The recorded finished render, as if one consumer had done it all."""

    def __init__(self) -> None:
        super().__init__("finished")
        self.statuses = [replace(s, consumers=s.consumers[:1]) for s in self.statuses]


def test_counted_agrees_with_its_number() -> None:
    assert [counted(n, "consumer") for n in (0, 1, 2, 1200)] == [
        "0 consumers", "1 consumer", "2 consumers", "1,200 consumers"]


@run_async
async def test_a_finished_render_of_one_consumer_says_consumer_and_plus_says_why_it_does_nothing() -> None:
    job = OneConsumer()
    app = make_app(SyntheticSource(nodes=12, pods=80, seed=1), job)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        assert isinstance(app.screen, RenderScreen)
        title = app.screen.query_one("#render-title")
        await wait_for(pilot, lambda: "took part" in str(title.render()), what="the finished render")
        assert "done, 1 consumer took part" in str(title.render())
        await pilot.press("plus")  # nothing left to scale: said, and nothing asked of the job
        await pilot.pause()
        assert job.scaled == [] and notes(app) == ["The render is finished: there are no consumers left to scale."]


@run_async
async def test_plus_with_no_render_running_says_why(small_cluster: SyntheticSource) -> None:
    app = make_app(small_cluster)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("colon", *"render", "enter")
        await pilot.pause()
        assert isinstance(app.screen, RenderScreen)
        await pilot.press("plus")
        await pilot.pause()
        assert notes(app) == ["No render is running, so there are no consumers to scale; the line below says how "
                              "to start one."]


@run_async
async def test_packing_footer_says_n_gpus_once(small_cluster: SyntheticSource) -> None:
    app = make_app(small_cluster)
    async with app.run_test(size=(160, 40)) as pilot:
        await settle(pilot)
        await pilot.press("4")
        await settle(pilot)
        assert app.screen.query_one(QuietFooter).region.y == 39  # the last line is the footer
        shown = " ".join(list(app.screen._compositor.render_strips())[-1].text.split())  # as on screen
        assert " n GPUs " in shown and "n n GPUs" not in shown, shown


@run_async
async def test_pods_header_says_the_order_the_rows_are_in(demo: LocalSource) -> None:
    """Key order is namespace, then name: the arrow is on NAMESPACE; `o` sorts by NAME across namespaces."""
    app = make_app(demo)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(pilot)
        await pilot.press("2")
        await settle(pilot)
        table = app.screen.query_one(VirtualTable)
        keys = [table.rows.key(i) for i in range(len(table.rows))]
        assert len({ns for ns, _ in keys}) > 2  # premise: several namespaces
        header = table.render_line(0).text
        assert "NAMESPACE ▲" in header and "NAME ▲" not in header.replace("NAMESPACE ▲", "")
        assert keys == sorted(keys, key=natural)
        await pilot.press("o")
        await wait_for(pilot, lambda: not app.screen.busy, 10, "the sort")
        await settle(pilot)
        header = table.render_line(0).text
        assert "NAME ▲" in header.replace("NAMESPACE", "") and "NAMESPACE ▲" not in header
        keys = [table.rows.key(i) for i in range(len(table.rows))]
        assert keys == sorted(keys, key=lambda k: (natural(k[1]), natural(k)))
        assert [ns for ns, _ in keys] != sorted(ns for ns, _ in keys)  # no longer grouped by namespace


def test_the_tune_plot_numbers_trials_with_whole_ticks() -> None:
    """One trial: the axis read 0.50 0.75 1.00 1.25 1.50."""
    for records, ticks in (([TrialRecord(1, "COMPLETE", 12.5, {})], ["1"]),
                           ([TrialRecord(n, "COMPLETE", 10.0 + n, {}) for n in range(4)]
                            + [TrialRecord(4, "PRUNED", None, {}, wall_seconds=20.0)], ["0", "1", "2", "3", "4"])):
        plotext.clear_figure()
        draw_per_trial(plotext, records)
        plotext.plotsize(60, 14)
        plotext.theme("clear")
        lines = re.sub(r"\x1b\[[0-9;]*m", "", plotext.build()).splitlines()
        axis = lines[-1].split()  # the x axis' labels, under its last line
        assert axis == ticks, lines
    assert integer_ticks([0, 9]) == [0, 2, 4, 6, 8] and integer_ticks([1, 17]) == [5, 10, 15]
    assert integer_ticks([0, 100]) == [0, 20, 40, 60, 80, 100] and integer_ticks([7]) == [7]
