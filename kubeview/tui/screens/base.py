"""What every cluster screen shares: header, banner, the `:`/`/` prompt, footer, refresh on change.

A screen refreshes from the state when the app's `version` moves and the screen is the current one;
a screen in the background only marks itself stale and catches up when it is shown again, so a
burst of events costs one refresh of what is on screen, never of every screen.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from textual import events, on
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.reactive import Reactive
from textual.screen import Screen
from textual.widget import Widget

from kubeview.cluster.source import ListsKinds
from kubeview.model.freshness import NODE_FIGURES, Freshness, depends
from kubeview.tui.host import AppHost, host_of
from kubeview.tui.widgets.banner import Banner
from kubeview.tui.widgets.cluster_header import ClusterHeader
from kubeview.tui.widgets.prompt_bar import PromptBar
from kubeview.tui.widgets.quiet_footer import QuietFooter

if TYPE_CHECKING:
    from kubeview.tui.state import ClusterState


def installed(app: App, name: str, make: Callable[[], Screen]) -> Screen:
    """A detail screen installed once under `name` and reused: mounting a new screen costs a full layout."""
    if not app.is_screen_installed(name):
        app.install_screen(make(), name)
    return app.get_screen(name)


class ClusterScreen(Screen):
    """Base of the nodes, pods, workloads, packing and render screens."""

    SCREEN_TITLE = ""
    FILTERABLE = True
    # Textual's `focused` repaints the whole screen when focus moves (opening `/` and closing it):
    # ~60-100 ms at 120x40. The widgets that gain and lose focus repaint themselves.
    focused: Reactive[Widget | None] = Reactive(None, repaint=False)
    AUTO_FOCUS = "VirtualTable"  # never the hidden prompt
    BINDINGS = [
        Binding("slash", "filter", "Filter", id="screen.filter", tooltip="Filter the rows (Escape clears)"),
        # only while a filter is on (`check_action`): else Escape goes on (a detail screen's "back")
        Binding("escape", "clear_filter", "Clear filter", id="screen.clear_filter",
                tooltip="Clear the filter: every row again"),
    ]

    def __init__(self) -> None:
        super().__init__()
        self.filter_text = ""
        self._stale = True
        self.refresh_seconds = 0.0  # how long the last refresh took (the TUI benchmark reads it)
        # Textual marks a new screen as behind on CSS (-1), so the first visit to each mode re-parses
        # the whole stylesheet and restyles every widget of every screen (~200 ms at 5,000 rows).
        # A new screen's widgets get the current stylesheet when they mount, so it is not behind.
        with contextlib.suppress(Exception):  # no running app (a screen built alone): Textual's default
            self._css_update_count = self.app._css_update_count

    @property
    def kv(self) -> AppHost:
        return host_of(self.app)

    @property
    def state(self) -> ClusterState:
        return self.kv.state

    def node_figures(self) -> Freshness:
        """Whether the figures per node (requested, free, GPU fit, what-if) are facts now, pending or stale
        (model/freshness.py); call under the state's lock."""
        source = self.kv.source
        return self.state.model.lists().freshness(
            depends(NODE_FIGURES, source.kinds if isinstance(source, ListsKinds) else ()))

    def compose(self) -> ComposeResult:
        yield ClusterHeader(self.SCREEN_TITLE)
        yield Banner()
        yield PromptBar()
        yield from self.compose_body()
        yield QuietFooter()

    def compose_body(self) -> ComposeResult:
        yield from ()

    def retitle(self, title: str) -> None:
        """A reused detail screen shows another object: its title now, its content at the next visit."""
        self.SCREEN_TITLE = title
        self._stale = True
        for header in self.query(ClusterHeader):
            header.screen_title = title

    def main_widget(self) -> Widget | None:
        """What gets the focus back after the prompt closes."""
        return None

    def on_mount(self) -> None:
        self.watch(self.app, "version", self._version_changed, init=False)

    def _version_changed(self) -> None:
        if self.is_current:
            self.refresh_data()
        else:
            self._stale = True

    def on_screen_resume(self, event: events.ScreenResume) -> None:
        # Textual (whose handler runs after this one) restyles every widget of a resumed screen,
        # 40-60 ms per switch; that only matters if the stylesheet changed meanwhile (a theme).
        if self._css_update_count == self.app._css_update_count:
            event.refresh_styles = False
        if self._stale:
            self.refresh_data()
        main = self.main_widget()
        if main is not None and self.focused is None:
            main.focus()

    def on_screen_suspend(self) -> None:
        """A screen's status line (an action's result, a refusal) goes with it; app-wide ones stay."""
        if self.kv.banner != self.kv.sticky_banner:
            self.kv.banner = ("", "")

    def refresh_data(self) -> None:
        t0 = time.perf_counter()
        self._stale = False
        self.update_from_state(self.state)
        self.refresh_seconds = time.perf_counter() - t0

    def update_from_state(self, state: ClusterState) -> None:
        """Read the state (take `state.lock` around model reads) and update the widgets."""

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "clear_filter":
            return bool(self.filter_text)  # False: hidden, and Escape goes on to the next binding
        return not (action == "filter" and not self.FILTERABLE)  # False: hidden from the footer

    def action_filter(self) -> None:
        self.query_one(PromptBar).open("filter", self.filter_text)

    def action_clear_filter(self) -> None:
        """Escape with a filter on (the prompt closed): the hint and `?` say "Escape clears"."""
        self.query_one(PromptBar).clear()

    def open_command(self) -> None:
        self.query_one(PromptBar).open("command")

    def apply_filter(self, text: str) -> None:
        """Show only rows matching `text` (screens with tables override)."""

    @on(PromptBar.FilterChanged)
    def _filter_changed(self, event: PromptBar.FilterChanged) -> None:
        text = event.text.strip().lower()
        if text != self.filter_text:
            self.filter_text = text
            self.apply_filter(text)
        if event.done:
            self._refocus()

    @on(PromptBar.Jump)
    def _jump(self, event: PromptBar.Jump) -> None:
        self._refocus()
        if event.target:
            self.kv.jump(event.target)

    def _refocus(self) -> None:
        main = self.main_widget()
        if main is not None:
            main.focus()
