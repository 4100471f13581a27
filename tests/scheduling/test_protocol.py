"""The extender wire format: decoding with member spans, echoing, and the grouped prioritize reply."""

from __future__ import annotations

import json

import numpy as np
import pytest
from builders import FIXTURES, pod_obj

from kubeview.scheduling.protocol import (
    ProtocolError,
    decode_args,
    decode_members,
    filter_reply,
    host_priority_list,
)


@pytest.mark.parametrize("text", [
    '{"Pod": {"metadata": {"name": "p"}}, "Nodes": null, "NodeNames": ["a", "b"]}',
    ' {\n "a" : [1, {"b": "ü"}] ,\t"c":"\\u00e9\\"]}" , "a": 2 }\n',  # non-ASCII, escapes, duplicate key
    "{}",
])
def test_decode_members_is_json_loads_plus_spans(text: str) -> None:
    doc, spans = decode_members(text.encode())
    assert doc == json.loads(text)
    assert {k: json.loads(v) for k, v in spans.items()} == doc


@pytest.mark.parametrize(("body", "reason"), [
    (b'{"Pod": ', "request body is not valid JSON"),
    (b'{"Pod": {}} extra', "request body is not valid JSON"),
    (b'{"Pod" {}}', "request body is not valid JSON"),
    (b"\xff\xfe", "request body is not valid JSON"),
    (b"[1, 2]", "request body must be a JSON object"),
    (b"[" * 100000 + b"]" * 100000, "request body is not valid JSON"),
    (b'{"Pod": {"metadata": {}}, "Nodes": null, "NodeNames": ["a"]}', "request has no Pod object with metadata.name"),
    (b'{"Pod": {"metadata": {"name": "p"}}, "Nodes": null, "NodeNames": ["a", 1]}', "NodeNames must be a list of strings"),
    (b'{"Pod": {"metadata": {"name": "p"}}, "Nodes": {"items": [{}]}, "NodeNames": null}', "Nodes must be a NodeList"),
])
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
