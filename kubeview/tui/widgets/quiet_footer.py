"""Textual's Footer, recomposed only when the keys it shows really change.

The stock Footer rebuilds all its key widgets on every focus change (the screen republishes its
bindings), which costs a full layout of the screen: 100 ms and more on a busy cluster, for a footer
that usually shows the same keys. This one compares what it would show first, and stays as it is
while a widget with `FREEZES_FOOTER` (the `:`/`/` prompt) has the focus.
"""

from __future__ import annotations

from textual.screen import Screen
from textual.widgets import Footer


class QuietFooter(Footer):
    def __init__(self) -> None:
        super().__init__()
        self._shown: tuple | None = None

    def bindings_changed(self, screen: Screen) -> None:
        if getattr(screen.focused, "FREEZES_FOOTER", False):
            return  # a short-lived prompt has focus: keep the screen's keys, skip two relayouts
        shown = tuple(
            (b.binding.key, b.binding.description, b.enabled, b.tooltip)
            for b in screen.active_bindings.values() if b.binding.show
        )
        if shown == self._shown and self._bindings_ready:
            return
        self._shown = shown
        super().bindings_changed(screen)
