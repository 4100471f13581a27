"""peek_continue reads the token only where the API server writes it; Ahead hands back what its call did."""

from __future__ import annotations

import json
import threading

import pytest

from kubeview.cluster.kube.page_ahead import Ahead, peek_continue

TOKEN = "eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6MjgzLCJzdGFydCI6InBmLTA5XHUwMDAwIn0"


def page(metadata: dict, first: str = "metadata", items: int = 3) -> bytes:
    body = {"kind": "PodList", "apiVersion": "v1"}
    parts = {"metadata": metadata, "items": [{"metadata": {"name": f"p{i}", "annotations": {"continue": "x"}}}
                                             for i in range(items)]}
    order = ["metadata", "items"] if first == "metadata" else ["items", "metadata"]
    body.update({k: parts[k] for k in order})
    return json.dumps(body, separators=(",", ":")).encode()


def test_the_token_as_the_api_server_writes_it() -> None:
    assert peek_continue(page({"resourceVersion": "283", "continue": TOKEN, "remainingItemCount": 40})) == TOKEN


def test_no_token_on_the_last_page_or_where_the_server_did_not_put_it() -> None:
    assert peek_continue(page({"resourceVersion": "283"})) is None  # the last page
    # another writer's order: items first, an item's own "continue" annotation is not the token
    assert peek_continue(page({"resourceVersion": "283", "continue": TOKEN}, first="items")) is None
    assert peek_continue(page({"resourceVersion": "283", "continue": ""})) is None
    spaced = json.dumps(json.loads(page({"continue": TOKEN})), indent=2).encode()  # a pretty-printing proxy
    assert peek_continue(spaced) is None
    assert peek_continue(b"") is None and peek_continue(b"not json") is None


def test_ahead_returns_the_value_or_raises_the_calls_exception_in_the_caller() -> None:
    release = threading.Event()

    def slow() -> bytes:
        release.wait(10)
        return b"page 2"

    ahead = Ahead(slow)
    release.set()
    assert ahead.result() == b"page 2"

    class Gone(Exception):
        pass

    def expired() -> bytes:
        raise Gone("continue token expired")

    with pytest.raises(Gone, match="expired"):
        Ahead(expired).result()


def test_the_thread_never_holds_up_a_stop() -> None:
    never = threading.Event()
    Ahead(lambda: never.wait(600) and b"", name="kubeview-test-ahead")
    threads = [t for t in threading.enumerate() if t.name == "kubeview-test-ahead"]
    never.set()
    assert threads and all(t.daemon for t in threads)
