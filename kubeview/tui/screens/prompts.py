"""Small modal questions: "how many replicas?", "which gang?" and "are you sure?"; each dismisses with the answer."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label

from kubeview.tui.widgets.text_field import TextField


class TextPrompt(ModalScreen[Any]):
    """Ask for a line of text that `parse` turns into a value (its ValueError is shown, one line, and
    the question stays); Escape cancels (None)."""

    BINDINGS = [Binding("escape", "cancel", "Cancel", id="prompt.cancel", tooltip="Close without changing anything")]

    def __init__(self, question: str, value: str, parse: Callable[[str], Any], hint: str, *,
                 restrict: str | None = None, field_id: str = "text") -> None:
        super().__init__()
        self.question, self.value, self.parse, self.hint = question, value, parse, hint
        self.restrict, self.field_id = restrict, field_id

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Label(self.question, classes="question")
            yield TextField(self.value, restrict=self.restrict, id=self.field_id)
            yield Label(self.hint, classes="hint")

    def on_mount(self) -> None:
        field = self.query_one(Input)
        field.focus()
        field.select_all()

    @on(Input.Submitted)
    def _submitted(self, event: Input.Submitted) -> None:
        try:
            value = self.parse(event.value)
        except ValueError as exc:
            self.query_one(".hint", Label).update(Text(str(exc)))  # the user's text: not markup
            return
        self.dismiss(value)

    def action_cancel(self) -> None:
        self.dismiss(None)


class NumberPrompt(TextPrompt):
    """Ask for a whole number from 0 to 100,000; Escape cancels (None)."""

    def __init__(self, question: str, value: int) -> None:
        super().__init__(question, str(value), whole_number, "Enter to scale, Escape to cancel", restrict=r"\d*",
                         field_id="number")


def whole_number(text: str) -> int:
    if not text.strip().isdigit() or int(text) > 100_000:
        raise ValueError("a whole number from 0 to 100000, please")
    return int(text)


class Confirm(ModalScreen[bool]):
    """Yes/no; `y`/Enter on Yes confirms, `n`/Escape declines."""

    BINDINGS = [
        Binding("y", "answer(True)", "Yes", id="confirm.yes", tooltip="Go ahead"),
        Binding("n,escape", "answer(False)", "No", id="confirm.no", tooltip="Do nothing"),
    ]

    def __init__(self, question: str) -> None:
        super().__init__()
        self.question = question

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Label(self.question, classes="question")
            with Horizontal(classes="buttons"):
                yield Button("Yes (y)", variant="error", id="yes")
                yield Button("No (n)", variant="primary", id="no")

    def on_mount(self) -> None:
        self.query_one("#no", Button).focus()

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "yes")

    def action_answer(self, yes: bool) -> None:
        self.dismiss(yes)
