"""Small terminals (#24 item 11): 100x30 and 80x24 (the smallest supported size) show what matters.

TAINTS gets the room STATUS does not need; the Packing picker shows one line per pod; footers leave
out whole keys instead of cutting one mid-word (`q Qui`); the Render image is the bigger box; at
80x24 the Job panel leaves the table several rows and its index strip fits the width.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator

import pytest
from recorded_render import RecordedRenderJob
from textual.widgets import OptionList
from textual.widgets._footer import FooterKey
from tui_helpers import run_async, settle, wait_for

from kubeview.cluster.local.demo import DEMO_PENDING
from kubeview.cluster.local.source import LocalSource
from kubeview.tui.app import make_app
from kubeview.tui.screens.render import RenderScreen
from kubeview.tui.widgets.prompt_bar import PromptInput
from kubeview.tui.widgets.virtual_table import VirtualTable

SMALL = [(100, 30), (80, 24)]


@contextlib.asynccontextmanager
async def demo_at(demo: LocalSource, size: tuple[int, int]) -> AsyncIterator:
    """The demo's app at `size`, its pending pods and Job listed: (app, pilot)."""
    app = make_app(demo)
    async with app.run_test(size=size) as pilot:
        await wait_for(pilot, lambda: app.state.model.pending_count() == DEMO_PENDING and app.state.model.jobs.jobs, 30,
                       "the demo's pending pods and Job")
        await settle(pilot)
        yield app, pilot


def footer_words(app) -> list[str]:  # noqa: ANN001
    """Each footer key as shown; asserts none of them sticks out of the screen."""
    keys = [k for k in app.screen.query(FooterKey) if k.display]
    for key in keys:
        assert key.region.right <= app.size.width, (key.key_display, key.description, key.region)
    return [f"{k.key_display} {k.description}".strip() for k in keys]


@pytest.mark.parametrize("size", SMALL)
@run_async
async def test_nodes_give_taints_the_room_status_does_not_need(demo: LocalSource, size: tuple[int, int]) -> None:
    async with demo_at(demo, size) as (app, pilot):
        table = app.screen.query_one(VirtualTable)
        assert table.width_of["status"] == len("STATUS")  # its widest cell (Ready) or its label: was 14
        if size[0] >= 100:
            assert table.width_of["taints"] >= 12  # was 4: `nvi…` beside a STATUS padded with ~10 blanks
        words = footer_words(app)
        assert "? Help" in words and "q Quit" in words
        placeholder = app.screen.query_one(PromptInput).placeholder
        assert len(placeholder) <= size[0] - 3 and placeholder.endswith(("help", "action")), placeholder
        assert size[0] > 80 or placeholder.endswith("help")  # 80 columns: not `ctrl+p every actio`


@pytest.mark.parametrize("size", SMALL)
@run_async
async def test_footers_and_the_packing_picker_fit(demo: LocalSource, size: tuple[int, int]) -> None:
    async with demo_at(demo, size) as (app, pilot):
        for key in ("2", "3", "4", "1"):
            await pilot.press(key)
            await settle(pilot)
            words = footer_words(app)
            assert "? Help" in words and "q Quit" in words, (key, words)
            if key == "4":
                picker = app.screen.query_one("#pod-picker", OptionList)
                await wait_for(pilot, lambda picker=picker: picker.option_count == 1 + DEMO_PENDING + 2,
                               what="the picker: the hypothetical pod, the pending pods, the 2 waiting gangs")
                await pilot.pause()
                assert picker.virtual_size.height == picker.option_count  # one line each
                # train-c in sight (the demo's gang members come after it; the list scrolls to them)
                train_c = next(i for i in range(picker.option_count) if picker.get_option_at_index(i).id.endswith("/train-c"))
                assert train_c < picker.scrollable_content_region.height, train_c
                whatif = app.screen.query_one("#whatif", VirtualTable)
                assert whatif.page_height >= 5, whatif.page_height


@pytest.mark.parametrize("size", SMALL)
@run_async
async def test_the_job_panel_leaves_the_table_rows_and_its_strip_fits(demo: LocalSource,
                                                                      size: tuple[int, int]) -> None:
    async with demo_at(demo, size) as (app, pilot):
        await pilot.press("3")
        await settle(pilot)
        table = app.screen.query_one(VirtualTable)
        keys = [table.rows.key(i) for i in range(len(table.rows))]
        table.cursor = next(i for i, k in enumerate(keys) if k[0] == "Job")
        await pilot.pause()
        panel = app.screen.query_one("#job-panel")
        await wait_for(pilot, lambda: panel.display, what="the Job panel")
        await pilot.pause()
        assert table.page_height >= 4, table.page_height  # was 1 at 80x24
        lines = str(panel.render()).splitlines()
        strip = [ln for ln in lines if ln and set(ln) <= set("█▆▂·")]
        assert strip and all(len(ln) <= panel.content_region.width for ln in strip), (panel.content_region, lines)
        assert len({len(ln) for ln in strip[:-1]}) <= 1  # full lines, then the rest: no 78/22 wrap


@pytest.mark.parametrize("size", SMALL)
@run_async
async def test_the_render_image_is_the_bigger_box_and_consumers_read(size: tuple[int, int]) -> None:
    from kubeview.cluster.synthetic import SyntheticSource

    job = RecordedRenderJob("running")
    app = make_app(SyntheticSource(nodes=12, pods=80, seed=1), job)
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        assert isinstance(app.screen, RenderScreen)
        await wait_for(pilot, lambda: job.polls >= len(job.statuses), what="the recorded statuses")
        await pilot.pause()
        image, consumers = app.screen.query_one("#render-image"), app.screen.query_one("#consumers")
        if size[0] >= 100:
            assert image.size.width > consumers.size.width, (image.size, consumers.size)  # was 38 vs 60 at 100
        table = app.screen.query_one("#consumers", VirtualTable)
        ids = [table.render_line(y).text.split()[0] for y in (1, 2)]
        assert ids == ["7f9c2-abcde", "7f9c2-fghij"], ids  # whole, even at 80 columns (was `CO…R`, `54…s`)
        words = footer_words(app)
        assert "? Help" in words and "q Quit" in words


@pytest.mark.parametrize("size", [(160, 48), *SMALL])
@run_async
async def test_tune_keeps_its_trials_table_on_a_small_terminal(size: tuple[int, int]) -> None:
    """At 80x24 the Tune screen split into a 2-row trials table, an unreadable wall-time plot and four
    10-column parameter plots: under 30 lines the parameter plots go, under 100 columns the wall-time one."""
    from kubeview.cluster.synthetic import SyntheticSource
    from kubeview.tui.screens.tune import TuneScreen

    app = make_app(SyntheticSource(nodes=12, pods=80, seed=1))
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        await pilot.press("colon", *"tune", "enter")
        await wait_for(pilot, lambda: isinstance(app.screen, TuneScreen), what="the Tune screen")
        await pilot.pause()
        params, per_trial = app.screen.query_one("#tune-params"), app.screen.query_one("#tune-per-trial")
        trials = app.screen.query_one("#trials", VirtualTable)
        assert params.display == (size[1] >= 30) and per_trial.display == (size[0] >= 100)
        assert trials.page_height >= 6, trials.page_height  # was 2 at 80x24
        assert "? Help" in footer_words(app)
