"""The one text field every kubeview prompt uses: keys apply in the order they were typed.

Textual's `Input` types a printable key as it arrives, but runs its own bindings (Backspace, Delete,
the cursor keys) only once the key has bubbled up to the App. When keys arrive together, as they do
over ssh or on a loaded machine, the next character is inserted first and Backspace then deletes it:
`Backspace 5` left the field unchanged. `TextField` runs its own bindings where the key arrives, so
each key acts before the next one is read. Escape leaves the field (`blur`), so global keys work again.
"""

from __future__ import annotations

from textual import events
from textual.binding import Binding
from textual.screen import ModalScreen
from textual.widgets import Input


class TextField(Input):
    BINDINGS = [Binding("escape", "leave", "Leave the field", show=False, id="field.leave",
                        tooltip="Stop typing here; keys go to the screen again")]

    async def _on_key(self, event: events.Key) -> None:
        for binding in self._bindings.key_to_bindings.get(event.key, ()):
            if not binding.priority and await self.app.run_action(binding.action, self):
                event.stop()
                event.prevent_default()  # not Input's own handler too
                return

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        # in a dialog, Escape is the dialog's (cancel), not the field's
        return not (action == "leave" and isinstance(self.screen, ModalScreen))

    def action_leave(self) -> None:
        """Hand the keys back to the screen (its main widget, else nothing focused)."""
        main = getattr(self.screen, "main_widget", lambda: None)()
        if main is not None and main is not self:
            main.focus()
        else:
            self.blur()
