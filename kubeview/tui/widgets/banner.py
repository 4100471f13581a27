"""A one-line banner under the header: a failed worker, or the result of the last action.

A view of the app's `banner` reactive (text, severity); hidden while empty.
"""

from __future__ import annotations

from textual.widgets import Static


class Banner(Static):
    """Shows `app.banner`; the `-error` class colours it as a failure."""

    def on_mount(self) -> None:
        self.watch(self.app, "banner", self._show)

    def _show(self, banner: tuple[str, str]) -> None:
        text, severity = banner
        self.update(text)
        self.display = bool(text)
        self.set_class(severity == "error", "-error")
        self.set_class(severity == "ok", "-ok")
