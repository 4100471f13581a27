"""Waiting for the TUI to show what the source emitted, without sleeping a fixed time."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import time
from collections.abc import AsyncIterator, Callable, Coroutine
from typing import Any

from textual.pilot import Pilot

from kubeview.model.events import KINDS
from kubeview.tui.app import KubeviewApp
from kubeview.tui.widgets.virtual_table import VirtualTable


async def wait_for(pilot: Pilot, predicate: Callable[[], bool], timeout: float = 20.0, what: str = "") -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what or predicate}")
        await pilot.pause(0.05)


def settled(app: KubeviewApp) -> bool:
    """Everything listed, the link live, and the last change shown (no refresh pending)."""
    state = app.state
    with state.lock:
        model = state.model
        ready = model.is_synced(KINDS) and model.connection.state == "live"
        version = model.version
    return ready and app.version == version and app._refresh_timer is None


async def settle(pilot: Pilot, timeout: float = 20.0) -> None:
    """Wait until the app shows the source's current state, then let the screen repaint."""
    app: KubeviewApp = pilot.app  # type: ignore[assignment]
    await wait_for(pilot, lambda: settled(app), timeout, "the cluster to be listed and shown")
    await pilot.pause()
    await asyncio.sleep(0)


def run_async(test: Callable[..., Coroutine[Any, Any, None]]) -> Callable[..., None]:
    """Run an async test function with asyncio (no pytest async plugin needed)."""

    @functools.wraps(test)
    def wrapper(*args: Any, **kwargs: Any) -> None:
        asyncio.run(test(*args, **kwargs))

    return wrapper


@contextlib.asynccontextmanager
async def kube_app_on(key: str, kubeconfig: str, size: tuple[int, int] = (120, 40)) -> AsyncIterator[Pilot]:
    """The TUI on a KubeSource for `kubeconfig`, settled, after pressing `key` (a screen's digit)."""
    from kubeview.cluster.kube.source import KubeSource
    from kubeview.tui.app import make_app

    source = KubeSource(kubeconfig)
    app = make_app(source)
    try:
        async with app.run_test(size=size) as pilot:
            await settle(pilot)
            await pilot.press(key)
            await settle(pilot)
            yield pilot
    finally:
        source.close()


def middle_cut(whole: str, shown: str) -> bool:
    """`shown` is `whole`, or its two ends with `…` between (at least 4 characters of each)."""
    head, cut, tail = shown.partition("…")
    return shown == whole or (bool(cut) and len(head) >= 4 and len(tail) >= 4 and whole.startswith(head)
                              and whole.endswith(tail))


def under(table: VirtualTable, line: str, column: str) -> str:
    """What `line` shows in `column` (by the widths the table drew with)."""
    x = 0
    for c in table.columns:
        w = table.width_of[c.key]
        if c.key == column:
            return line[x:x + w].strip()
        x += w + 1
    raise KeyError(column)


def gang_builders():  # noqa: ANN201 - a module
    """tests/model/gang_builders.py (gang objects written from the published API types), which is not on
    the path of the TUI tests."""
    import importlib.util
    from pathlib import Path

    spec = importlib.util.spec_from_file_location("gang_builders", Path(__file__).parents[1] / "model" / "gang_builders.py")
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module
