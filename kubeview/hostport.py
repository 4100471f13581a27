"""HOST:PORT parsing shared by every command that listens (extender, local metrics)."""

from __future__ import annotations


def parse_listen(text: str, flag: str = "--listen") -> tuple[str, int]:
    """"HOST:PORT", "[::1]:PORT" or ":PORT" (127.0.0.1) -> (host, port); ValueError with the reason."""
    host, sep, port = text.rpartition(":")
    if not sep or not port.isdigit() or not 0 <= int(port) <= 65535:
        raise ValueError(f"{flag} must be HOST:PORT with a port from 0 to 65535, not {text!r}")
    return (host.strip("[]") or "127.0.0.1"), int(port)
