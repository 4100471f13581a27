"""A real `kubeview serve` process and a headless Chromium page on it, for tests/web and the screenshots.

xterm.js draws the terminal on a canvas, so the page has no text to read. Turning on xterm's screen
reader mode (its default option flipped in the script the page loads, in this browser only) makes
xterm keep an accessibility tree of the terminal's rows in the DOM: the page's text is then what the
terminal shows. Chromium is Debian's (`apt-get install chromium`), never one Playwright downloads.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

CHROMIUM = Path("/usr/bin/chromium")
XTERM_DEFAULT = "screenReaderMode:!1"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class Served:
    """`kubeview serve` on 127.0.0.1:port, its log (stderr) in a file."""

    proc: subprocess.Popen[bytes]
    port: int
    log_path: Path

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/"

    def log(self) -> str:
        return self.log_path.read_text()

    def wait_log(self, text: str, count: int = 1, timeout: float = 120.0) -> str:
        """The log once `text` appears in it `count` times (AssertionError with the log if never)."""
        deadline = time.monotonic() + timeout
        while self.log().count(text) < count:
            assert self.proc.poll() is None, f"kubeview serve exited {self.proc.returncode}:\n{self.log()}"
            assert time.monotonic() < deadline, f"no {text!r} x{count} in {timeout:g} s:\n{self.log()}"
            time.sleep(0.1)
        return self.log()

    def stop(self) -> int:
        """SIGTERM, as a service manager would; the exit code."""
        if self.proc.poll() is None:
            self.proc.terminate()
        return self.proc.wait(timeout=120)


def serve(tmp: Path, *options: str, app: tuple[str, ...] = ("--demo",)) -> Served:
    """Start `kubeview serve` and wait until it listens."""
    port = free_port()
    log_path = tmp / f"serve-{port}.log"
    env = {**os.environ, "XDG_STATE_HOME": str(tmp / "state")}
    with open(log_path, "wb") as log:
        proc = subprocess.Popen([sys.executable, "-m", "kubeview", "serve", "--port", str(port), *options, "--", *app],
                                stdout=log, stderr=subprocess.STDOUT, env=env, start_new_session=True)
    served = Served(proc, port, log_path)
    served.wait_log("serving `kubeview", timeout=60)
    return served


def readable_terminal(page: Any) -> None:
    """Route the page's textual.js through a copy with xterm's screen reader mode on (see above)."""

    def patch(route: Any) -> None:
        response = route.fetch()
        body = response.text()
        assert XTERM_DEFAULT in body, "textual-serve's xterm.js changed: find its screenReaderMode default"
        route.fulfill(response=response, body=body.replace(XTERM_DEFAULT, "screenReaderMode:!0"))

    page.route("**/static/js/textual.js", patch)


# The terminal's rows as xterm's accessibility tree holds them now, or the page's text before the
# terminal exists ("Session ended."). Not the whole body: xterm's live region beside the tree keeps
# text announced earlier, which the screen no longer shows.
SCREEN_TEXT = """() => {
    const rows = document.querySelector('.xterm-accessibility-tree');
    return rows && rows.innerText.trim() ? rows.innerText : document.body.innerText;
}"""


def page_text(page: Any) -> str:
    return page.evaluate(SCREEN_TEXT)


def wait_text(page: Any, text: str, timeout: float = 120.0) -> str:
    """The screen's text once it contains `text`."""
    try:
        page.wait_for_function(f"t => ({SCREEN_TEXT})().includes(t)", arg=text, timeout=timeout * 1000)
    except Exception as exc:  # noqa: BLE001 - Playwright's TimeoutError: say what the screen showed
        raise AssertionError(f"{text!r} never on the screen after {timeout:g} s:\n{page_text(page)}") from exc
    return page_text(page)
