"""The extender wire format: typed decoding (a bad field named by its JSON path), echoing, and the
grouped prioritize reply."""

from __future__ import annotations

import json

import numpy as np
import pytest
from builders import FIXTURES, pod_obj
from builders import node as build_node

from kubeview.scheduling.node_index import NodeIndex
from kubeview.scheduling.protocol import (
    ProtocolError,
    decode_args,
    filter_reply,
    host_priority_list,
    host_scores,
    prioritize_reply,
)


@pytest.mark.parametrize(("body", "reason"), [
    (b'{"Pod": ', "request body is not valid JSON"),
    (b'{"Pod": {"metadata": {"name": "p"}}, "NodeNames": []} extra', "request body is not valid JSON"),
    (b'{"Pod" {}}', "request body is not valid JSON"),
    (b"\xff\xfe", "request body is not valid JSON"),
    (b"[1, 2]", r"request body is invalid: Expected `object`, got `array`$"),
    (b"[" * 100000 + b"]" * 100000, "request body is invalid: Expected `object`"),
    (b'{"Pod": {"metadata": {"name": "p"}}, "x": ' + b"[" * 100000 + b"]" * 100000 + b"}",
     "request body is not valid JSON: nested too deeply"),
    (b'{"Pod": {"metadata": {}}, "Nodes": null, "NodeNames": ["a"]}',
     r"request body is invalid: Object missing required field `name` - at `\$.Pod.metadata`"),
    (b'{"Pod": {"metadata": {"name": "p"}}, "Nodes": null, "NodeNames": ["a", 1]}',
     r"request body is invalid: Expected `str`, got `int` - at `\$.NodeNames\[1\]`"),
    (b'{"Pod": {"metadata": {"name": "p"}}, "Nodes": {"items": [{}]}, "NodeNames": null}',
     r"Nodes.items\[0\] is invalid: Object missing required field `metadata`"),
    (b'{"Pod": {"metadata": {"name": "p"}, "spec": {"nodeSelector": ["a"]}}, "NodeNames": []}',
     r"request body is invalid: Expected `object \| null`, got `array` - at `\$.Pod.spec.nodeSelector`"),
    (b'{"Pod": {"metadata": {"name": "p"}, "spec": {"containers": [{"resources": {"requests": {"cpu": true}}}]}},'
     b' "NodeNames": []}', r"request body is invalid: Expected `.*`, got `bool` - at `\$.Pod.spec.containers\[0\]"),
    (b'{"Pod": {"metadata": {"name": "p"}}, "Nodes": {"items": [{"metadata": {"name": "n"}, "spec": {"taints": "x"}}]}}',
     r"Nodes.items\[0\] is invalid: Expected `array \| null`, got `str` - at `\$.spec.taints`"),
    (b'{"Pod": {"metadata": {"name": "p"}, "spec": {"containers": [{"resources": {"requests": {"memory": "1e19"}}}]}},'
     b' "NodeNames": []}', "Pod cannot be read: memory quantity '1e19' is out of range"),
], ids=lambda v: v[:40] if isinstance(v, bytes) else None)
def test_bad_bodies_are_refused_with_a_reason(body: bytes, reason: str) -> None:
    with pytest.raises(ProtocolError, match="^" + reason):
        decode_args(body)


def test_all_passing_filter_reply_echoes_the_request_exactly() -> None:
    for mode in ("true", "false"):
        for line in (FIXTURES / f"extender-requests-nodecachecapable-{mode}.jsonl").read_text().splitlines():
            record = json.loads(line)
            if record["path"] != "/filter":
                continue
            args = decode_args(record["raw_body"].encode())
            reply = json.loads(filter_reply(args, np.ones(len(args.names), dtype=bool), {}, {}))
            assert reply == {**json.loads(record["raw_reply"]), "FailedAndUnresolvableNodes": {}}


@pytest.mark.parametrize("names", [
    ["a", "b", "c"],
    ['we"ird', "b", "tab\there", "ünï", "back\\slash"],  # needs escaping: json's own encoder
])
def test_partial_filter_reply(names: list[str]) -> None:
    body = json.dumps({"Pod": pod_obj("p"), "Nodes": None, "NodeNames": names}).encode()
    passed = np.array([i != 1 for i in range(len(names))])
    raw = filter_reply(decode_args(body), passed, {"b": "Insufficient cpu"}, {})
    reply = json.loads(raw)
    assert reply["NodeNames"] == [n for i, n in enumerate(names) if i != 1]
    assert reply["FailedNodes"] == {"b": "Insufficient cpu"} and reply["FailedAndUnresolvableNodes"] == {}
    assert reply["Error"] == ""


def test_filter_reply_with_no_node_left_is_an_empty_list() -> None:
    body = json.dumps({"Pod": pod_obj("p"), "Nodes": None, "NodeNames": ["a"]}).encode()
    reply = json.loads(filter_reply(decode_args(body), np.array([False]), {"a": "Insufficient cpu"}, {}))
    assert reply["NodeNames"] == []


@pytest.mark.parametrize("names", [
    [f"node-{i}" for i in range(50)],
    ['we"ird', "back\\slash", "tab\there", "ünï"],  # needs escaping: the slow path
    ["only"],
])
def test_prioritize_reply_has_every_host_once_with_its_score(names: list[str]) -> None:
    scores = np.arange(len(names)) % 11
    reply = json.loads(host_priority_list(names, scores))
    assert sorted((h["Host"], h["Score"]) for h in reply) == sorted(zip(names, scores.tolist(), strict=True))
    assert all(set(h) == {"Host", "Score"} for h in reply)
    assert host_priority_list([], np.zeros(0, dtype=np.int64)) == b"[]"


@pytest.mark.parametrize("names", [
    [f"node-{i}" for i in range(50)],
    ['we"ird', "back\\slash", "tab\there", "ünï"],  # needs escaping: the general way
    ["only"],
])
def test_prioritize_reply_from_the_index_is_the_request_order_with_each_score(names: list[str]) -> None:
    """From the index's encoded names (request positions -> index rows), as kube-scheduler reads it."""
    index = NodeIndex.build(names, [build_node(n) for n in names])
    rows = np.random.default_rng(1).permutation(len(names))  # the request's order differs from the model's
    scores = np.arange(len(names)) % 11
    args = decode_args(json.dumps({"Pod": pod_obj("p"), "NodeNames": [names[r] for r in rows]}).encode())
    raw = prioritize_reply(args, scores, index, rows)
    reply = json.loads(raw)
    # the hosts scored above 0, in the request's order: a host left out counts 0 in kube-scheduler's total
    assert [(h["Host"], h["Score"]) for h in reply] == [
        (names[r], s) for r, s in zip(rows, scores.tolist(), strict=True) if s > 0]
    assert all(set(h) == {"Host", "Score"} for h in reply)
    assert host_scores(raw, args.names) == dict(zip(args.names, scores.tolist(), strict=True))
    unknown = rows.copy()
    unknown[0] = -1  # a node the model does not know: the general way, same content
    raw = prioritize_reply(args, scores, index, unknown)
    assert sorted((h["Host"], h["Score"]) for h in json.loads(raw)) == sorted(
        (n, s) for n, s in zip(args.names, scores.tolist(), strict=True) if s > 0)
    assert host_scores(raw, args.names) == dict(zip(args.names, scores.tolist(), strict=True))


def test_prioritize_reply_leaves_out_the_hosts_at_zero() -> None:
    """Packing scores nearly every node 0: the reply lists only the others, or none at all."""
    names = [f"gpu-node-{i:03d}" for i in range(500)]
    index = NodeIndex.build(names, [build_node(n) for n in names])
    args = decode_args(json.dumps({"Pod": pod_obj("p"), "NodeNames": names}).encode())
    rows = np.arange(len(names))
    scores = np.zeros(len(names), dtype=np.int64)
    assert prioritize_reply(args, scores, index, rows) == b"[]"
    assert host_scores(b"[]", names) == dict.fromkeys(names, 0)
    scores[[7, 300]] = [1, 10]
    raw = prioritize_reply(args, scores, index, rows)
    assert json.loads(raw) == [{"Host": "gpu-node-007", "Score": 1}, {"Host": "gpu-node-300", "Score": 10}]
    assert len(raw) < 100  # against ~22 KB listing all 500
    assert host_scores(raw, names) == dict(zip(names, scores.tolist(), strict=True))
