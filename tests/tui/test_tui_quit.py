"""`q`: the screen goes at once (under 300 ms), and stopping what kubeview started finishes after it.

In-process, "the screen is gone" is the moment the app tells its driver to stop application mode
(the real driver leaves the alternate screen there); the sources and render job here take their
time to stop, as a local cluster's processes do. The last test runs the real TUI in a terminal.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from pathlib import Path

import pexpect  # in the test extra: a missing pexpect is an error here, never a silent skip (#24 item 15)
import pytest
from recorded_render import RecordedRenderJob
from tui_helpers import run_async, settle, wait_for

from kubeview.cluster.synthetic import SyntheticSource
from kubeview.tui.app import make_app

SIZE = (120, 40)
TARGET = 0.3  # seconds of this process's CPU from `q` to a closed screen (wall time on an idle machine)
# In a terminal: Textual's own driver joins its input thread (two `select(0.1)`) before it leaves the
# alternate screen, so it never closes in under 200 ms (250-270 ms measured here); ours takes ~50.
TERMINAL_TARGET = 0.2
STOP_LIMIT = 60.0  # stopping the source (and the render job) lasts until the test lets it: at most this


class SlowSource(SyntheticSource):
    """Stopping it takes until ``release`` is set, as a local cluster's processes take their time:
    the screen closing while it is still held shows `q` did not wait for it, whatever the load
    (issue 23: a 1 s sleep and a 300 ms wall-clock bound failed at 1.35 s on a busy machine)."""

    def __init__(self, release: threading.Event) -> None:
        super().__init__(nodes=12, pods=80, seed=1)
        self.release = release
        self.closed_at: float | None = None

    def close(self) -> None:
        self.release.wait(STOP_LIMIT)
        self.closed_at = time.monotonic()


class SlowRenderJob(RecordedRenderJob):
    def __init__(self, release: threading.Event) -> None:
        super().__init__("running")
        self.release = release
        self.stopped_at: float | None = None

    def stop(self) -> str:
        self.release.wait(STOP_LIMIT)
        self.stopped_at = time.monotonic()
        return "render stopped"


async def quit_latency(render: bool) -> tuple[float, float, float, object, SlowSource, SlowRenderJob | None]:
    """Press q on a settled app; return (CPU seconds and wall seconds to a closed screen, when it
    closed, app, source, job). Stopping the source and the job is held until the screen closed."""
    release = threading.Event()
    source, job = SlowSource(release), (SlowRenderJob(release) if render else None)
    app = make_app(source, job)
    closed: list[float] = []
    cpu: list[float] = []
    held: list[bool] = []
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        if render:
            await wait_for(pilot, lambda: app.screen.progress is not None, 10, "the render to show")
        driver = app._driver
        stop_mode = driver.stop_application_mode

        def stop_application_mode() -> None:
            closed.append(time.monotonic())
            cpu.append(time.process_time())
            held.append(source.closed_at is None and (job is None or job.stopped_at is None))
            release.set()
            stop_mode()

        driver.stop_application_mode = stop_application_mode  # type: ignore[method-assign]
        t0, c0 = time.monotonic(), time.process_time()
        await pilot.press("q")
        await wait_for(pilot, lambda: bool(closed), STOP_LIMIT, "the screen to close")
    assert held == [True], "the screen closed only after stopping what kubeview started"
    return cpu[0] - c0, closed[0] - t0, closed[0], app, source, job


@pytest.mark.parametrize("render", [False, True], ids=["cluster", "render running"])
@run_async
async def test_q_closes_the_screen_at_once_and_cleanup_finishes_after(render: bool) -> None:
    cpu, latency, closed_at, app, source, job = await quit_latency(render)
    print(f"q -> closed screen: {1000 * latency:.0f} ms, {1000 * cpu:.0f} ms of CPU (render={render})")
    # the work is bounded in CPU time, which a loaded machine does not stretch as it does wall time;
    # waiting on the cleanup is excluded by construction above (it is held until the screen closed)
    assert cpu < TARGET
    assert app.return_code == 0 and app._stop.is_set()
    said = app.finish_cleanup()  # what run_tui waits for before the process exits
    assert source.closed_at is not None and source.closed_at > closed_at  # stopped after the screen went
    if job is not None:
        assert job.stopped_at is not None and job.stopped_at > closed_at and said == "render stopped"


@pytest.mark.slow
def test_q_in_a_real_terminal_leaves_the_screen_at_once(tmp_path: Path) -> None:
    """`kubeview --local` in a pseudo-terminal: q to the alternate screen being left, then to exit.

    A driver that waits before leaving (Textual's: two ``select(0.1)``) can never do it in under
    TERMINAL_TARGET, while load can only add time: the best of up to ATTEMPTS runs is the figure
    (issue 23: one wall-clock reading on a busy machine is luck, not the driver's latency)."""
    best = None
    for attempt in range(ATTEMPTS):
        closed, exited, status = _quit_in_a_terminal(pexpect, tmp_path / str(attempt))
        print(f"q -> closed screen {1000 * closed:.0f} ms, -> exit {1000 * exited:.0f} ms")
        assert status == 0
        best = closed if best is None else min(best, closed)
        if best < TERMINAL_TARGET:
            break
    assert best is not None and best < TERMINAL_TARGET


ATTEMPTS = 3


def _quit_in_a_terminal(pexpect, cwd: Path) -> tuple[float, float, int | None]:  # noqa: ANN001
    cwd.mkdir()
    root = Path(__file__).resolve().parents[2]
    env = dict(os.environ, TERM="xterm-256color", PYTHONPATH=str(root))
    child = pexpect.spawn(sys.executable, ["-m", "kubeview", "--local"], env=env, dimensions=(40, 120),
                          timeout=60, cwd=str(cwd))
    try:
        child.expect("pending", timeout=120)  # the header is drawn
        time.sleep(3)
        while True:  # read what is there, so the match below is on what comes after q
            try:
                child.read_nonblocking(1 << 20, timeout=0.3)
            except pexpect.TIMEOUT:
                break
        t0 = time.monotonic()
        child.send("q")
        child.expect(r"\x1b\[\?1049l", timeout=10)
        closed = time.monotonic() - t0
        child.expect(pexpect.EOF, timeout=60)
        exited = time.monotonic() - t0
    finally:
        child.close(force=True)
    return closed, exited, child.exitstatus
