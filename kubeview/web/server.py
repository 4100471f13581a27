"""The web server of `kubeview serve`: textual-serve's Server, with what it lacks for a shared TUI.

textual-serve starts one app process per browser websocket and relays the terminal. Added here: a
token (in the URL once, then an HttpOnly cookie) checked before any page or process; same-origin
websockets only; a cap on open sessions; sessions without input for `idle_timeout` closed; a
process that exits ends its session, and one that failed says why in the browser's "Session ended"
dialog (its last line on stderr, sent as a `kubeview_ended` message the page's SESSION_ENDED_JS
shows); one log line per session start and end. The rules themselves are pure (kubeview/web/gate.py).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import signal
import sys
import time
import uuid
from typing import Any
from urllib.parse import urlencode

import aiohttp_jinja2
from aiohttp import WSCloseCode, web
from textual_serve.app_service import AppService
from textual_serve.server import Server, to_int

from kubeview.web.gate import TOKEN_COOKIE, Sessions, host_allowed, same_origin, token_matches

log = logging.getLogger("kubeview.serve")
STOP_TIMEOUT = 30.0  # seconds a session's kubeview gets to stop its cluster after "quit", then killed
ENDED = "kubeview_ended"  # the websocket message (["kubeview_ended", why]) of a session that failed
# textual-serve's page shows "Session ended." for any end; this puts a failed session's reason there
SESSION_ENDED_JS = """<script>
(() => {  // kubeview serve: textual.js opens the session's websocket; listen on it for why it ended
  const Native = window.WebSocket;
  window.WebSocket = class extends Native {
    constructor(...args) {
      super(...args);
      this.addEventListener("message", (e) => {
        if (typeof e.data !== "string") return;
        const [kind, why] = JSON.parse(e.data);
        if (kind === "ENDED") document.querySelector(".closed-dialog .message").textContent = why;
      });
    }
  };
})();
</script>
""".replace("ENDED", ENDED)


class _StderrTail:
    """The session process's stderr as textual-serve reads it, keeping the last 4 KiB read."""

    def __init__(self, stream: asyncio.StreamReader) -> None:
        self.stream = stream
        self.tail = b""

    async def read(self, n: int = -1) -> bytes:
        data = await self.stream.read(n)
        self.tail = (self.tail + data)[-4096:]
        return data

    def last_line(self) -> str:
        lines = [line.strip() for line in self.tail.decode("utf-8", "replace").splitlines() if line.strip()]
        return lines[-1] if lines else ""


class _Session(AppService):
    """One browser session's kubeview process: notes the user's last input, and closes the browser's
    websocket when the process ends for any reason (textual-serve only does so on a clean exit)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.last_input = time.monotonic()
        self.ended_by: str | None = None  # why the session ended, for its log line
        self.stderr: _StderrTail | None = None

    async def _open_app_process(self, width: int = 80, height: int = 24) -> asyncio.subprocess.Process:
        process = await super()._open_app_process(width, height)
        if process.stderr is not None:
            self.stderr = _StderrTail(process.stderr)
            process.stderr = self.stderr  # type: ignore[assignment]  # a stand-in: read() is all textual-serve calls
        return process

    async def send_bytes(self, data: bytes) -> bool:
        self.last_input = time.monotonic()
        return await super().send_bytes(data)

    async def set_terminal_size(self, width: int, height: int) -> None:
        self.last_input = time.monotonic()
        await super().set_terminal_size(width, height)

    async def run(self) -> None:
        await super().run()
        code = await self._process.wait() if self._process is not None else None
        why = self.stderr.last_line() if self.stderr is not None and code else ""
        if why:  # it failed: say why where the browser says "Session ended."
            self.ended_by = self.ended_by or f"kubeview exited {code}: {why}"
            with contextlib.suppress(ConnectionError, RuntimeError):  # the browser may be gone already
                await self.remote_write_str(json.dumps([ENDED, f"Session ended: {why}"]))
        self.ended_by = self.ended_by or "kubeview exited"
        await self.remote_close()

    async def stop(self) -> None:
        """Ask the app to quit (it stops what it started); kill it if it has not within STOP_TIMEOUT."""
        try:
            await asyncio.wait_for(asyncio.shield(super().stop()), STOP_TIMEOUT)
        except TimeoutError:
            if self._process is not None and self._process.returncode is None:
                self._process.kill()
                await self._process.wait()


class KubeviewServer(Server):
    """textual-serve's Server (its page, websocket protocol and static files) with the checks above."""

    def __init__(self, command: str, *, host: str, port: int, title: str, token: str | None,
                 max_sessions: int, idle_timeout: float) -> None:
        super().__init__(command, host=host, port=port, title=title)
        self.token = token
        self.sessions = Sessions(max_sessions)
        self.idle_timeout = idle_timeout
        self.sockets: dict[str, web.WebSocketResponse] = {}
        self.stopping = False

    def initialize_logging(self) -> None:
        logging.basicConfig(level=logging.INFO, stream=sys.stderr,
                            format="%(asctime)s %(name)s: %(message)s", datefmt="%Y-%m-%dT%H:%M:%S")

    async def _make_app(self) -> web.Application:
        app = await super()._make_app()
        app.middlewares.append(self._guard)
        return app

    @web.middleware
    async def _guard(self, request: web.Request, handler: Any) -> web.StreamResponse:
        """Every route but the library's static files needs the token; a token in the URL becomes a
        cookie and leaves the URL (it would otherwise stay in the address bar and history)."""
        if request.path.startswith("/static/"):
            return await handler(request)
        if not host_allowed(request.host, self.host, token=self.token is not None):
            raise web.HTTPForbidden(text=f"kubeview serve: this server answers to {self.host}, "
                                         f"not {request.host}\n")
        presented = request.query.get("token") or request.cookies.get(TOKEN_COOKIE)
        if not token_matches(presented, self.token):
            raise web.HTTPUnauthorized(text="kubeview serve: this server needs its token: open "
                                            "/?token=TOKEN with the token in the file given to --token-file\n")
        if self.token is not None and "token" in request.query:
            rest = {k: v for k, v in request.query.items() if k != "token"}
            moved = web.HTTPSeeOther(request.path + (f"?{urlencode(rest)}" if rest else ""))
            moved.set_cookie(TOKEN_COOKIE, self.token, httponly=True, samesite="Lax", path="/",
                             secure=request.secure)
            raise moved
        return await handler(request)

    async def handle_index(self, request: web.Request) -> web.StreamResponse:
        """textual-serve's page, its URLs taken from the request (so any address that reached the
        server works), or 503 at the session cap rather than a page whose session would be refused."""
        if self.sessions.full:
            raise web.HTTPServiceUnavailable(text=f"kubeview serve: {self.sessions.summary()} "
                                                  "(--max-sessions); try again when one ends\n")
        base = f"{request.scheme}://{request.host}"
        ws = ("wss" if request.secure else "ws") + f"://{request.host}/ws"
        context = {
            "font_size": to_int(request.query.get("fontsize", "16"), 16),
            "app_websocket_url": ws,
            "config": {"static": {"url": f"{base}/static/"}},
            "application": {"name": self.title},
        }
        page = aiohttp_jinja2.render_template("app_index.html", request, context)
        page.text = (page.text or "").replace("</head>", SESSION_ENDED_JS + "</head>", 1)
        return page

    async def handle_websocket(self, request: web.Request) -> web.WebSocketResponse:
        """One session: admitted under the cap, a kubeview process started, the terminal relayed
        until the browser leaves, the process exits or no input came for `idle_timeout`."""
        if not same_origin(request.headers.get("Origin"), request.host):
            raise web.HTTPForbidden(text="kubeview serve: a websocket from another site's page\n")
        sid = uuid.uuid4().hex[:8]
        if not self.sessions.admit(sid):
            raise web.HTTPServiceUnavailable(text=f"kubeview serve: {self.sessions.summary()} (--max-sessions)\n")
        started = time.monotonic()
        log.info("session %s started for %s (%s)", sid, request.remote, self.sessions.summary())
        websocket = web.WebSocketResponse(heartbeat=15)
        session: _Session | None = None
        try:
            await websocket.prepare(request)
            self.sockets[sid] = websocket
            session = _Session(self.command, write_bytes=websocket.send_bytes, write_str=websocket.send_str,
                               close=websocket.close, download_manager=self.download_manager, debug=self.debug)
            await session.start(to_int(request.query.get("width", "80"), 80),
                                to_int(request.query.get("height", "24"), 24))
            watchdog = asyncio.create_task(self._close_when_idle(websocket, session))
            try:
                await self._process_messages(websocket, session)
                session.ended_by = session.ended_by or ("server stopping" if self.stopping else "closed by the browser")
            finally:
                watchdog.cancel()
        except asyncio.CancelledError:
            if session is not None:
                session.ended_by = "server stopping"
        except Exception as exc:  # noqa: BLE001 - one session's failure is logged, the server goes on
            log.error("session %s failed: %s", sid, exc)
        finally:
            if session is not None:
                await session.stop()
            await websocket.close()
            self.sockets.pop(sid, None)
            self.sessions.release(sid)
            ended_by = (session.ended_by if session is not None else None) or "never started"
            log.info("session %s ended after %.0f s: %s (%s)", sid, time.monotonic() - started, ended_by,
                     self.sessions.summary())
        return websocket

    async def _close_when_idle(self, websocket: web.WebSocketResponse, session: _Session) -> None:
        while True:
            left = session.last_input + self.idle_timeout - time.monotonic()
            if left <= 0:
                session.ended_by = f"idle for {self.idle_timeout:g} s"
                await websocket.close(code=WSCloseCode.GOING_AWAY, message=b"idle")
                return
            await asyncio.sleep(left)

    async def on_startup(self, app: web.Application) -> None:
        """textual-serve prints a banner here; kubeview logs one line once it listens (serve())."""

    async def on_shutdown(self, app: web.Application) -> None:
        """Close every session's websocket, so each handler stops its kubeview before the server goes."""
        self.stopping = True
        for websocket in list(self.sockets.values()):
            await websocket.close(code=WSCloseCode.GOING_AWAY, message=b"server stopping")

    async def run(self) -> None:
        """Listen (OSError if the address is taken), log the URL, serve until SIGINT or SIGTERM."""
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, stop.set)
        runner = web.AppRunner(await self._make_app(), access_log=None, handle_signals=False)
        await runner.setup()
        try:
            await web.TCPSite(runner, self.host, self.port).start()
            shown = f"[{self.host}]" if ":" in self.host else self.host
            token = "?token=TOKEN (the token in --token-file)" if self.token else ""
            cap = self.sessions.cap
            log.info("serving `%s` on http://%s:%d/%s, at most %d session%s; Ctrl+C stops", self.title,
                     shown, self.port, token, cap, "" if cap == 1 else "s")
            await stop.wait()
        finally:
            await runner.cleanup()
