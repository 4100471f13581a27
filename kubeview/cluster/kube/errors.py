"""Kubernetes failures as one sentence a user can act on.

The API answers errors with a `Status` body (`message`, `reason`, `details.causes`); the network
fails with urllib3 exceptions nested three deep. Both end here, so the TUI, `snapshot` and actions
say the same thing for the same failure: what went wrong, and what to do about it.
"""

from __future__ import annotations

import json
import re
import socket
import ssl

import urllib3.exceptions

NETWORK_ERRORS = (urllib3.exceptions.HTTPError, OSError)
"""What the client raises when the wire fails (refused, timed out, reset, TLS) rather than the API answering."""


def parse_status(body: str | bytes | None) -> dict:
    """The Status object of an error response ({} when the body is not one)."""
    if not body:
        return {}
    try:
        data = json.loads(body)
    except (ValueError, TypeError):
        return {}
    return data if isinstance(data, dict) else {}


def _message(status: dict, fallback: str) -> str:
    return (status.get("message") or fallback).strip().rstrip(".")


def _causes(status: dict) -> str:
    causes = (status.get("details") or {}).get("causes") or []
    parts = [f"{c['field']}: {c.get('message', '')}".rstrip(": ") if c.get("field") else c.get("message", "")
             for c in causes]
    return "; ".join(p for p in parts if p)


def retry_after(headers: object) -> float | None:
    """Seconds from a Retry-After header (delta-seconds form), None if absent or unreadable."""
    if headers is None:
        return None
    try:
        value = headers.get("Retry-After")  # type: ignore[attr-defined]
    except AttributeError:
        return None
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        return None


def describe_api_error(status_code: int, body: str | bytes | None, action: str, *,
                       retry_after_s: float | None = None) -> str:
    """One sentence for an HTTP error answering `action` ("Scaling ReplicaSet default/consumer to 6")."""
    st = parse_status(body)
    msg = _message(st, f"HTTP {status_code}")
    if status_code == 401:
        return (f"{action} failed: the API server rejected the credentials (401 Unauthorized: an expired or "
                "revoked token?); log in again or refresh the kubeconfig.")
    if status_code == 403:
        return f"{action} was forbidden (403): {msg}; ask a cluster admin for access."
    if status_code == 404:
        return f"{action} failed: {msg} (404 Not Found); it may have been deleted or renamed."
    if status_code == 409:
        return f"{action} failed: {msg} (409 Conflict); refresh and try again."
    if status_code == 422:
        return f"{action} was rejected as invalid (422): {_causes(st) or msg}."
    if status_code == 429:
        wait = f"in {retry_after_s:g} seconds" if retry_after_s is not None else "in a moment"
        return f"{action} was throttled by the API server (429 Too Many Requests); try again {wait}."
    if 500 <= status_code <= 599:
        return f"{action} failed: the API server had an error ({status_code}): {msg}; try again."
    reason = st.get("reason") or "error"
    return f"{action} failed: {msg} ({status_code} {reason})."


def _chain(exc: BaseException) -> list[BaseException]:
    seen: list[BaseException] = []
    todo: list[BaseException | None] = [exc]
    while todo:
        e = todo.pop()
        if e is None or any(e is s for s in seen):
            continue
        seen.append(e)
        todo.extend([getattr(e, "reason", None) if isinstance(getattr(e, "reason", None), BaseException) else None,
                     e.__cause__, e.__context__])
        todo.extend(a for a in getattr(e, "args", ()) if isinstance(a, BaseException))
    return seen


def connection_reason(exc: BaseException) -> str:
    """A short phrase for a network failure: "connection refused", "host name not found"..."""
    chain = _chain(exc)
    text = " ".join(str(e) for e in chain)
    if any(isinstance(e, ConnectionRefusedError) for e in chain) or "Connection refused" in text:
        return "connection refused"
    if any(isinstance(e, socket.gaierror) for e in chain) or "Name or service not known" in text \
            or "name resolution" in text or "nodename nor servname" in text:
        return "host name not found"
    if any(isinstance(e, urllib3.exceptions.TimeoutError | TimeoutError | socket.timeout) for e in chain) \
            or "timed out" in text:
        return "timed out"
    if any(isinstance(e, ConnectionResetError) for e in chain) or "reset by peer" in text:
        return "connection reset"
    if any(isinstance(e, urllib3.exceptions.ProtocolError) for e in chain):
        return "connection broken"
    if "No route to host" in text:
        return "no route to host"
    return str(chain[-1]) if chain else str(exc)


def is_tls_error(exc: BaseException) -> bool:
    return any(isinstance(e, ssl.SSLError | urllib3.exceptions.SSLError) for e in _chain(exc)) \
        or "SSLError" in str(exc) or "CERTIFICATE_VERIFY_FAILED" in str(exc)


def unanswered_after(exc: BaseException) -> float | None:
    """Seconds a server that accepted the TCP connection was waited for before giving up (a TLS
    handshake never finished, or no response headers came), or None when `exc` is no such timeout.

    urllib3 raises `ReadTimeoutError` for both (the handshake runs under the connect timeout) and
    names the timeout it waited in its fixed message "Read timed out. (read timeout=10)"; 0.0 when
    a message does not say."""
    for e in _chain(exc):
        if isinstance(e, urllib3.exceptions.ReadTimeoutError):
            found = re.search(r"read timeout=([0-9.]+)", str(e))
            return float(found.group(1)) if found else 0.0
    return None


def describe_connection_error(exc: BaseException, server: str, action: str = "") -> str:
    """One sentence for a network failure talking to `server`."""
    waited = unanswered_after(exc)
    if waited is not None:
        within = f"within {waited:g} s" if waited else "in time"
        lead = f"{action} failed: the" if action else "The"
        return (f"{lead} API server at {server} accepted the connection but did not answer {within}; check "
                "that the cluster is healthy and the kubeconfig's server address is right "
                "(KUBEVIEW_CONNECT_TIMEOUT sets the wait).")
    if is_tls_error(exc):
        detail = next((str(e) for e in _chain(exc) if isinstance(e, ssl.SSLError)), "certificate rejected")
        lead = f"{action} failed: the" if action else "The"
        return (f"{lead} TLS handshake with {server} failed ({detail}); "
                "check the kubeconfig's certificate-authority and server address.")
    lead = f"{action} failed: cannot reach" if action else "Cannot reach"
    return (f"{lead} the API server at {server} ({connection_reason(exc)}); check that the cluster is running "
            "and the kubeconfig's server address is right.")


def describe_call_error(exc: BaseException, server: str, action: str) -> str | None:
    """One sentence for what a client call raised (an ApiException or a network error), or None for
    anything else, which the caller lets propagate."""
    status = getattr(exc, "status", None)
    if hasattr(exc, "body") and status is not None:  # kubernetes.client ApiException (imported lazily)
        if not int(status or 0):
            return describe_connection_error(ConnectionError(getattr(exc, "reason", "")), server, action)
        return describe_api_error(int(status), getattr(exc, "body", None), action)
    if isinstance(exc, urllib3.exceptions.HTTPError | OSError):
        return describe_connection_error(exc, server, action)
    return None
