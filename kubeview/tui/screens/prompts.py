"""Small modal questions: "how many replicas?" and "are you sure?"; each dismisses with the answer."""

from __future__ import annotations

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.validation import Integer
from textual.widgets import Button, Input, Label

from kubeview.tui.widgets.text_field import TextField


class NumberPrompt(ModalScreen[int | None]):
    """Ask for a whole number >= 0; Escape cancels (None)."""

    BINDINGS = [Binding("escape", "cancel", "Cancel", id="prompt.cancel", tooltip="Close without changing anything")]

    def __init__(self, question: str, value: int) -> None:
        super().__init__()
        self.question, self.value = question, value

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Label(self.question, classes="question")
            yield TextField(str(self.value), restrict=r"\d*", validators=[Integer(minimum=0, maximum=100_000)],
                            id="number")
            yield Label("Enter to scale, Escape to cancel", classes="hint")

    def on_mount(self) -> None:
        field = self.query_one(Input)
        field.focus()
        field.select_all()

    @on(Input.Submitted)
    def _submitted(self, event: Input.Submitted) -> None:
        if event.validation_result is not None and not event.validation_result.is_valid:
            self.query_one(".hint", Label).update("a whole number from 0 to 100000, please")
            return
        self.dismiss(int(event.value))

    def action_cancel(self) -> None:
        self.dismiss(None)


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
