"""Full Nodes found by their bytes: the compiled scan accepts only what `json` accepts, with the same
items; known encodings are not decoded again; replies echo each passing Node's own bytes."""

from __future__ import annotations

import json
import random

import numpy as np
import pytest
from builders import FIXTURES, node_obj, pod_obj

from kubeview.model.views import NodeView
from kubeview.scheduling.allocations import UsageOverlay, from_views, with_usage_from
from kubeview.scheduling.name_table import kernels
from kubeview.scheduling.node_objects import NodeObjects
from kubeview.scheduling.protocol import ProtocolError, decode_args, filter_reply

SCALARS = [0, -1, 12, 3.5, -0.25, 1e21, 2.5e-7, True, False, None, "", "plain", 'quo"te', "back\\slash",
           "tab\tnew\nline", "snow \u2603", "nul \x00", "/path/", "\U0001f600"]


def random_value(rng: random.Random, depth: int = 0) -> object:
    roll = rng.random()
    if depth > 3 or roll < 0.5:
        return rng.choice(SCALARS)
    if roll < 0.75:
        return [random_value(rng, depth + 1) for _ in range(rng.randrange(0, 4))]
    return {rng.choice(["a", "b", "items", "metadata", "k\u00e9y", 'q"k']): random_value(rng, depth + 1)
            for _ in range(rng.randrange(0, 4))}


def random_list(rng: random.Random) -> str:
    items = [{"metadata": {"name": f"n{i}"}, "x": random_value(rng), "pad": "p" * rng.randrange(0, 400)}
             for i in range(rng.randrange(0, 5))]  # past the 256 bytes that key a known item, or not
    doc = {"metadata": random_value(rng), "items": items}
    if rng.random() < 0.3:
        doc = {"items": items, "kind": "NodeList"}
    sep, colon = rng.choice([(",", ":"), (", ", ": "), (" ,\n\t", " : ")])
    return json.dumps(doc, separators=(sep, colon), ensure_ascii=rng.random() < 0.8)


def scan(text: str) -> tuple[int, int, list[bytes]]:
    from kubeview.scheduling import node_list_kernels as k

    body = text.encode()
    starts = np.empty(body.count(b"{") + 1, dtype=np.int64)
    ends = np.empty_like(starts)
    count, end = k.scan_items(np.frombuffer(body, dtype=np.uint8), 0, np.frombuffer(b"items", dtype=np.uint8),
                              starts, ends, k._ESCAPES, k._HEX, k._TRUE, k._FALSE, k._NULL)
    return count, end, [body[a:b] for a, b in zip(starts[:max(count, 0)], ends[:max(count, 0)], strict=True)]


def json_items(text: str) -> tuple[list | None, int]:
    """What json makes of the value at the start of `text` as a NodeList's items (None: not valid
    JSON, or no items list), and where the value ends (the caller reads what follows it)."""
    try:
        doc, end = json.JSONDecoder().raw_decode(text, len(text) - len(text.lstrip(" \t\n\r")))
    except ValueError:
        return None, -1
    return (doc.get("items") if isinstance(doc, dict) else None), len(text[:end].encode())


def test_kernels_compile_here() -> None:
    assert kernels() is not None  # otherwise every test below would only see json's path


@pytest.mark.parametrize("seed", range(3))
def test_scanned_items_are_json_items(seed: int) -> None:
    rng = random.Random(seed)
    accepted = 0
    for _ in range(200):
        text = random_list(rng)
        count, end, members = scan(text)
        if text.isascii():  # what kube-scheduler's encoder writes: always taken
            assert count >= 0, text
        if count >= 0:
            accepted += 1
            assert end == len(text.encode())
            assert [json.loads(m) for m in members] == json.loads(text)["items"]
    assert accepted >= 150


MUTATIONS = ['"', "\\", ",", ":", "{", "}", "[", "]", "0", "-", ".", "e", "u", "n", " ", "\x01", "x"]


def mangle(rng: random.Random, text: str, at: int) -> str:
    """`text` with one random edit at `at`: a character deleted, inserted or replaced."""
    edit = rng.random()
    if edit < 0.4:
        return text[:at] + text[at + 1:]
    if edit < 0.8:
        return text[:at] + rng.choice(MUTATIONS) + text[at:]
    return text[:at] + rng.choice(MUTATIONS) + text[at + 1:]


@pytest.mark.parametrize("seed", range(3))
def test_a_mangled_list_is_taken_only_where_json_takes_it_the_same(seed: int) -> None:
    """Random edits of valid lists: whatever the scan accepts, json accepts with the same items."""
    rng = random.Random(100 + seed)
    refused = 0
    for _ in range(1500):
        text = random_list(rng)
        text = mangle(rng, text, rng.randrange(len(text)))
        count, end, members = scan(text)
        if count < 0:
            refused += 1
            continue
        items, json_end = json_items(text)
        assert items is not None, text
        assert [json.loads(m) for m in members] == items and end == json_end, text
    assert refused > 300  # the edits did break lists, and the scan noticed


@pytest.mark.parametrize("text", [
    '{"items":[{}],"items":[]}',  # a repeated member: json keeps the last one
    '{"it\\u0065ms":[{}]}',  # an escaped key that spells items
    '{"items":[{"a":NaN}]}', '{"items":[{"a":-Infinity}]}',  # json's extensions
    '{"items":[1]}', '{"items":{}}', '{"metadata":{}}', "null", '{"items":[{"a":01}]}',
    '{"items":[{"a":"\\q"}]}', '{"items":[{"a":1,}]}', '{"items":[{"a":1}]', '{"items":[{"a":"\\u12"}]}',
    "[" * 300 + "]" * 300,
])
def test_the_scan_steps_aside(text: str) -> None:
    assert scan(text)[0] < 0


def go_list(rng: random.Random) -> str:
    """A NodeList in kube-scheduler's own layout (Go's encoder: no spaces, metadata then items)."""
    items = [{"metadata": {"name": f"n{i}", "uid": f"u{rng.randrange(4)}"}, "x": random_value(rng),
              "pad": "p" * rng.randrange(200, 400)} for i in range(rng.randrange(0, 5))]
    return json.dumps({"metadata": {}, "items": items}, separators=(",", ":"))


def outcome(body: bytes, cache: NodeObjects | None) -> tuple:
    """What decode_args makes of `body`: the items (as JSON values, with their views), or the error."""
    try:
        items = decode_args(body, node_objects=cache).items
    except ProtocolError as exc:
        return ("error", str(exc))
    return ("items", [json.loads(m) for m in items.members], items.views)


@pytest.mark.parametrize("seed", range(3))
def test_known_items_read_without_a_scan_give_what_json_gives(seed: int) -> None:
    """A cache that knows a list's items reads it, and random edits of it, exactly as json does."""
    rng = random.Random(200 + seed)
    fast = 0
    for _ in range(700):
        text = go_list(rng)
        cache = NodeObjects()
        body = ('{"Pod":' + json.dumps(pod_obj("p")) + ',"Nodes":' + text + ',"NodeNames":null}').encode()
        assert outcome(body, cache) == outcome(body, None)  # learnt
        decoded = cache.decoded
        start = body.index(b'"Nodes":') + 8
        if cache._known_only(body, start) is not None:
            fast += 1
        assert outcome(body, cache) == outcome(body, None) and cache.decoded == decoded  # known: none decoded
        mangled = mangle(rng, body.decode(), rng.randrange(start, start + len(text))).encode()
        assert outcome(mangled, cache) == outcome(mangled, None), mangled
    assert fast > 500  # the lists were read without a scan


def nodes_body(nodes: list[dict], pod: dict | None = None, spacing: str = "") -> bytes:
    doc = {"Pod": pod or pod_obj("p", gpu=1), "Nodes": {"metadata": {}, "items": nodes}, "NodeNames": None}
    return json.dumps(doc, indent=spacing or None).encode()


def test_known_encodings_are_not_decoded_again() -> None:
    cache = NodeObjects()
    nodes = [node_obj(f"n{i}", gpu=i % 3) for i in range(40)]
    first = decode_args(nodes_body(nodes), node_objects=cache)
    assert cache.decoded == 40
    assert first.items.views == [NodeView.from_api(n) for n in nodes]
    assert first.names == [f"n{i}" for i in range(40)]
    # the next pod, a subset of the nodes in another order: all found by their bytes
    again = decode_args(nodes_body(nodes[::-2], pod_obj("q")), node_objects=cache)
    assert cache.decoded == 40
    assert again.items.views == [NodeView.from_api(n) for n in nodes[::-2]]
    # one node changed: only it is decoded
    nodes[5] = node_obj("n5", gpu=8, labels={"new": "label"})
    third = decode_args(nodes_body(nodes), node_objects=cache)
    assert cache.decoded == 41 and third.items.views[5].labels["new"] == "label"
    # the general path (an escape json must decode) gives the same views
    assert decode_args(nodes_body(nodes, spacing=" "), node_objects=cache).items.views == third.items.views
    assert decode_args(nodes_body(nodes)).items.views == third.items.views  # and without a cache


def test_old_encodings_are_dropped_beyond_the_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("kubeview.scheduling.node_objects.MIN_KEPT", 10)
    cache = NodeObjects()
    for version in range(5):
        nodes = [node_obj(f"n{i}", labels={"v": str(version)}) for i in range(4)]
        decode_args(nodes_body(nodes), node_objects=cache)
        assert len(cache._views) <= 12
    assert cache.decoded == 20
    decode_args(nodes_body(nodes), node_objects=cache)  # the latest call's nodes are still known
    assert cache.decoded == 20


def test_a_filter_reply_echoes_the_passing_nodes_own_bytes() -> None:
    nodes = [node_obj(f"n{i}", gpu=1) for i in range(6)]
    args = decode_args(nodes_body(nodes, spacing=" "), node_objects=NodeObjects())
    passed = np.array([True, False, True, True, False, False])
    reply = filter_reply(args, passed, {"n1": "x", "n4": "x", "n5": "x"}, {})
    doc = json.loads(reply)
    assert doc["Nodes"] == {"metadata": {}, "items": [nodes[0], nodes[2], nodes[3]]}
    assert doc["FailedNodes"] == {"n1": "x", "n4": "x", "n5": "x"} and doc["Error"] == ""


def test_the_recorded_request_is_scanned() -> None:
    record = json.loads((FIXTURES / "extender-requests-nodecachecapable-false.jsonl").read_text().splitlines()[0])
    body = record["raw_body"].encode()
    cache = NodeObjects()
    args = decode_args(body, node_objects=cache)
    objects = json.loads(body)["Nodes"]["items"]
    assert cache.decoded == len(objects) > 0
    assert args.items.views == [NodeView.from_api(n) for n in objects]
    assert [json.loads(m) for m in args.items.members] == objects


@pytest.mark.parametrize(("nodes_json", "message"), [
    ('{"items": [{"metadata": {}}]}', "Nodes must be a NodeList whose items have metadata.name"),
    ('{"items": [{"metadata": {"name": "a"}, "status": {"capacity": {"cpu": "lots"}}}]}', "a Node in Nodes cannot be read"),
    ('{"items": [{"metadata": {"name": "a"}, "x": ' + "1" * 5000 + "}]}", "request body is not valid JSON"),
    ('{"items": [{"metadata": {"name": "a"}}, 7]}', "Nodes must be a NodeList whose items have metadata.name"),
])
def test_bad_nodes_are_refused_with_a_reason(nodes_json: str, message: str) -> None:
    body = ('{"Pod": ' + json.dumps(pod_obj("p")) + ', "Nodes": ' + nodes_json + ', "NodeNames": null}').encode()
    for cache in (NodeObjects(), None):
        with pytest.raises(ProtocolError, match=message):
            decode_args(body, node_objects=cache)


def test_the_usage_overlay_equals_a_fresh_overlay_and_keeps_the_capacity_side() -> None:
    views = [NodeView.from_api(node_obj(f"n{i}", gpu=2)) for i in range(5)]
    base = from_views([NodeView.from_api(node_obj(f"n{i}", gpu=2)) for i in (4, 2, 9)])
    overlay = UsageOverlay()
    for step in range(3):
        base.requested[:, 0] = [100 * step, 200, 300]
        got, want = overlay(views, base), with_usage_from(views, base)
        assert got.nodes == want.nodes and got.resources == want.resources
        for field in ("capacity", "allocatable", "requested", "limits"):
            assert np.array_equal(getattr(got, field), getattr(want, field)), field
        assert got.requested[4, 0] == 100 * step and got.requested[0].sum() == 0
    assert overlay(views, base).capacity is overlay(views, base).capacity  # reused while nothing changed
    other = from_views(views[:2])
    assert overlay(views, other).requested.sum() == 0  # another node list: mapped again
