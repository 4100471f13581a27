"""How the informer loops (watch.py) wait, time out, page and give up: one frozen dataclass."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass

from kubeview.cluster.source import SourceError


@dataclass(frozen=True)
class WatchSettings:
    """How the informer loops wait, time out and give up. Times in seconds."""

    error_backoffs: tuple[float, ...] = (1, 1, 2, 3, 5, 8, 13, 21)
    """Wait after the 1st, 2nd, ... consecutive connection failure; the last value repeats."""

    watch_timeout: tuple[int, int] = (300, 600)
    """`timeoutSeconds` of each watch, drawn uniformly from this range (as client-go does), so the
    five watches do not all end and reconnect at the same moment."""

    connect_timeout: float = 10.0
    """TCP/TLS connect timeout of every request, and the whole wait for discovery, the first request:
    a server that accepts the connection and never answers fails the start after this long.
    `KUBEVIEW_CONNECT_TIMEOUT` sets it (`from_env`)."""

    read_slack: float = 30.0
    """Read timeout beyond the watch's own timeout before a silent stream counts as broken."""

    list_timeout: float = 120.0
    """Read timeout of one list page (a 150,000-pod page takes a few seconds to serve)."""

    page_size: int = 5000
    """`limit` of each list page; 0 lists everything in one response."""

    retry_after_max: float = 60.0
    """Longest wait honoured from a 429's `Retry-After`; also the wait when the header is missing is 1 s."""

    give_up_before_sync: bool = True
    """If the very first list of a kind cannot connect, fail (SourceError) instead of retrying:
    a wrong server address should be one clear line, not a spinner."""

    @classmethod
    def from_env(cls, environ: Mapping[str, str] = os.environ) -> WatchSettings:
        """The defaults, with `connect_timeout` from `KUBEVIEW_CONNECT_TIMEOUT` (seconds) when set;
        SourceError (exit 1, one line) for a value that is not a positive number."""
        raw = environ.get("KUBEVIEW_CONNECT_TIMEOUT", "").strip()
        if not raw:
            return cls()
        try:
            seconds = float(raw)
        except ValueError:
            seconds = 0.0
        if not 0 < seconds < float("inf"):
            raise SourceError(f"KUBEVIEW_CONNECT_TIMEOUT must be a number of seconds above 0, not {raw!r}.")
        return cls(connect_timeout=seconds)

    def backoff(self, failures: int) -> float:
        """Wait before retry number `failures` (1-based)."""
        return self.error_backoffs[min(failures, len(self.error_backoffs)) - 1] if self.error_backoffs else 0.0
