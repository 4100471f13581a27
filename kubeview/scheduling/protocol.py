"""kube-scheduler's extender wire format (`k8s.io/kube-scheduler/extender/v1`), decoded and encoded.

The v1 types have no json tags, so keys are Go field names: a request is
`{"Pod": {...}, "Nodes": {"metadata": {}, "items": [...]} | null, "NodeNames": [...] | null}`
(`Nodes` with `nodeCacheCapable: false`, `NodeNames` with `true`), a filter reply is
`{"Nodes" | "NodeNames": ..., "FailedNodes": {node: reason}, "FailedAndUnresolvableNodes": {...},
"Error": ""}` and a prioritize reply is `[{"Host": node, "Score": 0..10}]`. Recorded byte for byte in
`tests/fixtures/k8s/extender-*`. Pure: bytes in, bytes out.
"""

from __future__ import annotations

import json
import operator
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from itertools import compress

import numpy as np

from kubeview.model.views import PodView
from kubeview.scheduling.errors import ProtocolError
from kubeview.scheduling.name_table import NameTable, plain
from kubeview.scheduling.node_objects import NodeItems, NodeObjects

_DECODER = json.JSONDecoder()
_WS = re.compile(r"[ \t\n\r]*")


@dataclass(slots=True)
class ExtenderArgs:
    pod: dict
    pod_view: PodView
    _node_names: list[str] | None  # nodeCacheCapable: true (see `node_names`)
    items: NodeItems | None  # nodeCacheCapable: false (full Node objects: their bytes and views)
    raw_nodes: bytes = b""  # the request's own encoding of Nodes or NodeNames (echoed when all pass)
    # NodeNames read by a NameTable's compiled scanner: the table's row of each name (-1: not in it);
    # then the names themselves are only made into strings when something asks for them
    table: NameTable | None = field(default=None, repr=False)
    name_rows: np.ndarray | None = field(default=None, repr=False)

    @property
    def uid(self) -> str:
        meta = self.pod.get("metadata") or {}
        return meta.get("uid") or f"{meta.get('namespace', '')}/{meta.get('name', '')}"

    @property
    def by_name(self) -> bool:
        """nodeCacheCapable: true (NodeNames), as opposed to full Nodes."""
        return self._node_names is not None or self.name_rows is not None

    @property
    def all_in_table(self) -> bool:
        """Every NodeName was found in the table (so replies can be written from its rows)."""
        rows = self.name_rows
        return rows is not None and (rows.size == 0 or bool(rows.min() >= 0))

    @property
    def node_names(self) -> list[str] | None:
        if self._node_names is None and self.name_rows is not None:
            if self.all_in_table:
                self._node_names = _pick(self.table.names, self.name_rows)
            else:
                self._node_names = json.loads(self.raw_nodes)
        return self._node_names

    @property
    def names(self) -> list[str]:
        if self.by_name:
            return self.node_names
        return self.items.names if self.items is not None else []

    def names_at(self, positions: np.ndarray) -> list[str]:
        """The names of the nodes at these request positions."""
        if self._node_names is None and self.all_in_table:
            return _pick(self.table.names, self.name_rows[positions])
        return _pick(self.names, positions)


def _pick(items: list, positions: np.ndarray) -> list:
    if len(positions) == 0:
        return []
    picked = operator.itemgetter(*positions.tolist())(items)
    return list(picked) if len(positions) > 1 else [picked]


Reader = Callable[[bytes, int], "tuple[object, int] | None"]


def decode_members(body: bytes, readers: dict[str, Reader] | None = None) -> tuple[dict, dict[str, bytes]]:
    """A top-level JSON object and the raw bytes of each of its members' values.

    Same result as `json.loads` (C decoder per value, the last duplicate key wins), plus the spans,
    so a filter reply can echo the request's own `Nodes`/`NodeNames` encoding (2 MB for 500 full
    Nodes) instead of encoding it again. Raises ProtocolError for anything that is not an object.
    `readers` may read a member's value instead of the json decoder: `reader(body, offset)` gives
    (value, offset past it), or None to leave that value to json (ASCII bodies only).
    """
    try:
        text = body.decode()
    except UnicodeDecodeError as exc:
        raise ProtocolError(f"request body is not valid JSON: {exc}") from None
    ascii_only = len(text) == len(body)  # then str offsets are byte offsets
    doc: dict = {}
    spans: dict[str, bytes] = {}
    try:
        i = _WS.match(text, 0).end()
        if text[i:i + 1] != "{":
            doc = json.loads(text)  # not an object: let json say what it is (or what is wrong)
            raise ProtocolError("request body must be a JSON object with Pod, Nodes and NodeNames")
        i = _WS.match(text, i + 1).end()
        if text[i:i + 1] == "}":
            i += 1
        else:
            while True:
                if text[i:i + 1] != '"':
                    raise json.JSONDecodeError("Expecting property name enclosed in double quotes", text, i)
                key, i = json.decoder.scanstring(text, i + 1)
                i = _WS.match(text, i).end()
                if text[i:i + 1] != ":":
                    raise json.JSONDecodeError("Expecting ':' delimiter", text, i)
                start = _WS.match(text, i + 1).end()
                read = readers.get(key) if readers and ascii_only else None
                got = read(body, start) if read is not None else None
                if got is None:
                    doc[key], i = _DECODER.raw_decode(text, start)
                else:
                    doc[key], i = got
                spans[key] = body[start:i] if ascii_only else text[start:i].encode()
                i = _WS.match(text, i).end()
                sep = text[i:i + 1]
                i = _WS.match(text, i + 1).end()
                if sep == "}":
                    break
                if sep != ",":
                    raise json.JSONDecodeError("Expecting ',' delimiter", text, i)
        if _WS.match(text, i).end() != len(text):
            raise json.JSONDecodeError("Extra data", text, i)
    except ProtocolError:
        raise
    except ValueError as exc:  # json's own errors, and its limit on an integer's digits
        raise ProtocolError(f"request body is not valid JSON: {exc}") from None
    except RecursionError:
        raise ProtocolError("request body is not valid JSON: nested too deeply") from None
    return doc, spans


def decode_args(body: bytes, table: NameTable | None = None, node_objects: NodeObjects | None = None) -> ExtenderArgs:
    """Parse an ExtenderArgs body; raises ProtocolError saying what is wrong. With a `table` (the
    model's node names), NodeNames are looked up in it as they are read (see `name_table.py`); with
    `node_objects`, full Nodes already met are found by their bytes instead of decoded again."""
    readers: dict[str, Reader] = {}
    if table is not None:
        readers["NodeNames"] = lambda b, at: _scanned(table.scan(b, at))
    if node_objects is not None:
        readers["Nodes"] = node_objects.read
    doc, spans = decode_members(body, readers)
    pod = doc.get("Pod")
    if not isinstance(pod, dict) or not isinstance(pod.get("metadata"), dict) or "name" not in pod["metadata"]:
        raise ProtocolError("request has no Pod object with metadata.name")
    nodes, names = doc.get("Nodes"), doc.get("NodeNames")
    rows = None
    if isinstance(names, _Rows):
        rows, names, node_items = names.rows, None, None
    elif names is not None:
        if not isinstance(names, list):
            raise ProtocolError("NodeNames must be a list of strings")
        try:
            "".join(names)  # C-speed check that every item is a string
        except TypeError:
            raise ProtocolError("NodeNames must be a list of strings") from None
        node_items = None
    elif isinstance(nodes, NodeItems):
        node_items = nodes
    elif nodes is not None:
        node_items = NodeItems.from_objects(nodes.get("items") if isinstance(nodes, dict) else None)
    else:
        raise ProtocolError("request has neither Nodes nor NodeNames")
    try:
        view = PodView.from_api(pod)
    except (ValueError, TypeError, AttributeError, KeyError) as exc:
        raise ProtocolError(f"Pod cannot be read: {exc}") from None
    raw_nodes = spans["NodeNames"] if names is not None or rows is not None else spans["Nodes"]
    return ExtenderArgs(pod=pod, pod_view=view, _node_names=names, items=node_items, raw_nodes=raw_nodes,
                        table=table if rows is not None else None, name_rows=rows)


@dataclass(frozen=True, slots=True)
class _Rows:
    """NodeNames as the table's scanner read them (a list of strings to every check above)."""

    rows: np.ndarray


def _scanned(got: tuple[np.ndarray, int] | None) -> tuple[_Rows, int] | None:
    return None if got is None else (_Rows(got[0]), got[1])


def filter_reply(args: ExtenderArgs, passed: np.ndarray, failed: dict[str, str],
                 unresolvable: dict[str, str], error: str = "") -> bytes:
    """ExtenderFilterResult in the mode of the request (`NodeNames` or `Nodes`)."""
    result: dict = {"FailedNodes": failed, "FailedAndUnresolvableNodes": unresolvable, "Error": error}
    if passed.all() and args.raw_nodes:
        # Every node passed: echo the request's own encoding instead of encoding it again (a quarter
        # of a millisecond for 5,000 names, tens of milliseconds for 500 full Nodes).
        return _with_member(result, "NodeNames" if args.by_name else "Nodes", args.raw_nodes)
    if args.all_in_table:  # names written from the table's bytes
        return _with_member(result, "NodeNames", args.table.names_json(args.name_rows[passed]))
    keep = passed.tolist()
    if args.by_name:
        names = list(compress(args.node_names, keep))
        if plain(names):  # the usual case: join, instead of json's per-item encoding (5,000 names)
            listed = '["' + '","'.join(names) + '"]' if names else "[]"
            return _with_member(result, "NodeNames", listed.encode())
        result["NodeNames"] = names
    else:
        return _with_member(result, "Nodes", args.items.json_of(keep))
    return json.dumps(result, separators=(",", ":")).encode()


def _with_member(result: dict, key: str, encoded: bytes) -> bytes:
    """`result` as JSON with one more member whose value is already encoded."""
    head = json.dumps(result, separators=(",", ":"))[:-1] + f',"{key}":'
    return b"".join((head.encode(), encoded, b"}"))  # one copy of `encoded` (2 MB for 500 full Nodes)


_TAILS = [f'","Score":{s}}}' for s in range(11)]


def prioritize_reply(args: ExtenderArgs, scores: np.ndarray) -> bytes:
    """HostPriorityList, in the request's order (from the table's bytes when every name is in it)."""
    if args.all_in_table:
        return args.table.host_priority_json(args.name_rows, scores)
    return host_priority_list(args.names, scores)


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
