"""Full Node objects from extender requests, decoded once per distinct encoding, in bounded memory.

With `nodeCacheCapable: false` kube-scheduler sends every candidate Node in full on every call (~4 KB
each with managedFields and images; 2 MB for 500). It sends the bytes of its own node cache, which
stay the same until a node changes, so `NodeCache` keeps the NodeView of each item encoding it has
met, found by those bytes, least recently used first out once the keys pass `max_bytes` (a request
of 480,000 made-up Nodes must not stay in memory). The item bytes also let a filter reply echo each
passing Node as it came.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from itertools import compress

import msgspec

from kubeview.model.views import NodeView
from kubeview.scheduling import wire_types as w
from kubeview.scheduling.errors import ProtocolError

DEFAULT_MAX_BYTES = 64 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class NodeItems:
    """A request's `Nodes.items` as read: each item's view, and its own bytes."""

    views: list[NodeView]
    raws: list[bytes]

    @property
    def names(self) -> list[str]:
        return [v.name for v in self.views]

    def json_parts(self, keep: list[bool] | None = None) -> list[bytes]:
        """`{"metadata":{},"items":[...]}` of the items (those where `keep` is true), in their own bytes,
        as pieces for one join with whatever surrounds them (each copy of 2 MB costs ~0.3-1 ms)."""
        raws = self.raws if keep is None else list(compress(self.raws, keep))
        if not raws:
            return [b'{"metadata":{},"items":[]}']
        parts = [b","] * (2 * len(raws) + 1)  # prefix, item, ",", item, ..., item, suffix
        parts[0], parts[-1] = b'{"metadata":{},"items":[', b"]}"
        parts[1::2] = raws
        return parts


def view_of(raw: bytes, at: int) -> NodeView:
    """The NodeView of one item (`at`: its position, for the error's path)."""
    try:
        node = w.decode(w.NODE, raw, f"Nodes.items[{at}]")
    except ValueError as exc:
        raise ProtocolError(str(exc)) from None
    try:
        return NodeView.from_api(msgspec.to_builtins(node))
    except (ValueError, TypeError, AttributeError, KeyError) as exc:
        raise ProtocolError(f"a Node in Nodes cannot be read: {exc}") from None


KEY_HEAD, KEY_TAIL = 256, 64  # bytes of an item that key it (its name, uid and resourceVersion lead)


class NodeCache:
    """Views by item bytes, shared by every call of one extender (thread-safe), bounded in bytes.

    An item is looked up by its length, first KEY_HEAD and last KEY_TAIL bytes, and a hit counts only
    when the whole item equals the one kept (one memcmp): hashing every 4 KB item took ~0.4 ms of a
    500-Node call, and a key alone would let a client that matches a real Node's key plant its view.
    """

    def __init__(self, max_bytes: int = DEFAULT_MAX_BYTES) -> None:
        self.max_bytes = max_bytes
        self._kept: dict[tuple, tuple[bytes, NodeView]] = {}  # insertion order = least recently used first
        self._bytes = 0
        self._lock = threading.Lock()
        self.decoded = 0  # items decoded so far (the rest were found by their bytes)

    @property
    def size(self) -> int:
        """Bytes of item encodings held."""
        return self._bytes

    def items(self, raws: list[msgspec.Raw]) -> NodeItems:
        members = [bytes(r) for r in raws]
        with self._lock:
            kept = self._kept
            views = []
            for i, member in enumerate(members):
                key = (len(member), member[:KEY_HEAD], member[-KEY_TAIL:])
                hit = kept.pop(key, None)
                if hit is None or hit[0] != member:
                    if hit is not None:  # same key, other bytes: the newer one replaces it
                        self._bytes -= len(hit[0])
                    hit = (member, view_of(member, i))
                    self.decoded += 1
                    self._bytes += len(member)
                kept[key] = hit  # most recently used last
                views.append(hit[1])
            while self._bytes > self.max_bytes and kept:
                oldest = next(iter(kept))
                self._bytes -= len(kept.pop(oldest)[0])
        return NodeItems(views, members)
