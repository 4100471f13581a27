"""The protobuf half of a pod list (kube/pod_proto.py) without a server: the `continue` token peeked
from a page's first bytes (page_ahead.py) is the page's own, a last page and a cut page give none, a
body that is not a protobuf pod list is a ValueError, and `KUBEVIEW_POD_LIST` chooses the encoding.
What the pods read as is held against a real API server: tests/realk8s/test_pod_proto_real.py."""

from __future__ import annotations

import pytest

from kubeview.cluster.kube import pod_proto
from kubeview.cluster.kube.page_ahead import PEEK_BYTES, peek_continue
from kubeview.cluster.kube.watch_settings import WatchSettings
from kubeview.cluster.source import SourceError


def _page(token: str, pods: int = 3, type_meta: bool = True) -> bytes:
    unknown_type, list_type = pod_proto._messages()
    page = list_type()
    page.metadata.resourceVersion = "812"
    setattr(page.metadata, "continue", token)
    if token:
        page.metadata.remainingItemCount = 40
    for i in range(pods):
        pod = page.items.add()
        pod.metadata.name, pod.metadata.namespace = f"p{i}", "ns"
        pod.spec.nodeName = "n1"
        pod.spec.containers.add(name="main").resources.requests["cpu"].string = "250m"
    unknown = unknown_type(raw=page.SerializeToString())
    if type_meta:
        unknown.typeMeta.apiVersion, unknown.typeMeta.kind = "v1", "PodList"
    return pod_proto.MAGIC + unknown.SerializeToString()


def test_the_token_peeked_is_the_pages_own() -> None:
    for token in ("eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6ODEyfQ", "x" * 300):
        for type_meta in (True, False):
            data = _page(token, type_meta=type_meta)
            page = pod_proto.pod_list(data)
            assert peek_continue(data) == page["metadata"]["continue"] == token
            assert page["metadata"] == {"resourceVersion": "812", "continue": token, "remainingItemCount": 40}
            assert [p["metadata"]["name"] for p in page["items"]] == ["p0", "p1", "p2"]
            assert page["items"][0]["spec"] == {"nodeName": "n1", "containers": [
                {"name": "main", "resources": {"requests": {"cpu": "250m"}}}]}


def test_no_token_where_there_is_none_or_it_is_cut() -> None:
    last = _page("")
    assert peek_continue(last) is None and "continue" not in pod_proto.pod_list(last)["metadata"]
    long = _page("t" * (PEEK_BYTES + 10))
    assert peek_continue(long) is None  # past the peeked bytes: asked for as before, not guessed
    assert peek_continue(_page("abc")[:30]) is None


def test_a_body_that_is_no_pod_list_is_a_value_error() -> None:
    for body in (b'{"kind":"PodList"}', pod_proto.MAGIC + b"\xff\xff\xff", b""):
        with pytest.raises(ValueError):
            pod_proto.pod_list(body)


def test_the_encoding_is_chosen_by_environment() -> None:
    assert WatchSettings.from_env({}).pod_protobuf
    assert not WatchSettings.from_env({"KUBEVIEW_POD_LIST": "JSON "}).pod_protobuf
    assert WatchSettings.from_env({"KUBEVIEW_POD_LIST": "protobuf", "KUBEVIEW_CONNECT_TIMEOUT": "3"}) == \
        WatchSettings(connect_timeout=3.0)
    with pytest.raises(SourceError, match="KUBEVIEW_POD_LIST must be protobuf or json, not 'yaml'"):
        WatchSettings.from_env({"KUBEVIEW_POD_LIST": "yaml"})
