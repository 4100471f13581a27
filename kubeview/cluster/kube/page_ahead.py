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
    if data[:4] == _PROTOBUF:
        return _proto_continue(data[4:PEEK_BYTES])
    m = _HEAD.match(data, 0, PEEK_BYTES)
    return m.group(1).decode("ascii", "replace") if m else None


# A protobuf page (pod_proto.py) is runtime.Unknown{1: typeMeta, 2: raw}, raw a PodList{1: ListMeta
# {1: selfLink, 2: resourceVersion, 3: continue, 4: remainingItemCount}, 2: items}: the fields in that
# order, so the token is within the first bytes too. The protobuf parser takes whole messages only,
# hence these few lines of wire format.
_PROTOBUF = b"k8s\x00"


def _varint(data: bytes, at: int) -> tuple[int, int]:
    value = shift = 0
    while at < len(data) and shift < 64:
        byte = data[at]
        value |= (byte & 0x7F) << shift
        at, shift = at + 1, shift + 7
        if byte < 0x80:
            return value, at
    raise IndexError("varint past the peeked bytes")


def _field(data: bytes, at: int, number: int) -> tuple[int, int] | None:
    """(start, end) of length-delimited field `number` at `at`, skipping the fields before it."""
    while at < len(data):
        key, at = _varint(data, at)
        if key & 7 == 0:
            _, at = _varint(data, at)
            continue
        if key & 7 != 2:
            return None
        size, at = _varint(data, at)
        if key >> 3 == number:
            return at, at + size
        at += size
    return None


def _proto_continue(data: bytes) -> str | None:
    try:
        raw = _field(data, 0, 2)  # Unknown.raw, past typeMeta
        meta = raw and _field(data, raw[0], 1)  # PodList.metadata
        token = meta and _field(data[:meta[1]], meta[0], 3)  # ListMeta.continue
    except IndexError:
        return None
    if not token or token[1] > len(data):
        return None
    return data[token[0]:token[1]].decode("ascii", "replace") or None  # "" on the last page


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
