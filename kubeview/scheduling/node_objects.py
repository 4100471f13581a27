"""Full Node objects from extender requests, decoded once per distinct encoding.

With `nodeCacheCapable: false` kube-scheduler sends every candidate Node in full on every call (~4 KB
each with managedFields and images), and decoding 500 of them with `json` is ~30 ms a call. It sends
the bytes of its own node cache, which stay the same until a node changes, so `NodeObjects` keeps the
NodeView of every item encoding it has met, keyed by those bytes: a call costs a compiled scan for the
items' spans (`node_list_kernels.py`) and a dict lookup per node, and only new or changed Nodes are
decoded. The spans also let a filter reply echo each passing Node's own bytes.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass

import numpy as np

from kubeview.model.views import NodeView
from kubeview.scheduling.errors import ProtocolError
from kubeview.scheduling.name_table import kernels

MIN_KEPT = 4096  # encodings kept at least; beyond, those of the latest call and up to 3x its size


@dataclass(frozen=True, slots=True)
class NodeItems:
    """A request's `Nodes.items` as read: each item's own bytes and its view."""

    members: list[bytes]
    views: list[NodeView]

    @property
    def names(self) -> list[str]:
        return [v.name for v in self.views]

    def json_of(self, keep: list[bool] | None = None) -> bytes:
        """`{"metadata":{},"items":[...]}` of the items (those where `keep` is true), in their own bytes."""
        members = self.members if keep is None else [m for m, k in zip(self.members, keep, strict=True) if k]
        return b'{"metadata":{},"items":[' + b",".join(members) + b"]}"

    @classmethod
    def from_objects(cls, items: object) -> NodeItems:
        """From a decoded NodeList's `items` (the general path, for JSON the scanner leaves to json)."""
        if not isinstance(items, list):
            raise ProtocolError("Nodes must be a NodeList whose items have metadata.name")
        views = [view_of(obj) for obj in items]
        return cls([json.dumps(obj, separators=(",", ":")).encode() for obj in items], views)


def view_of(obj: object) -> NodeView:
    """The NodeView of one decoded item; ProtocolError says what is wrong with it."""
    if not isinstance(obj, dict) or not isinstance(obj.get("metadata"), dict) or "name" not in obj["metadata"]:
        raise ProtocolError("Nodes must be a NodeList whose items have metadata.name")
    try:
        return NodeView.from_api(obj)
    except (ValueError, TypeError, AttributeError, KeyError) as exc:
        raise ProtocolError(f"a Node in Nodes cannot be read: {exc}") from None


class NodeObjects:
    """Views by item bytes, shared by every call of one extender (thread-safe)."""

    def __init__(self) -> None:
        self._views: dict[bytes, NodeView] = {}
        self._lock = threading.Lock()
        self.decoded = 0  # items decoded so far (the rest were found by their bytes)

    def read(self, body: bytes, start: int) -> tuple[NodeItems, int] | None:
        """The NodeList at `body[start]` (its items and the offset just past it), or None when the
        compiled scan does not take it (decode it with json, then `NodeItems.from_objects`)."""
        if kernels() is None:
            return None
        from kubeview.scheduling import node_list_kernels as k

        buf = np.frombuffer(body, dtype=np.uint8)
        most = (len(body) - start) // 3 + 1  # an item takes 3 bytes at least ("{}," ); pages untouched cost nothing
        starts = np.empty(most, dtype=np.int64)
        ends = np.empty(most, dtype=np.int64)
        count, end = k.scan_items(buf, start, _ITEMS, starts, ends, k._ESCAPES, k._HEX, k._TRUE, k._FALSE, k._NULL)
        if count < 0:
            return None
        members = [body[a:b] for a, b in zip(starts[:count].tolist(), ends[:count].tolist(), strict=True)]
        return NodeItems(members, self.views(members)), int(end)

    def views(self, members: list[bytes]) -> list[NodeView]:
        with self._lock:
            known = self._views
            views = list(map(known.get, members))
            missing = [i for i, v in enumerate(views) if v is None]
            for i in missing:
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
                    self.decoded += 1
                views[i] = view
            if len(known) > max(MIN_KEPT, 3 * len(members)):  # changed Nodes' old encodings go
                self._views = dict(zip(members, views, strict=True))
        return views


_ITEMS = np.frombuffer(b"items", dtype=np.uint8)
