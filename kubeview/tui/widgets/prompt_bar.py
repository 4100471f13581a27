"""The k9s-style prompt under the header: `:` jumps to a screen, `/` filters the current table.

One Input with a mode. It only reports what was typed (`Jump`, `FilterChanged`); the screen acts.
"""

from __future__ import annotations

from textual import on
from textual.binding import Binding
from textual.message import Message
from textual.suggester import SuggestFromList
from textual.widgets import Input

SCREENS = ("nodes", "pods", "workloads", "packing", "render", "help", "quit")


class PromptBar(Input):
    """Hidden until `open(mode)`; Escape closes it (and clears a filter)."""

    BINDINGS = [Binding("escape", "close", "Close", id="prompt.close", tooltip="Close the prompt", show=False)]

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
        super().__init__(id=id, suggester=SuggestFromList(SCREENS, case_sensitive=False))
        self.mode = "command"
        self.display = False

    def open(self, mode: str, value: str = "") -> None:
        self.mode = mode
        self.placeholder = "screen: nodes, pods, workloads, packing, render" if mode == "command" else "filter"
        self.set_class(mode == "filter", "-filter")
        self.border_title = ":" if mode == "command" else "/"
        with self.prevent(Input.Changed):
            self.value = value
        self.display = True
        self.focus()

    def action_close(self) -> None:
        if self.mode == "filter":
            self.post_message(self.FilterChanged("", done=True))
        else:
            self.post_message(self.Jump(""))
        self.display = False

    @on(Input.Changed)
    def _changed(self, event: Input.Changed) -> None:
        event.stop()
        if self.mode == "filter":
            self.post_message(self.FilterChanged(event.value))

    @on(Input.Submitted)
    def _submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.display = False
        if self.mode == "command":
            self.post_message(self.Jump(event.value.strip().lstrip(":").lower()))
        else:
            self.post_message(self.FilterChanged(event.value, done=True))
