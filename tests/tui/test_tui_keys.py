"""Pilot-driven: keys in text fields (Tab completes, bursts keep their order, Escape leaves a field)."""

from __future__ import annotations

from textual import events
from textual.pilot import Pilot
from textual.widgets import Input
from tui_helpers import run_async, settle, wait_for

from kubeview.cluster.synthetic import SyntheticSource
from kubeview.tui.app import make_app
from kubeview.tui.screens.packing import PackingScreen
from kubeview.tui.screens.prompts import NumberPrompt
from kubeview.tui.screens.workloads import WorkloadsScreen
from kubeview.tui.widgets.policy_editor import PolicyEditor
from kubeview.tui.widgets.prompt_bar import PromptBar
from kubeview.tui.widgets.virtual_table import VirtualTable

SIZE = (120, 40)
CHARS = {"backspace": "\x7f", "tab": "\t", "enter": "\r", "escape": "\x1b"}


async def burst(pilot: Pilot, *keys: str) -> None:
    """Keys that arrive together, as the terminal driver posts them from one read (over ssh, or on a
    loaded machine): all queued before the app handles the first. `pilot.press` waits for the app to
    go idle after every key, so it never shows what goes wrong when they arrive at once."""
    for key in keys:
        pilot.app._driver.send_message(events.Key(key, CHARS.get(key, key)))
    await pilot.pause()
    await pilot.pause()


def focused_value(pilot: Pilot) -> str:
    field = pilot.app.focused
    assert isinstance(field, Input), field
    return field.value


@run_async
async def test_tab_completes_the_screen_name_and_keeps_the_focus(small_cluster: SyntheticSource) -> None:
    app = make_app(small_cluster)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        prompt = app.screen.query_one(PromptBar).input
        await pilot.press("colon", *"pack", "tab")
        assert prompt.has_focus and prompt.value == "packing"
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, PackingScreen)

        await pilot.press("colon", "w", "tab")  # from another screen's prompt too
        prompt = app.screen.query_one(PromptBar).input
        assert prompt.has_focus and prompt.value == "workloads"
        await pilot.press("escape", "colon", "p", "tab")  # pods or packing: as far as they agree
        assert prompt.has_focus and prompt.value == "p"
        await pilot.press("o", "tab", "enter")
        await pilot.pause()
        assert app.screen.SCREEN_TITLE == "Pods"


@run_async
async def test_backspace_then_a_key_in_one_burst_in_every_text_field(small_cluster: SyntheticSource) -> None:
    app = make_app(small_cluster)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("slash", *"gpux")  # the filter
        await burst(pilot, "backspace", "5")
        assert focused_value(pilot) == "gpu5"
        await burst(pilot, "backspace", "backspace", "x", "y")
        assert focused_value(pilot) == "gpxy"
        await pilot.press("escape")

        await pilot.press("colon", *"pax")  # the command prompt
        await burst(pilot, "backspace", "c", "k")
        assert focused_value(pilot) == "pack"
        await pilot.press("escape")

        await pilot.press("4")  # a weight field on Packing
        await pilot.pause()
        field = app.screen.query_one("#weight-cpu", Input)
        field.focus()
        await pilot.press("end", *"12")
        before = field.value
        await burst(pilot, "backspace", "5")
        assert field.value == before[:-1] + "5"
        await pilot.press("escape")

        await pilot.press("3")  # the scale prompt on Workloads
        await pilot.pause()
        assert isinstance(app.screen, WorkloadsScreen)
        await pilot.press("s")
        await wait_for(pilot, lambda: isinstance(app.screen, NumberPrompt), 5, "the scale prompt")
        await pilot.press("end", "7")
        before = focused_value(pilot)
        await burst(pilot, "backspace", "4")
        assert focused_value(pilot) == before[:-1] + "4"
        await pilot.press("escape")


@run_async
async def test_escape_leaves_a_weight_field_and_weights_take_only_numbers(small_cluster: SyntheticSource) -> None:
    app = make_app(small_cluster)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("4")
        await pilot.pause()
        screen = app.screen
        field = screen.query_one("#weight-memory", Input)
        field.focus()
        await pilot.press("ctrl+u", *"8x2e-+.5/")  # ctrl+u: delete everything left of the cursor
        assert field.value == "82.5"  # letters, signs and `/` refused
        edited = screen.edited
        assert edited is not None and edited.weights["memory"] == 82.5
        await pilot.press("escape")
        assert not field.has_focus and screen.query_one("#whatif", VirtualTable).has_focus
        policy = screen.edited.policy
        await pilot.press("p")  # a screen key works again, and nothing went into the field
        assert screen.edited.policy != policy and field.value == "82.5"
        await pilot.press("1")  # and so do global ones
        await pilot.pause()
        assert app.screen.SCREEN_TITLE == "Nodes"
        assert screen.query_one(PolicyEditor).edited.weights["memory"] == 82.5
