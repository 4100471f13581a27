"""The Ctrl+P command palette offers each command once (#24 item 16: Textual's "Quit" and "Keys" stood
beside kubeview's own quit and help) and only what the screen can do now."""

from __future__ import annotations

import pytest
from textual.command import CommandList, CommandPalette
from tui_helpers import run_async, settle, wait_for

from kubeview.cluster.synthetic import SyntheticSource
from kubeview.tui.app import make_app


async def palette_titles(pilot, query: str = "") -> list[str]:  # noqa: ANN001
    app = pilot.app
    await pilot.press("ctrl+p")
    await wait_for(pilot, lambda: isinstance(app.screen, CommandPalette), what="the palette")
    if query:
        await pilot.press(*query)
    palette = app.screen

    def gathered() -> bool:  # every provider has answered: the gathering worker is done
        return not any(w.group == CommandPalette._GATHER_COMMANDS_GROUP and not w.is_finished
                       for w in app.workers)

    await pilot.pause()
    await wait_for(pilot, lambda: gathered() and palette.query_one(CommandList).option_count > 0, what="the commands")
    await pilot.pause()
    commands = palette.query_one(CommandList)
    titles = [str(commands.get_option_at_index(i).prompt).splitlines()[0] for i in range(commands.option_count)]
    await pilot.press("escape")
    await wait_for(pilot, lambda: not isinstance(app.screen, CommandPalette), what="the palette to close")
    return titles


@pytest.mark.parametrize("size", [(160, 48), (100, 30), (80, 24)])
@run_async
async def test_each_command_once(small_cluster: SyntheticSource, size: tuple[int, int]) -> None:
    app = make_app(small_cluster)
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        titles = await palette_titles(pilot, "qui")
        assert titles == ["Quit and stop everything kubeview started"], titles  # not Textual's "Quit" too
        titles = await palette_titles(pilot, "key")
        assert "Keys" not in titles and "Show every key" in titles, titles
        everything = await palette_titles(pilot)
        assert len(everything) == len(set(everything)), everything
        assert "Nodes: Clear filter" not in everything  # no filter: nothing to clear
        await pilot.press("slash", *"gpu", "enter")
        await pilot.pause()
        assert "Nodes: Clear filter" in await palette_titles(pilot, "clear")
