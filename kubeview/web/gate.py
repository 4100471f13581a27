"""Who may open a browser session, and how many at once: pure decisions for `kubeview serve`.

The server (kubeview/web/server.py) asks; nothing here does I/O, so each rule is tested directly.
"""

from __future__ import annotations

import hmac
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from kubeview.scheduling.listen_guard import is_loopback

TOKEN_COOKIE = "kubeview_token"


def token_matches(presented: str | None, expected: str | None) -> bool:
    """No token configured: everyone (loopback only, checked at start); otherwise an exact match,
    compared in constant time so the token cannot be guessed byte by byte from response times."""
    if expected is None:
        return True
    return presented is not None and hmac.compare_digest(presented.encode(), expected.encode())


def same_origin(origin: str | None, host: str | None) -> bool:
    """A websocket opened by another site's page (cross-site websocket hijacking) carries that site's
    Origin: refuse it, or any page the operator visits could drive the TUI on a loopback server. A
    client that sends no Origin is not a browser page and must still present the token."""
    if origin is None:
        return True
    return host is not None and host != "" and urlsplit(origin).netloc.lower() == host.lower()


def host_allowed(host_header: str | None, bound_host: str, *, token: bool) -> bool:
    """Without a token the server is on loopback, and only a loopback name may be asked for: a page
    of another site whose name was re-pointed at 127.0.0.1 (DNS rebinding) sends its own name as
    Host and is refused. With a token every name is fine: the token is the check."""
    if token:
        return True
    name = urlsplit(f"//{host_header or ''}").hostname or ""
    return is_loopback(name) or name == bound_host.lower()


@dataclass
class Sessions:
    """Open browser sessions (each a kubeview process) under a cap, with their ids for the log."""

    cap: int
    open: set[str] = field(default_factory=set)

    def admit(self, session_id: str) -> bool:
        """Count the session in, or False at the cap (nothing is started then)."""
        if len(self.open) >= self.cap:
            return False
        self.open.add(session_id)
        return True

    def release(self, session_id: str) -> None:
        self.open.discard(session_id)

    @property
    def full(self) -> bool:
        return len(self.open) >= self.cap

    def summary(self) -> str:
        return f"{len(self.open)} of {self.cap} open"
