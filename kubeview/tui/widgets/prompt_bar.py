"""The k9s-style prompt under the header: `:` jumps to a screen, `/` filters the current table.

Always on screen (one line), so opening it moves focus but changes no layout: a keystroke must not
cost a full-screen relayout. It only reports what was typed (`Jump`, `FilterChanged`); the screen
acts. While closed it shows the active filter, or a hint.
"""

from __future__ import annotations

import os

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.geometry import Size
from textual.message import Message
from textual.suggester import SuggestFromList
from textual.widget import Widget
from textual.widgets import Input, Label

from kubeview.tui.widgets.text_field import TextField

SCREENS = ("nodes", "pods", "workloads", "packing", "render", "tune", "capacity", "quota", "help", "quit")
HINT = "/ filter   : nodes pods workloads packing render tune capacity quota   ? help   ctrl+p every action"
# narrower terminals: a shorter hint, never one cut mid-word ("ctrl+p every actio" at 80 columns)
HINTS = (HINT, "/ filter   : nodes pods workloads packing render tune capacity quota   ? help",
         "/ filter   : screen   ? help")


def hint_for(width: int) -> str:
    return next((h for h in HINTS if len(h) <= width), HINTS[-1])


class PromptInput(TextField):
    FREEZES_FOOTER = True
    BINDINGS = [
        Binding("escape", "close", "Close", id="prompt.close", tooltip="Close the prompt", show=False),
        # the field's own, so Tab never reaches the app's focus_next (which opened a node page)
        Binding("tab", "complete", "Complete", id="prompt.complete", show=False,
                tooltip="Complete the screen name"),
    ]

    def action_close(self) -> None:
        self.parent.close()  # type: ignore[union-attr]

    def action_complete(self) -> None:
        """`:pa` Tab -> `:packing`; with several candidates, as far as they agree."""
        if getattr(self.parent, "mode", "") != "command":
            return  # a filter has nothing to complete; Tab still stays here
        value = self.value.strip().lstrip(":").lower()
        hits = [name for name in SCREENS if name.startswith(value)]
        if hits:
            self.value = os.path.commonprefix(hits)
            self.cursor_position = len(self.value)

    def _watch_value(self, value: str) -> None:
        """Input's own watcher, minus its layout: it sets `virtual_size` (a layout reactive) to the
        text's width, so every keystroke re-laid out and repainted the whole screen (~60 ms with a
        150,000-row table under it). Set quietly first, its assignment changes nothing; one line
        without scrollbars needs no layout."""
        self.set_reactive(Widget.virtual_size, Size(self.content_width, 1))
        super()._watch_value(value)


class PromptBar(Horizontal):
    """`mode` is "" (closed), "command" or "filter"."""

    class Jump(Message):
        """Enter on `:name` (an empty target: the prompt was closed)."""

        def __init__(self, target: str) -> None:
            super().__init__()
            self.target = target

    class FilterChanged(Message):
        def __init__(self, text: str, done: bool = False) -> None:
            super().__init__()
            self.text, self.done = text, done

    def __init__(self, *, id: str | None = None) -> None:  # noqa: A002
        super().__init__(id=id)
        self.mode = ""
        self.filter_text = ""

    def compose(self) -> ComposeResult:
        yield Label(" ", id="prompt-mode")
        yield PromptInput(placeholder=hint_for(self.app.size.width - 3), compact=True, id="prompt-input",
                          suggester=SuggestFromList(SCREENS, case_sensitive=False))

    @property
    def input(self) -> PromptInput:
        return self.query_one(PromptInput)

    def on_resize(self) -> None:
        if not self.mode:
            self.input.placeholder = hint_for(self.input.size.width or self.app.size.width - 3)

    def on_mount(self) -> None:
        # closed, the field is a hint line: out of the Tab order (Tab moved focus into it, where `n`
        # and Down did nothing and a typed `7` showed up in the hint); `open` lets it take focus
        self.input.can_focus = False

    def open(self, mode: str, value: str = "") -> None:
        self.mode = mode
        self.query_one("#prompt-mode", Label).update(":" if mode == "command" else "/", layout=False)
        field = self.input
        field.placeholder = "screen name (Tab completes)" if mode == "command" else "text to match"
        with field.prevent(Input.Changed):
            field.value = value
            field.cursor_position = len(value)
        field.can_focus = True
        field.focus()

    def close(self) -> None:
        if self.mode == "filter":
            self.clear()
            return
        self.post_message(self.Jump(""))
        self._show_closed()

    def clear(self) -> None:
        """Drop the active filter (Escape on the screen, the prompt closed): the rows come back."""
        self.filter_text = ""
        self.post_message(self.FilterChanged("", done=True))
        self._show_closed()

    def _show_closed(self) -> None:
        self.mode = ""
        field = self.input
        if field.has_focus:
            field.blur()  # the screen hands focus to its main widget (`ClusterScreen._refocus`)
        field.can_focus = False
        field.placeholder = hint_for(field.size.width or self.app.size.width - 3)
        with field.prevent(Input.Changed):
            field.value = self.filter_text
        self.query_one("#prompt-mode", Label).update("/" if self.filter_text else " ", layout=False)

    @on(Input.Changed)
    def _changed(self, event: Input.Changed) -> None:
        event.stop()
        if self.mode == "filter":
            self.post_message(self.FilterChanged(event.value))

    @on(Input.Submitted)
    def _submitted(self, event: Input.Submitted) -> None:
        event.stop()
        if self.mode == "command":
            self.post_message(self.Jump(event.value.strip().lstrip(":").lower()))
        elif self.mode == "filter":
            self.filter_text = event.value.strip()
            self.post_message(self.FilterChanged(event.value, done=True))
        self._show_closed()
