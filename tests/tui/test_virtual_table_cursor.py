"""Where VirtualTable's cursor goes when rows change: on the first row until the table is first
painted (its lists may arrive out of sight, in any order), then with its row's key."""

from __future__ import annotations

from textual.app import App, ComposeResult
from tui_helpers import run_async

from kubeview.tui.rows.column import Column
from kubeview.tui.widgets.table_rows import Rows
from kubeview.tui.widgets.virtual_table import VirtualTable

RS, JOB, DEPLOY = ("ReplicaSet", "default", "consumer"), ("Job", "batch", "items"), ("Deployment", "a", "b")


def rows(*keys: tuple) -> Rows:
    return Rows(keys=list(keys), cells=lambda key: key)


class Tables(App):
    CSS = "VirtualTable { height: 10; }"

    def compose(self) -> ComposeResult:
        table = VirtualTable([Column("kind", "KIND", 12), Column("ns", "NS", 10), Column("name", "NAME")])
        table.display = False  # filled out of sight, as a screen not yet opened
        yield table


@run_async
async def test_a_table_filled_out_of_sight_opens_on_its_first_row_then_follows_the_row() -> None:
    app = Tables()
    async with app.run_test(size=(60, 12)) as pilot:
        table = app.query_one(VirtualTable)
        table.rows = rows(RS)  # the ReplicaSets listed first
        await pilot.pause()
        assert table.cursor_key == RS
        table.rows = rows(JOB, RS)  # then the Jobs, which sort before them
        await pilot.pause()
        assert table.cursor_key == JOB and table.cursor == 0

        table.display = True
        await pilot.pause()  # painted: the person sees the cursor on the Job
        table.rows = rows(DEPLOY, JOB, RS)  # a row above it: the cursor stays on what they saw
        await pilot.pause()
        assert table.cursor_key == JOB and table.cursor == 1
