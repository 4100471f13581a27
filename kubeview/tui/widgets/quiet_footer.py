"""Textual's Footer, recomposed only when the keys it shows really change, and never cut mid-word.

The stock Footer rebuilds all its key widgets on every focus change (the screen republishes its
bindings), which costs a full layout of the screen: 100 ms and more on a busy cluster, for a footer
that usually shows the same keys. This one compares what it would show first, and stays as it is
while a widget with `FREEZES_FOOTER` (the `:`/`/` prompt) has the focus.

On a narrow terminal the stock Footer cut its last keys mid-word (`q Qui`, `? H` at 100 columns):
here keys that do not fit whole are left out, the screen's last ones first; `? Help` (which lists
every key) and `q Quit` stay.
"""

from __future__ import annotations

from rich.cells import cell_len
from textual.app import ComposeResult
from textual.screen import Screen
from textual.widgets import Footer
from textual.widgets._footer import FooterKey

KEEP = ("help", "quit")  # actions whose keys stay while others are left out
PALETTE_ROOM = 14  # the `^p palette` key docked at the right, and its separator


class QuietFooter(Footer):
    def __init__(self) -> None:
        super().__init__()
        self._shown: tuple | None = None
        self._width = 0

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

    def compose(self) -> ComposeResult:
        widgets = list(super().compose())
        keys = [w for w in widgets if isinstance(w, FooterKey) and not w.has_class("-command-palette")]
        self._width = self.size.width or self.app.size.width  # a resize to this width needs no recompose
        room = self._width - (PALETTE_ROOM if len(keys) < len(widgets) else 0)
        total = sum(_width(k) for k in keys)
        for key in reversed(keys):
            if total <= room:
                break
            if key.action not in KEEP:
                widgets.remove(key)
                total -= _width(key)
        self.styles.grid_size_columns = max(1, len([k for k in keys if k in widgets]))
        yield from widgets

    def on_resize(self) -> None:
        if self.size.width != self._width:
            self._width = self.size.width
            self.refresh(recompose=True)


def _width(key: FooterKey) -> int:
    """Cells the key takes: ` k Description ` (the stock padding)."""
    return cell_len(key.key_display) + (cell_len(key.description) + 3 if key.description else 2)
