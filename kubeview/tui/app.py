"""The kubeview TUI: one state, a watch worker, k9s-style navigation between screens.

The app owns the `ClusterState` and the workers that feed it; screens and widgets are views of
its reactives (`version`, `summary`, `banner`, `packing_label`). Behaviour lives in the screens
(`screens/`), table logic in `rows/`, actions that block in `actions.py`.
"""

from __future__ import annotations

import argparse
import sys
import threading
import time
from collections import deque
from collections.abc import Iterable
from dataclasses import replace
from typing import Any

from textual import events, on, work
from textual.app import App, SystemCommand
from textual.binding import Binding
from textual.driver import Driver
from textual.reactive import var
from textual.screen import Screen
from textual.worker import Worker, WorkerState

from kubeview.cluster.source import ClusterSource, ListsKinds, RunsPacking
from kubeview.scheduling.config import PackingConfig
from kubeview.tui.actions import ActionsMixin
from kubeview.tui.commands import KubeviewCommands
from kubeview.tui.format import GPU
from kubeview.tui.messages import ActionDone, ClusterChanged
from kubeview.tui.rows.gpu_units import shaped
from kubeview.tui.screens.capacity import CapacityScreen
from kubeview.tui.screens.nodes import NodesScreen, install_detail
from kubeview.tui.screens.packing import PackingScreen
from kubeview.tui.screens.pods import PodsScreen
from kubeview.tui.screens.quota import QuotaScreen
from kubeview.tui.screens.render import RenderScreen
from kubeview.tui.screens.tune import TuneScreen
from kubeview.tui.screens.workloads import WorkloadsScreen
from kubeview.tui.state import ClusterState
from kubeview.tui.summary import STARTING, Summary, summarize

SCREENS = ("nodes", "pods", "workloads", "packing", "render", "tune", "capacity", "quota")
ALIASES = {"q": "quit"}  # `:q` quits, as in vim, although `quota` starts with q too
OPTIONAL = {"render": "render_job", "tune": "tuner"}  # screens built only when there is one to show
REFRESH_INTERVAL = 0.25  # at most 4 refreshes a second, however fast events come
LOCK_WAIT = 0.02  # how long a refresh waits for the source thread to release the model
LOCK_RETRY = 0.1
GIL_SWITCH_SECONDS = 0.001
USAGE_INTERVAL = 15.0  # seconds between Prometheus readings
# how long an action's result stays in the banner (#24: it lingered until the next action); a
# progress line ("scaling…") stays until its result replaces it, an app-wide failure (sticky) stays
BANNER_SECONDS = {"ok": 8.0, "error": 20.0}
TUNE_STOP_WAIT = 180.0  # quitting waits this long at most for the running trial's pods to go
KEY_PRIORITY_SECONDS = 0.06  # after a key press, background sorts pause this long (see `yield_to_ui`)
YIELD_AT_MOST = 0.5  # ...but never longer than this per step (held-down keys must not stall a sort)


def screen_named(target: str) -> str | None:
    """What `:target` names: a screen, `help` or `quit`, by name, alias or unique prefix (None: none or several)."""
    names = [*SCREENS, "help", "quit"]
    target = ALIASES.get(target, target)
    hits = ([n for n in names if n == target] or [n for n in names if n.startswith(target)]
            or [n for n in names if target.startswith(n[:2])])
    return hits[0] if len(hits) == 1 else None


class KubeviewApp(ActionsMixin, App[int]):
    CSS_PATH = "app.tcss"
    TITLE = "kubeview"
    COMMANDS = App.COMMANDS | {KubeviewCommands}
    MODES = {"nodes": NodesScreen, "pods": PodsScreen, "workloads": WorkloadsScreen,
             "packing": PackingScreen, "render": RenderScreen, "tune": TuneScreen, "capacity": CapacityScreen,
             "quota": QuotaScreen}
    BINDINGS = [
        Binding("colon", "command_bar", ":screen", id="app.command", tooltip="Jump to a screen by name"),
        Binding("question_mark", "help", "Help", id="app.help", tooltip="Show every key"),
        Binding("q", "quit", "Quit", id="app.quit", tooltip="Quit and stop everything kubeview started"),
        *[Binding(str(i + 1), f"jump('{name}')", name.title(), show=False, id=f"app.jump_{name}",
                  tooltip=f"Go to the {name} screen") for i, name in enumerate(SCREENS)],
    ]

    # `var`: the app itself draws nothing, so a change must not repaint the whole screen
    # (a `reactive` here would, four times a second); the widgets watching these repaint themselves.
    version: var[int] = var(0, init=False)
    summary: var[Summary] = var(STARTING, init=False)
    banner: var[tuple[str, str]] = var(("", ""), init=False)
    sticky_banner: tuple[str, str] = ("", "")  # about the whole app (a failed watch): stays across screens
    packing_label: var[str] = var("", init=False)
    packing_live: var[PackingConfig | None] = var(None, init=False)

    def __init__(self, source: ClusterSource, render_job: Any = None, *, start: str = "nodes",
                 extender: str | None = None, extender_token_file: str | None = None, native_scheduler: bool = False,
                 refresh_interval: float = REFRESH_INTERVAL, usage: Any = None,
                 usage_interval: float = USAGE_INTERVAL, tuner: Any = None) -> None:
        super().__init__()
        self.source = source
        self.render_job = render_job
        self.tuner = tuner  # a kubeview.tune.study.Tuner: `kubeview tune` opens on the Tune screen
        self.state = ClusterState(source.title)
        self.set_reactive(KubeviewApp.summary, replace(STARTING, title=self.state.model.title))  # nothing listed yet
        if start == "nodes":
            start = "tune" if tuner is not None else "render" if render_job is not None else start
        self.start_screen = start
        self.extender_url, self.extender_token_file = extender, extender_token_file
        self.native_scheduler = native_scheduler
        self.refresh_interval = refresh_interval
        self.usage, self.usage_interval = usage, usage_interval  # a PrometheusUsage, when --prometheus
        self.refresh_seconds = 0.0  # the last refresh's cost (the TUI benchmark reads it)
        self.refreshes = 0
        self.refresh_times: deque[float] = deque(maxlen=4096)
        self._stop = threading.Event()
        self._last_refresh = 0.0
        self._refresh_timer: Any = None
        self._banner_timer: Any = None
        self.banner_seconds = dict(BANNER_SECONDS)
        self.packing_where = ""
        self._warmed = False
        self._ui_busy_until = 0.0
        self._mode_screens: dict[str, Any] = {}  # the screen of each mode built at start
        self._cleanup: threading.Thread | None = None
        self.cleanup_said = ""  # what stopping the render job said (a real-cluster job: what it deleted)
        self.start_failure = ""  # why the source failed before its first list (the app then exits 1)

    def get_driver_class(self) -> type[Driver]:
        """Textual's terminal driver, but one that gives the terminal back at once on quit."""
        driver = super().get_driver_class()
        if driver.__name__ != "LinuxDriver":  # (Windows, a driver named in TEXTUAL_DRIVER)
            return driver
        from kubeview.tui.driver import QuickExitDriver

        return QuickExitDriver

    # -- lifecycle ------------------------------------------------------------------------------
    def on_mount(self) -> None:
        # The source thread and the sort/filter worker are CPU-bound Python; hand the GIL back to the
        # UI thread every millisecond instead of every 5, so a key press is not queued behind them.
        sys.setswitchinterval(GIL_SWITCH_SECONDS)
        self.state.notify = lambda: self.post_message(ClusterChanged())
        self.init_packing()
        if (self.extender_url or self.native_scheduler) and not isinstance(self.source, RunsPacking):
            self.fetch_packing()
        self.watch_source()
        if self.usage is not None:
            self.poll_usage()
        self.switch_mode(self.start_screen)
        self.call_after_refresh(self._build_screens)

    def _build_screens(self) -> None:
        """Compose and mount every other screen now, while the cluster is still being listed.

        A screen's first visit would otherwise mount its widgets and style them (200-700 ms for the
        packing screen) while the user waits on a key; after this a switch costs one refresh.
        """
        start = self.current_mode
        wanted = [m for m in SCREENS if m != start and getattr(self, OPTIONAL.get(m, "source")) is not None]
        with self.batch_update():
            for mode in wanted:
                self.switch_mode(mode)
                self._mode_screens[mode] = self.screen
            self.switch_mode(start)
            if start == "nodes":  # and the node screen that Enter opens
                self.push_screen(install_detail(self))
                self.pop_screen()

    @work(thread=True, exclusive=True, group="watch", exit_on_error=False, name="watch")
    def watch_source(self) -> None:
        """Run the source until quit: it emits into the state, the state posts ClusterChanged."""
        self.source.run(self.state.emit, self._stop)

    @work(thread=True, exclusive=True, group="usage", exit_on_error=False, name="prometheus")
    def poll_usage(self) -> None:
        """Read utilization every `usage_interval` s; a failed reading is an error line in the header."""
        self.usage.run(self.state.emit, self._stop, self.usage_interval)

    def stop_workers(self) -> None:
        self._stop.set()

    def on_unmount(self) -> None:
        self._stop.set()

    async def action_quit(self) -> None:
        """Leave the screen now; stopping the source, the render job and their processes (up to
        seconds) goes on in a thread that `finish_cleanup` waits for before the process exits."""
        self.begin_cleanup()
        self.exit(0)

    def begin_cleanup(self) -> None:
        self._stop.set()
        if self._cleanup is None:
            self._cleanup = threading.Thread(target=self._clean_up, name="kubeview cleanup")
            self._cleanup.start()

    def finish_cleanup(self) -> str:
        """Stop everything kubeview started (if `q` has not begun it) and wait until it is done."""
        self.begin_cleanup()
        assert self._cleanup is not None
        self._cleanup.join()
        return self.cleanup_said

    def _clean_up(self) -> None:
        try:
            if self.tuner is not None:  # its running trial stops and deletes its job; wait for that
                self.tuner.cancel()
                self.tuner.idle.wait(timeout=TUNE_STOP_WAIT)
            if self.render_job is not None:
                self.cleanup_said = self.render_job.stop() or ""
        finally:
            try:
                self.source.close()
            finally:
                if self.usage is not None:
                    self.usage.close()

    # -- the UI thread first ------------------------------------------------------------------------
    async def on_event(self, event: events.Event) -> None:
        if isinstance(event, events.Key):
            self._ui_busy_until = time.monotonic() + KEY_PRIORITY_SECONDS
        await super().on_event(event)

    @property
    def stopping(self) -> threading.Event:
        """Set when kubeview is quitting (`AppHost`): the workers' loops end."""
        return self._stop

    def yield_to_ui(self) -> None:
        """Called by background workers between steps: wait while the UI thread answers a key.

        Python threads share one interpreter lock, handed over every millisecond: a worker sorting
        150,000 rows halves the UI thread's speed (and the source thread makes it a third). Pausing
        for the ~60 ms after a key press gives the answer to that key the whole CPU."""
        deadline = time.monotonic() + YIELD_AT_MOST
        while (now := time.monotonic()) < self._ui_busy_until and now < deadline:
            time.sleep(min(0.005, self._ui_busy_until - now))

    # -- cluster changes: coalesced, throttled ------------------------------------------------------
    @on(ClusterChanged)
    def _cluster_changed(self) -> None:
        wait = self._last_refresh + self.refresh_interval - time.monotonic()
        if wait > 0:
            if self._refresh_timer is None:
                self._refresh_timer = self.set_timer(wait, self.refresh_state)
            return
        self.refresh_state()

    def refresh_state(self) -> None:
        """Read the model once for the header, then let the current screen refresh, all under the lock.

        A relist of 150,000 pods holds the lock for seconds: rather than freeze, try again shortly.
        """
        self._refresh_timer = None
        if not self.state.lock.acquire(timeout=LOCK_WAIT):
            self._refresh_timer = self.set_timer(LOCK_RETRY, self.refresh_state)
            return
        try:
            t0 = time.perf_counter()
            self.state.caught_up()
            model = self.state.model
            summary = summarize(model, self.state.memo("gpu_fit", lambda: model.largest_fit(GPU)),
                                self.source.kinds if isinstance(self.source, ListsKinds) else (),
                                self.state.memo("gpu_shaped", lambda: shaped(model)))
            if summary.usage_error and summary.usage_error != self.summary.usage_error:
                self.banner = self.sticky_banner = (f"utilization: {summary.usage_error}", "error")  # once
            self.summary = summary
            self.version = self.state.model.version  # the current screen refreshes now (sync watchers)
            self.refresh_seconds = time.perf_counter() - t0
        finally:
            self.state.lock.release()
        self._last_refresh = time.monotonic()
        self.refreshes += 1
        self.refresh_times.append(self.refresh_seconds)
        if not self._warmed and self.state.model.is_synced(("Node", "Pod")):
            self._warmed = True
            self.call_after_refresh(self._warm_screens)

    def _warm_screens(self) -> None:
        """Once the cluster is first listed, let every other screen compute its rows now (the packing
        screen's what-if over every node, its pod list), not on its first visit."""
        for mode, screen in self._mode_screens.items():
            if mode != self.current_mode:
                _refresh_if_stale(screen)  # (a screen still mounting catches up on its first visit)

    # -- workers and actions -----------------------------------------------------------------------
    @on(Worker.StateChanged)
    def _worker_changed(self, event: Worker.StateChanged) -> None:
        if event.state != WorkerState.ERROR:
            return
        error = event.worker.error
        what = event.worker.name or event.worker.group
        if what == "watch" and not self._ever_listed():
            # the very first connection failed (unreachable, 401, RBAC): as kubectl, one line and exit 1
            # (run_tui prints it), not a screen of figures it never had; later failures keep the TUI open
            self.start_failure = str(error) if error is not None else "the cluster source stopped before listing"
            self.exit(1)
            return
        self.banner = self.sticky_banner = (f"{what} failed: {error}" if error is not None else f"{what} failed",
                                            "error")

    def _ever_listed(self) -> bool:
        with self.state.lock:
            return self.state.model.is_synced(("Node", "Pod"))

    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        """Textual's palette entries minus the two kubeview has its own of (#24: each command showed
        twice): "Quit" (ours stops what kubeview started) and "Keys" (ours, `?`, shows every key)."""
        for command in super().get_system_commands(screen):
            if command.title not in ("Quit", "Keys"):
                yield command

    @on(ActionDone)
    def _action_done(self, event: ActionDone) -> None:
        self.banner = (event.text, "ok" if event.ok else "error")

    def watch_banner(self, banner: tuple[str, str]) -> None:
        """An action's result expires (`BANNER_SECONDS`); a newer banner restarts the clock."""
        if self._banner_timer is not None:
            self._banner_timer.stop()
            self._banner_timer = None
        seconds = self.banner_seconds.get(banner[1])
        if banner[0] and seconds is not None and banner != self.sticky_banner:
            self._banner_timer = self.set_timer(seconds, lambda: self._expire_banner(banner))

    def _expire_banner(self, banner: tuple[str, str]) -> None:
        self._banner_timer = None
        if self.banner == banner and banner != self.sticky_banner:  # (sticky is set after `banner`)
            self.banner = ("", "")

    # -- navigation --------------------------------------------------------------------------------
    def jump(self, target: str) -> None:
        """`:target`: a screen (its name, any unique prefix), `help` or `quit` (`:q`: ALIASES)."""
        name = screen_named(target)
        if name is None:
            self.banner = (f"no screen {target!r}; try one of {', '.join(SCREENS)}", "error")
            return
        self.action_jump(name)

    def action_jump(self, name: str) -> None:
        if name == "help":
            self.action_help()
        elif name == "quit":
            self.run_worker(self.action_quit())
        elif self.current_mode != name:
            # its rows now, before Textual paints it: on_screen_resume comes after that first paint,
            # which showed the rows of the last refresh (a Job listed since was missing and the
            # cursor stayed on the ReplicaSet that had been first)
            _refresh_if_stale(self._mode_screens.get(name))
            self.switch_mode(name)

    def action_command_bar(self) -> None:
        open_command = getattr(self.screen, "open_command", None)
        if open_command is not None:
            open_command()

    def action_help(self) -> None:
        from kubeview.tui.screens.help import HelpScreen

        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen())


def make_app(source: ClusterSource, render_job: Any = None, **options: Any) -> KubeviewApp:
    """The app for `source` (tests: `async with make_app(src).run_test(size=(120, 40)) as pilot`)."""
    return KubeviewApp(source, render_job, **options)


def run_tui(source: ClusterSource, args: argparse.Namespace, render_job: Any = None, tuner: Any = None) -> int:
    """Run the TUI until the user quits; stops the source and the render job on the way out."""
    from kubeview.cluster.prometheus.source import PrometheusError, PrometheusUsage

    try:
        usage = PrometheusUsage.from_args(args)
    except PrometheusError as exc:
        sys.stderr.write(f"kubeview: {exc}\n")
        source.close()
        return 2
    app = make_app(source, render_job, extender=getattr(args, "extender", None),
                   extender_token_file=getattr(args, "extender_token_file", None),
                   native_scheduler=getattr(args, "native_scheduler", False), usage=usage, tuner=tuner)
    try:
        code = app.run()
    finally:
        said = app.finish_cleanup()  # begun by `q` while the screen went away
        if said:  # a real-cluster job says what it deleted or kept
            print(said)
    if app.start_failure:
        sys.stderr.write(f"kubeview: {app.start_failure}\n")
        return 1
    return int(code or 0)


def _refresh_if_stale(screen: Any) -> None:
    """Compute a mounted mode screen's rows now if the cluster changed since it last did (out of sight)."""
    if screen is not None and screen.is_mounted and getattr(screen, "_stale", False):
        screen.refresh_data()
