"""kube-scheduler's extender wire format (`k8s.io/kube-scheduler/extender/v1`), decoded and encoded.

The v1 types have no json tags, so keys are Go field names: a request is
`{"Pod": {...}, "Nodes": {"metadata": {}, "items": [...]} | null, "NodeNames": [...] | null}`
(`Nodes` with `nodeCacheCapable: false`, `NodeNames` with `true`), a filter reply is
`{"Nodes" | "NodeNames": ..., "FailedNodes": {node: reason}, "FailedAndUnresolvableNodes": {...},
"Error": ""}` and a prioritize reply is `[{"Host": node, "Score": 0..10}]`. Recorded byte for byte in
`tests/fixtures/k8s/extender-*`. Decoded with msgspec into the Structs of `wire_types.py` (a bad
field is a ProtocolError naming its JSON path). Pure: bytes in, bytes out.
"""

from __future__ import annotations

import json
import operator
from dataclasses import dataclass
from itertools import compress

import msgspec
import numpy as np

from kubeview.model.views import PodView
from kubeview.scheduling import wire_types as w
from kubeview.scheduling.errors import ProtocolError
from kubeview.scheduling.node_cache import NodeCache, NodeItems
from kubeview.scheduling.node_index import NodeIndex

_PRINTABLE = bytes(range(0x20, 0x7F)).replace(b'"', b"").replace(b"\\", b"")


@dataclass(slots=True)
class ExtenderArgs:
    pod: dict  # the request's Pod, as the API's dict shape (only the fields kubeview reads)
    pod_view: PodView
    node_names: list[str] | None  # nodeCacheCapable: true
    items: NodeItems | None  # nodeCacheCapable: false (full Node objects: their bytes and views)

    @property
    def uid(self) -> str:
        meta = self.pod["metadata"]
        return meta.get("uid") or f"{meta.get('namespace', '')}/{meta['name']}"

    @property
    def by_name(self) -> bool:
        """nodeCacheCapable: true (NodeNames), as opposed to full Nodes."""
        return self.node_names is not None

    @property
    def names(self) -> list[str]:
        if self.node_names is not None:
            return self.node_names
        return self.items.names if self.items is not None else []

    def names_at(self, positions: np.ndarray) -> list[str]:
        """The names of the nodes at these request positions."""
        return _pick(self.names, positions)


def _pick(items: list, positions: np.ndarray) -> list:
    if len(positions) == 0:
        return []
    picked = operator.itemgetter(*positions.tolist())(items)
    return list(picked) if len(positions) > 1 else [picked]


def decode_args(body: w.Body, nodes: NodeCache | None = None) -> ExtenderArgs:
    """Parse an ExtenderArgs body; raises ProtocolError saying what is wrong and where. Full Nodes are
    looked up in `nodes` by their bytes and only decoded when new."""
    try:
        doc = w.decode(w.ARGS, body, "request body")
    except ValueError as exc:
        raise ProtocolError(str(exc)) from None
    if doc.node_names is not None:
        items = None
    elif doc.nodes is not None:
        items = (nodes or NodeCache()).items(doc.nodes.items or [])
    else:
        raise ProtocolError("request has neither Nodes nor NodeNames")
    pod = msgspec.to_builtins(doc.pod)
    try:
        view = PodView.from_api(pod)
    except (ValueError, TypeError, AttributeError, KeyError) as exc:
        raise ProtocolError(f"Pod cannot be read: {exc}") from None
    return ExtenderArgs(pod=pod, pod_view=view, node_names=doc.node_names, items=items)


def plain(names: list[str]) -> bool:
    """True when no name needs escaping in a JSON string (printable ASCII without quote or backslash)."""
    joined = "".join(names)
    return joined.isascii() and not joined.encode().translate(None, _PRINTABLE)


def filter_reply(args: ExtenderArgs, passed: np.ndarray, failed: dict[str, str],
                 unresolvable: dict[str, str], error: str = "") -> bytes:
    """ExtenderFilterResult in the mode of the request (`NodeNames` or `Nodes`)."""
    result: dict = {"FailedNodes": failed, "FailedAndUnresolvableNodes": unresolvable, "Error": error}
    keep = None if passed.all() else passed.tolist()
    if args.node_names is not None:  # by name
        names = args.node_names if keep is None else list(compress(args.node_names, keep))
        return _with_member(result, "NodeNames", [msgspec.json.encode(names)])
    assert args.items is not None  # decode_args gives one of the two
    return _with_member(result, "Nodes", args.items.json_parts(keep))


def _with_member(result: dict, key: str, encoded: list[bytes]) -> bytes:
    """`result` as JSON with one more member whose value is already encoded (in pieces)."""
    head = json.dumps(result, separators=(",", ":"))[:-1] + f',"{key}":'
    return b"".join([head.encode(), *encoded, b"}"])  # the one copy of the items (2 MB for 500 full Nodes)


_TAILS = [f'","Score":{s}}}' for s in range(11)]


def prioritize_reply(args: ExtenderArgs, scores: np.ndarray, index: NodeIndex | None = None,
                     rows: np.ndarray | None = None) -> bytes:
    """HostPriorityList of the nodes scored above 0, in the request's order; from `index`'s encoded
    names when every requested node is at `rows` of it (no name to escape, scores 0..10).

    kube-scheduler adds an extender's score only to the hosts its reply lists (prioritizeNodes in
    pkg/scheduler/schedule_one.go, 1.35-1.38), so a host left out and a host at 0 total the same.
    While packing, nearly every node is at 0 (499 of 500 in `bench scheduler`'s GPU scenario): the
    reply is a few hosts instead of 22 KB that kube-scheduler's serial cycle decodes per pod."""
    keep: np.ndarray | None = None
    scored = scores > 0
    if not scored.all():
        keep = np.flatnonzero(scored)
        scores = scores[keep]
        rows = rows[keep] if rows is not None else None
    if not len(scores):
        return b"[]"
    if index is not None and rows is not None and rows.min() >= 0 and scores.max() <= 10:
        heads = _host_heads(index)
        if heads is not None:
            parts = np.empty(2 * len(rows), dtype=object)
            parts[0::2] = heads[rows]
            parts[1::2] = _TAIL_BYTES[scores]
            pieces = parts.tolist()  # 10,000 references: ~0.1 ms for 5,000 nodes, where str joins took 0.5
            pieces[0] = b'[' + pieces[0]
            pieces[-1] = _TAIL_BYTES[scores[-1]][:-1] + b"]"
            return b"".join(pieces)
    return host_priority_list(args.names if keep is None else args.names_at(keep), scores)


def host_scores(reply: bytes | list, names: list[str]) -> dict[str, int]:
    """What kube-scheduler takes from a prioritize reply (its bytes or decoded) for the nodes it
    sent: each one's score, 0 for a node the reply leaves out (see prioritize_reply)."""
    scores = dict.fromkeys(names, 0)
    for host in (json.loads(reply) if isinstance(reply, bytes) else reply) or ():
        if host["Host"] in scores:
            scores[host["Host"]] += int(host["Score"])
    return scores


_TAIL_BYTES = np.empty(11, dtype=object)
_TAIL_BYTES[:] = [f"{s}}},".encode() for s in range(11)]


def _host_heads(index: NodeIndex) -> np.ndarray | None:
    """`{"Host":"<name>","Score":` per node of the index, once per node set (None: a name needs escaping)."""
    heads = index.encoded.get("host_heads")
    if heads is None:
        heads = False
        if plain(index.names):
            heads = np.empty(len(index.names), dtype=object)
            heads[:] = [f'{{"Host":"{n}","Score":'.encode() for n in index.names]
        index.encoded["host_heads"] = heads
    return heads if isinstance(heads, np.ndarray) else None  # False: a name needs escaping


def host_priority_list(names: list[str], scores: np.ndarray) -> bytes:
    """HostPriorityList. kube-scheduler sums scores per Host, so the list is grouped by score (fast to
    build for 5,000 nodes: one join per score value instead of one dict per node)."""
    if not names:
        return b"[]"
    if not plain(names):  # something to escape: the general way
        pairs = [{"Host": n, "Score": int(s)} for n, s in zip(names, scores.tolist(), strict=True)]
        return json.dumps(pairs, separators=(",", ":")).encode()
    order = np.argsort(scores, kind="stable")
    ordered = operator.itemgetter(*order.tolist())(names) if len(names) > 1 else (names[0],)
    counts = np.bincount(scores, minlength=11).tolist()
    parts, start = ["["], 0  # every 200 KB copy counts at 5,000 nodes: join once, encode once
    for score, count in enumerate(counts):
        if count:
            tail = _TAILS[score]
            parts += ['{"Host":"' if start == 0 else ',{"Host":"',
                      (tail + ',{"Host":"').join(ordered[start:start + count]), tail]
            start += count
    parts.append("]")
    return "".join(parts).encode()


def error_reply(message: str) -> bytes:
    """What a failed call answers: a filter result with `Error` set (prioritize has no error field,
    so it gets the same object; kube-scheduler treats any non-200 as the extender failing)."""
    return json.dumps({"Error": message, "FailedNodes": {}, "FailedAndUnresolvableNodes": {}}).encode()
