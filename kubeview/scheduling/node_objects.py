"""Full Node objects from extender requests, decoded once per distinct encoding.

With `nodeCacheCapable: false` kube-scheduler sends every candidate Node in full on every call (~4 KB
each with managedFields and images), and decoding 500 of them with `json` is ~30 ms a call. It sends
the bytes of its own node cache, which stay the same until a node changes, so `NodeObjects` keeps the
NodeView of every item encoding it has met, keyed by those bytes. The usual call (Go's layout, every
Node met before) is read without a scan: each item is recognised by its first 256 bytes and a compare
in place. Otherwise a compiled scan (`node_list_kernels.py`) finds each item's span, items are looked
up by their bytes, and only new or changed Nodes are decoded. The spans also let a filter reply echo
each passing Node's own bytes.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass
from itertools import compress

import numpy as np

from kubeview.model.views import NodeView
from kubeview.scheduling.errors import ProtocolError
from kubeview.scheduling.name_table import kernels

MIN_KEPT = 4096  # encodings kept at least; beyond, those of the latest call and up to 3x its size


@dataclass(frozen=True, slots=True)
class NodeItems:
    """A request's `Nodes.items` as read: each item's view, and its own bytes (`source[a:b]` per span)."""

    views: list[NodeView]
    source: bytes
    spans: np.ndarray  # int64 (N, 2)

    @property
    def names(self) -> list[str]:
        return [v.name for v in self.views]

    @property
    def members(self) -> list[bytes]:
        return [self.source[a:b] for a, b in self.spans.tolist()]

    def json_of(self, keep: list[bool] | None = None) -> bytes:
        """`{"metadata":{},"items":[...]}` of the items (those where `keep` is true), in their own bytes
        (copied once, from the request)."""
        spans = self.spans.tolist() if keep is None else list(compress(self.spans.tolist(), keep))
        source = memoryview(self.source)
        parts: list = [b'{"metadata":{},"items":[']
        for a, b in spans:
            parts += (source[a:b], b",")
        parts[-1:] = [b"]}"] if spans else [parts[-1], b"]}"]
        return b"".join(parts)

    @classmethod
    def from_objects(cls, items: object) -> NodeItems:
        """From a decoded NodeList's `items` (the general path, for JSON the scanner leaves to json)."""
        if not isinstance(items, list):
            raise ProtocolError("Nodes must be a NodeList whose items have metadata.name")
        views = [view_of(obj) for obj in items]
        encoded = [json.dumps(obj, separators=(",", ":")).encode() for obj in items]
        return cls(views, b"".join(encoded), _spans([len(e) for e in encoded]))


def _spans(lengths: list[int]) -> np.ndarray:
    """(start, end) of consecutive pieces of these lengths."""
    offsets = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    return np.stack([offsets[:-1], offsets[1:]], axis=1)


def view_of(obj: object) -> NodeView:
    """The NodeView of one decoded item; ProtocolError says what is wrong with it."""
    if not isinstance(obj, dict) or not isinstance(obj.get("metadata"), dict) or "name" not in obj["metadata"]:
        raise ProtocolError("Nodes must be a NodeList whose items have metadata.name")
    try:
        return NodeView.from_api(obj)
    except (ValueError, TypeError, AttributeError, KeyError) as exc:
        raise ProtocolError(f"a Node in Nodes cannot be read: {exc}") from None


GO_HEAD = b'{"metadata":{},"items":['  # a NodeList as kube-scheduler's Go encoder writes it
KEY = 256  # bytes that key an item among the known ones (a Node's name and uid come early)


class NodeObjects:
    """Views by item bytes, shared by every call of one extender (thread-safe)."""

    def __init__(self) -> None:
        self._views: dict[bytes, NodeView] = {}
        self._by_key: dict[bytes, tuple[bytes, NodeView]] = {}  # first KEY bytes -> the latest such item
        self._lock = threading.Lock()
        self.decoded = 0  # items decoded so far (the rest were found by their bytes)

    def read(self, body: bytes, start: int) -> tuple[NodeItems, int] | None:
        """The NodeList at `body[start]` (its items and the offset just past it), or None when the
        compiled scan does not take it (decode it with json, then `NodeItems.from_objects`)."""
        if body[start:start + 1] != b"{":
            return None  # `null` in a NodeNames request (the hot path): nothing to scan
        known = self._known_only(body, start)
        if known is not None:
            return known
        if kernels() is None:
            return None
        from kubeview.scheduling import node_list_kernels as k

        buf = np.frombuffer(body, dtype=np.uint8)
        most = (len(body) - start) // 3 + 1  # an item takes 3 bytes at least ("{}," ); pages untouched cost nothing
        spans = np.empty((2, most), dtype=np.int64)
        count, end = k.scan_items(buf, start, _ITEMS, spans[0], spans[1], k._ESCAPES, k._HEX, k._TRUE, k._FALSE,
                                  k._NULL)
        if count < 0:
            return None
        spans = np.ascontiguousarray(spans[:, :count].T)
        members = [body[a:b] for a, b in spans.tolist()]
        return NodeItems(self.views(members), body, spans), int(end)

    def _known_only(self, body: bytes, start: int) -> tuple[NodeItems, int] | None:
        """The usual call: Go's layout, every item one met before. Each item is recognised by its
        first KEY bytes and a compare of its own bytes in place (no scan, no hash of the whole item,
        no copy), and as it was a whole valid object when met, its end is its length away. None as
        soon as anything differs (then everything is scanned)."""
        if not body.startswith(GO_HEAD, start):
            return None
        pos = start + len(GO_HEAD)
        if body.startswith(b"]}", pos):
            return NodeItems([], body, np.zeros((0, 2), dtype=np.int64)), pos + 2
        table = self._by_key
        views: list[NodeView] = []
        bounds: list[int] = []
        size = len(body)
        while True:
            hit = table.get(body[pos:pos + KEY])
            if hit is None or not body.startswith(hit[0], pos):
                return None
            end = pos + len(hit[0])
            views.append(hit[1])
            bounds += (pos, end)
            if end < size and body[end] == 44:  # ,
                pos = end + 1
            elif body.startswith(b"]}", end):
                return NodeItems(views, body, np.array(bounds, dtype=np.int64).reshape(-1, 2)), end + 2
            else:
                return None

    def views(self, members: list[bytes]) -> list[NodeView]:
        """The view of each item: found by its bytes, else decoded (and remembered)."""
        with self._lock:
            known = self._views
            views = list(map(known.get, members))
            for i in [i for i, v in enumerate(views) if v is None]:
                member = members[i]
                view = known.get(member)  # the same Node twice in one list
                if view is None:
                    try:
                        obj = json.loads(member)
                    except RecursionError:
                        raise ProtocolError("request body is not valid JSON: nested too deeply") from None
                    except ValueError as exc:  # the scan and json differ only on an integer's digits
                        raise ProtocolError(f"request body is not valid JSON: {exc}") from None
                    view = view_of(obj)
                    known[member] = view
                    if len(member) > KEY:
                        self._by_key[member[:KEY]] = (member, view)
                    self.decoded += 1
                views[i] = view
            if len(known) > max(MIN_KEPT, 3 * len(members)):  # changed Nodes' old encodings go
                self._views = dict(zip(members, views, strict=True))
                self._by_key = {m[:KEY]: (m, v) for m, v in self._views.items() if len(m) > KEY}
        return views


_ITEMS = np.frombuffer(b"items", dtype=np.uint8)
