"""`kubeview serve -- --demo` in Debian's headless Chromium (issue 30 item 1): the real server, the
real TUI process per session, the real browser; the page's text is the terminal's (serving.py)."""

from __future__ import annotations

import base64
import http.client
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import psutil
import pytest

from .serving import CHROMIUM, Served, readable_terminal, serve, wait_text

pytestmark = pytest.mark.slow
if not CHROMIUM.exists():
    pytest.skip("no /usr/bin/chromium: apt-get install chromium (.ci/run does)", allow_module_level=True)
sync_api = pytest.importorskip("playwright.sync_api")

TOKEN = "s3cret-0123456789abcdef"


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=str(CHROMIUM), args=["--no-sandbox"])
        yield b
        b.close()


@pytest.fixture(scope="module")
def guarded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """With a token and one session at most."""
    tmp = tmp_path_factory.mktemp("serve")
    (tmp / "token").write_text(TOKEN + "\n")
    served = serve(tmp, "--token-file", str(tmp / "token"), "--max-sessions", "1")
    yield served
    served.stop()


def _ws_status(url: str, **headers: str) -> int:
    """The HTTP status a websocket handshake to /ws gets (101 when a session was opened)."""
    parts = urlsplit(url)
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=60)
    try:
        conn.request("GET", "/ws", headers={"Connection": "Upgrade", "Upgrade": "websocket",
                                            "Sec-WebSocket-Version": "13",
                                            "Sec-WebSocket-Key": base64.b64encode(b"0123456789abcdef").decode(),
                                            **headers})
        return conn.getresponse().status
    finally:
        conn.close()


def test_a_missing_or_wrong_token_gets_no_tui(browser, guarded: Served) -> None:  # noqa: ANN001
    for url in (guarded.url, guarded.url + "?token=wrong"):
        page = browser.new_page()
        response = page.goto(url)
        assert response.status == 401
        assert "needs its token" in page.inner_text("body")
        assert page.locator(".xterm").count() == 0
        page.close()
    assert _ws_status(guarded.url) == 401
    assert _ws_status(guarded.url, Cookie="kubeview_token=wrong") == 401
    assert " started for " not in guarded.log()  # no process was started


def test_the_tui_in_chromium_nodes_then_pods_and_the_cap(browser, guarded: Served) -> None:  # noqa: ANN001
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    readable_terminal(page)
    page.goto(guarded.url + "?token=" + TOKEN, wait_until="domcontentloaded")
    assert "token" not in page.url  # the token moved into an HttpOnly cookie
    wait_text(page, "gpu-node-1")
    # the terminal paints in pieces: the rows can be there before the header line (drift run, c7eaa9a)
    text = wait_text(page, "Nodes")
    assert "GPU req/alloc" in text and "gpu-node-1" in text
    guarded.wait_log("session", 1)
    assert "started for 127.0.0.1 (1 of 1 open)" in guarded.log()

    # the cap: a second browser with the token gets a 503 page, and a websocket nothing
    second = browser.new_page()
    response = second.goto(guarded.url + "?token=" + TOKEN)
    assert response.status == 503 and "1 of 1 open" in second.inner_text("body")
    assert _ws_status(guarded.url, Cookie=f"kubeview_token={TOKEN}") == 503
    assert guarded.log().count(" started for ") == 1
    second.close()

    page.locator(".xterm-helper-textarea").focus()
    page.keyboard.type(":")
    wait_text(page, "(Tab completes)")  # the prompt is open, as a person sees before typing on
    page.keyboard.type("pods")
    page.keyboard.press("Enter")
    text = wait_text(page, "NAMESPACE")
    assert text.startswith("Pods") and "Pending" in text and "gpu-node-1" in text

    page.close()  # the browser leaves: the session's kubeview stops, the slot is free again
    log = guarded.wait_log(" ended after ")
    assert "closed by the browser (0 of 1 open)" in log


def test_cross_site_websockets_are_refused(guarded: Served) -> None:
    assert _ws_status(guarded.url, Origin="http://evil.example", Cookie=f"kubeview_token={TOKEN}") == 403


def test_idle_sessions_close_and_loopback_names_only(browser, tmp_path: Path) -> None:  # noqa: ANN001
    served = serve(tmp_path, "--idle-timeout", "3")
    try:
        page = browser.new_page()
        readable_terminal(page)
        page.goto(served.url, wait_until="domcontentloaded")
        log = served.wait_log(" ended after ")
        assert "idle for 3 s" in log
        page.wait_for_selector("body.-closed", timeout=60_000)  # textual-serve's "Session ended." dialog
        assert "Session ended." in page.inner_text("body")
        page.close()
        # no token: a name that is not loopback (DNS rebinding) is refused before anything starts
        assert _ws_status(served.url, Host="evil.example") == 403
        assert served.log().count(" started for ") == 1
    finally:
        assert served.stop() == 0


def test_stopping_the_server_stops_the_open_sessions(browser, tmp_path: Path) -> None:  # noqa: ANN001
    served = serve(tmp_path)
    try:
        page = browser.new_page()
        readable_terminal(page)
        page.goto(served.url, wait_until="domcontentloaded")
        wait_text(page, "gpu-node-1")
        started = psutil.Process(served.proc.pid).children(recursive=True)
        assert started  # the session's kubeview and the demo cluster's pods
    finally:
        assert served.stop() == 0
    assert "server stopping" in served.log()
    assert not [p for p in started if p.is_running() and p.status() != psutil.STATUS_ZOMBIE]


def test_a_session_that_fails_says_why_in_the_browser(browser, tmp_path: Path) -> None:  # noqa: ANN001
    """Issue 42 item 4: the page said only "Session ended. [Restart]". The kubeconfig is checked when
    the server starts and removed after, so the session's kubeview fails as it starts (exit 2)."""
    kubeconfig = tmp_path / "kc"
    kubeconfig.write_text("apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: 'https://127.0.0.1:1'}}]\n"
                          "users: [{name: u, user: {token: x}}]\ncontexts: [{name: lab, context: {cluster: c, user: u}}]\n"
                          "current-context: lab\n")
    served = serve(tmp_path, app=("--kubeconfig", str(kubeconfig)))
    try:
        kubeconfig.unlink()
        page = browser.new_page()
        page.goto(served.url, wait_until="domcontentloaded")
        page.wait_for_selector("body.-closed", timeout=60_000)
        why = f"No kubeconfig at {kubeconfig}: pass an existing file with --kubeconfig or set KUBECONFIG."
        page.wait_for_function("t => document.querySelector('.closed-dialog').innerText.includes(t)", arg=why,
                               timeout=10_000)
        assert f"Session ended: kubeview: {why}" in page.inner_text(".closed-dialog")
        assert f"kubeview exited 2: kubeview: {why}" in served.wait_log(" ended after ")
        page.close()
    finally:
        assert served.stop() == 0
