"""kubeview serve's routes in-process (aiohttp's test server on KubeviewServer's real app): where the
token goes, and what needs it. The browser test (test_serve_browser.py) drives the whole thing."""

from __future__ import annotations

import asyncio

from aiohttp.test_utils import TestClient, TestServer

from kubeview.web.gate import TOKEN_COOKIE
from kubeview.web.server import KubeviewServer

TOKEN = "t0ken-for-routes"


def _routes(check) -> None:  # noqa: ANN001 - an async function of the client
    server = KubeviewServer("true", host="127.0.0.1", port=0, title="kubeview --demo", token=TOKEN,
                            max_sessions=1, idle_timeout=60)

    async def go() -> None:
        async with TestClient(TestServer(await server._make_app())) as client:
            await check(client)

    asyncio.run(go())


def test_a_token_in_the_url_becomes_an_httponly_cookie_and_leaves_the_url() -> None:
    async def check(client: TestClient) -> None:
        moved = await client.get(f"/?fontsize=20&token={TOKEN}", allow_redirects=False)
        assert moved.status == 303 and moved.headers["Location"] == "/?fontsize=20"
        cookie = moved.cookies[TOKEN_COOKIE]
        assert cookie.value == TOKEN and cookie["httponly"] and cookie["samesite"] == "Lax" and cookie["path"] == "/"
        page = await client.get("/?fontsize=20")  # the client keeps the cookie, as a browser does
        html = await page.text()
        assert page.status == 200 and f'data-session-websocket-url="ws://{page.url.host}:{page.url.port}/ws"' in html
        assert "kubeview --demo" in html

    _routes(check)


def test_everything_but_the_static_files_needs_the_token() -> None:
    async def check(client: TestClient) -> None:
        for path in ("/", "/ws", "/download/abc", f"/?token={TOKEN}x"):
            got = await client.get(path, allow_redirects=False)
            assert got.status == 401, path
        assert (await client.get("/static/js/textual.js")).status == 200

    _routes(check)
