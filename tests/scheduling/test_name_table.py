"""The compiled NodeNames path gives exactly what `json` and a dict give, and steps aside otherwise."""

from __future__ import annotations

import json
import random

import numpy as np
import pytest
from builders import pod_obj

from kubeview.scheduling.name_table import NameTable
from kubeview.scheduling.protocol import (
    ProtocolError,
    decode_args,
    filter_reply,
    host_priority_list,
    prioritize_reply,
)

KNOWN = [f"node-{i:03d}" for i in range(300)] + ["ip-10-0-1-23.ec2.internal", "a", "b.c", "x" * 253]
TABLE = NameTable.of(KNOWN)


def body_of(names_json: str) -> bytes:
    return ('{"Pod": ' + json.dumps(pod_obj("p")) + ', "Nodes": null, "NodeNames": ' + names_json + "}").encode()


def expected_rows(names: list[str]) -> list[int]:
    row = {n: i for i, n in enumerate(KNOWN)}
    return [row.get(n, -1) for n in names]


def test_the_table_serves_plain_names_only() -> None:
    assert TABLE is not None  # numba compiles here; without it every path below would be json's
    assert NameTable.of(["ok", 'we"ird']) is None
    assert NameTable.of(["ok", "ünï"]) is None
    assert NameTable.of(["ok", "back\\slash"]) is None
    assert NameTable.of([]) is not None


@pytest.mark.parametrize("seed", range(20))
def test_scanned_rows_equal_json_and_a_dict(seed: int) -> None:
    rng = random.Random(seed)
    names = rng.sample(KNOWN, rng.randrange(0, len(KNOWN)))
    names += [f"unknown-{i}" for i in range(rng.randrange(0, 4))] + rng.sample(["", "node-", "node-0000", "A"], 2)
    rng.shuffle(names)
    sep, colon = rng.choice([(",", ":"), (", ", ": "), (" ,\n\t", " : ")])
    text = json.dumps(names, separators=(sep, colon))
    if rng.random() < 0.5:
        text = "[ \r\n" + text[1:-1] + "\n ]"
    body = body_of(text)
    args = decode_args(body, TABLE)
    assert args.name_rows is not None and args.name_rows.tolist() == expected_rows(names)
    assert args.node_names == names == decode_args(body).node_names
    assert json.loads(args.raw_nodes) == names


@pytest.mark.parametrize("names_json", [
    '["node-001", "node-\\u0030\\u0030\\u0032"]',  # an escape: json decodes it
    '["node-001", "nöde"]',  # non-ASCII
    '["node-001", "tab\\there"]',
])
def test_what_the_scanner_does_not_take_goes_to_json(names_json: str) -> None:
    body = body_of(names_json)
    args = decode_args(body, TABLE)
    assert args.name_rows is None
    assert args.node_names == json.loads(names_json)


@pytest.mark.parametrize("names_json", [
    '["node-001",]', '["node-001" "node-002"]', '["node-001"', '[,"node-001"]', '["node-001", 7]',
    '["node-001", null]', '["node-001"]]', "[\"node-001\x01\"]",
])
def test_malformed_node_names_are_refused_as_json_would(names_json: str) -> None:
    body = body_of(names_json)
    with pytest.raises(ProtocolError) as with_table:
        decode_args(body, TABLE)
    with pytest.raises(ProtocolError) as without:
        decode_args(body)
    assert str(with_table.value) == str(without.value)


def test_replies_from_the_table_equal_the_general_encoders() -> None:
    rng = random.Random(7)
    names = rng.sample(KNOWN, 200)
    body = body_of(json.dumps(names))
    fast, slow = decode_args(body, TABLE), decode_args(body)
    passed = np.array([rng.random() < 0.7 for _ in names])
    assert json.loads(filter_reply(fast, passed, {}, {})) == json.loads(filter_reply(slow, passed, {}, {}))
    assert json.loads(filter_reply(fast, np.zeros(len(names), bool), {}, {}))["NodeNames"] == []
    scores = np.array([rng.randrange(11) for _ in names])
    reply = json.loads(prioritize_reply(fast, scores))
    assert reply == [{"Host": n, "Score": int(s)} for n, s in zip(names, scores, strict=True)]
    assert sorted(map(str, reply)) == sorted(map(str, json.loads(host_priority_list(names, scores))))
    positions = np.array([3, 0, 199])
    assert fast.names_at(positions) == [names[3], names[0], names[199]] == slow.names_at(positions)


def test_unknown_names_keep_the_general_replies() -> None:
    names = ["node-001", "somewhere-else", "node-002"]
    args = decode_args(body_of(json.dumps(names)), TABLE)
    assert args.name_rows.tolist() == [1, -1, 2] and not args.all_in_table
    reply = json.loads(filter_reply(args, np.array([True, True, False]), {"node-002": "Insufficient cpu"}, {}))
    assert reply["NodeNames"] == ["node-001", "somewhere-else"]
    assert {h["Host"] for h in json.loads(prioritize_reply(args, np.array([1, 2, 3])))} == set(names)
