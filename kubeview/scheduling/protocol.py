"""kube-scheduler's extender wire format (`k8s.io/kube-scheduler/extender/v1`), decoded and encoded.

The v1 types have no json tags, so keys are Go field names: a request is
`{"Pod": {...}, "Nodes": {"metadata": {}, "items": [...]} | null, "NodeNames": [...] | null}`
(`Nodes` with `nodeCacheCapable: false`, `NodeNames` with `true`), a filter reply is
`{"Nodes" | "NodeNames": ..., "FailedNodes": {node: reason}, "FailedAndUnresolvableNodes": {...},
"Error": ""}` and a prioritize reply is `[{"Host": node, "Score": 0..10}]`. Recorded byte for byte in
`../shared/fixtures/k8s/extender-*`. Pure: bytes in, bytes out.
"""

from __future__ import annotations

import json
import operator
from dataclasses import dataclass

import numpy as np

from kubeview.model.views import PodView


class ProtocolError(ValueError):
    """A request kube-scheduler would never send; the message is the reason (HTTP 400)."""


@dataclass(slots=True)
class ExtenderArgs:
    pod: dict
    pod_view: PodView
    node_names: list[str] | None  # nodeCacheCapable: true
    nodes: list[dict] | None  # nodeCacheCapable: false (full Node objects)

    @property
    def uid(self) -> str:
        meta = self.pod.get("metadata") or {}
        return meta.get("uid") or f"{meta.get('namespace', '')}/{meta.get('name', '')}"

    @property
    def names(self) -> list[str]:
        if self.node_names is not None:
            return self.node_names
        return [(n.get("metadata") or {}).get("name", "") for n in self.nodes or []]


def decode_args(body: bytes) -> ExtenderArgs:
    """Parse an ExtenderArgs body; raises ProtocolError saying what is wrong."""
    try:
        doc = json.loads(body)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ProtocolError(f"request body is not valid JSON: {exc}") from None
    if not isinstance(doc, dict):
        raise ProtocolError("request body must be a JSON object with Pod, Nodes and NodeNames")
    pod = doc.get("Pod")
    if not isinstance(pod, dict) or not isinstance(pod.get("metadata"), dict) or "name" not in pod["metadata"]:
        raise ProtocolError("request has no Pod object with metadata.name")
    nodes, names = doc.get("Nodes"), doc.get("NodeNames")
    if names is not None:
        if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
            raise ProtocolError("NodeNames must be a list of strings")
        node_items = None
    elif nodes is not None:
        items = nodes.get("items") if isinstance(nodes, dict) else None
        if not isinstance(items, list) or not all(
            isinstance(n, dict) and isinstance(n.get("metadata"), dict) and "name" in n["metadata"] for n in items
        ):
            raise ProtocolError("Nodes must be a NodeList whose items have metadata.name")
        node_items = items
    else:
        raise ProtocolError("request has neither Nodes nor NodeNames")
    try:
        view = PodView.from_api(pod)
    except (ValueError, TypeError, AttributeError, KeyError) as exc:
        raise ProtocolError(f"Pod cannot be read: {exc}") from None
    return ExtenderArgs(pod=pod, pod_view=view, node_names=names, nodes=node_items)


def filter_reply(args: ExtenderArgs, passed: np.ndarray, failed: dict[str, str],
                 unresolvable: dict[str, str], error: str = "") -> bytes:
    """ExtenderFilterResult in the mode of the request (`NodeNames` or `Nodes`)."""
    result: dict = {"FailedNodes": failed, "FailedAndUnresolvableNodes": unresolvable, "Error": error}
    keep = passed.tolist()
    if args.node_names is not None:
        result["NodeNames"] = args.node_names if all(keep) else [n for n, k in zip(args.node_names, keep, strict=True) if k]
    else:
        items = args.nodes or []
        result["Nodes"] = {"metadata": {}, "items": items if all(keep) else [n for n, k in zip(items, keep, strict=True) if k]}
    return json.dumps(result, separators=(",", ":")).encode()


_TAILS = [f'","Score":{s}}}' for s in range(11)]


def prioritize_reply(names: list[str], scores: np.ndarray) -> bytes:
    """HostPriorityList. kube-scheduler sums scores per Host, so the list is grouped by score (fast to
    build for 5,000 nodes: one join per score value instead of one dict per node)."""
    if not names:
        return b"[]"
    joined = "".join(names)
    if '"' in joined or "\\" in joined or not joined.isprintable():  # needs escaping: the slow way
        pairs = [{"Host": n, "Score": int(s)} for n, s in zip(names, scores.tolist(), strict=True)]
        return json.dumps(pairs, separators=(",", ":")).encode()
    order = np.argsort(scores, kind="stable")
    ordered = operator.itemgetter(*order.tolist())(names) if len(names) > 1 else (names[0],)
    counts = np.bincount(scores, minlength=11)
    parts, start = [], 0
    for score in np.flatnonzero(counts).tolist():
        end = start + int(counts[score])
        parts.append('{"Host":"' + (_TAILS[score] + ',{"Host":"').join(ordered[start:end]) + _TAILS[score])
        start = end
    return ("[" + ",".join(parts) + "]").encode()


def error_reply(message: str) -> bytes:
    """What a failed call answers: a filter result with `Error` set (prioritize has no error field,
    so it gets the same object; kube-scheduler treats any non-200 as the extender failing)."""
    return json.dumps({"Error": message, "FailedNodes": {}, "FailedAndUnresolvableNodes": {}}).encode()
