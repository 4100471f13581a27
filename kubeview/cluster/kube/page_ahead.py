"""The next list page asked for while this one decodes.

Paged, a list is request, wait, read, decode, then the next request: the API server sits idle while
kubeview decodes a page, and kubeview waits while the server encodes the next. The `continue` token
is in the list's metadata, which the API server writes before the items, so it can be read from a
page's first bytes (`peek_continue`) and the next page asked for at once (`Ahead`), on the other
core. The peeked token is checked against the decoded page's: a server that writes it elsewhere, or
a token that differs, only loses the head start (the page is then asked for as before).
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable

# `{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"…","continue":"…",…},"items":[`
_HEAD = re.compile(rb'\{(?:"(?:kind|apiVersion)":"[^"\\]*",)*"metadata":\{[^{}]*?"continue":"([^"\\]+)"')
PEEK_BYTES = 4096  # a token is a few hundred bytes; metadata holds nothing long before it


def peek_continue(data: bytes) -> str | None:
    """The `continue` token of a list page as the API server writes it, from its first bytes; None
    when the page has none there (the last page, or another writer's order)."""
    m = _HEAD.match(data, 0, PEEK_BYTES)
    return m.group(1).decode("ascii", "replace") if m else None


class Ahead:
    """One call on a daemon thread (a stop never waits for it); `result()` returns or raises its outcome."""

    def __init__(self, call: Callable[[], bytes], name: str = "kubeview-list-ahead") -> None:
        self._done = threading.Event()
        self._value: bytes = b""
        self._error: BaseException | None = None
        threading.Thread(target=self._run, args=(call,), name=name, daemon=True).start()

    def _run(self, call: Callable[[], bytes]) -> None:
        try:
            self._value = call()
        except BaseException as exc:  # handed to the list's thread, which knows what each one means
            self._error = exc
        finally:
            self._done.set()

    def result(self) -> bytes:
        self._done.wait()
        if self._error is not None:
            raise self._error
        return self._value
