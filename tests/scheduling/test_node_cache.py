"""NodeCache: full Nodes decoded once per distinct encoding, found by a cheap key but served only
when the whole item matches, and bounded in bytes."""

from __future__ import annotations

import json

import msgspec

from kubeview.scheduling.node_cache import KEY_HEAD, KEY_TAIL, NodeCache


def _item(name: str, cpu: str, pad: int = 0) -> bytes:
    """A Node whose first KEY_HEAD and last KEY_TAIL bytes do not depend on `cpu` (with pad)."""
    node = {"metadata": {"name": name, "labels": {"pad": "x" * pad}},
            "status": {"allocatable": {"cpu": cpu}, "capacity": {"cpu": cpu}, "zz": "y" * pad}}
    return json.dumps(node, separators=(",", ":")).encode()


def _raws(*items: bytes) -> list[msgspec.Raw]:
    return msgspec.json.decode(b"[" + b",".join(items) + b"]", type=list[msgspec.Raw])


def test_a_repeated_item_is_decoded_once() -> None:
    cache = NodeCache()
    a, b = _item("a", "8"), _item("b", "4")
    first = cache.items(_raws(a, b))
    again = cache.items(_raws(b, a))
    assert cache.decoded == 2
    assert again.views == [first.views[1], first.views[0]]
    assert again.raws == [b, a]


def test_an_item_with_the_same_key_but_other_bytes_gets_its_own_view() -> None:
    real, planted = _item("n1", "8", pad=400), _item("n1", "1", pad=400)
    assert len(real) == len(planted) and real[:KEY_HEAD] == planted[:KEY_HEAD] and real[-KEY_TAIL:] == planted[-KEY_TAIL:]
    cache = NodeCache()
    [mine] = cache.items(_raws(planted)).views
    [theirs] = cache.items(_raws(real)).views
    assert mine.allocatable["cpu"] == 1000 and theirs.allocatable["cpu"] == 8000
    assert cache.decoded == 2 and cache.size == len(real)  # the newer replaced the older


def test_the_cache_stays_within_its_bytes() -> None:
    items = [_item(f"node-{i}", "8") for i in range(100)]
    cache = NodeCache(max_bytes=10 * len(items[0]))
    cache.items(_raws(*items))
    assert cache.size <= 10 * len(items[0])
    cache.items(_raws(items[-1]))  # among the last kept
    assert cache.decoded == 100
