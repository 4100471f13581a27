"""A paged list asks for its next page while it decodes this one (kube/page_ahead.py), on the real API
server: the token read from a page's first bytes is the page's own on every page the server writes,
and the list a kind's informer ends with is the whole list, every time, with every page after the first
asked for ahead."""

from __future__ import annotations

import functools
import json
import threading
from collections.abc import Iterator

import pytest
from kubernetes import client

from kubeview.cluster.kube.page_ahead import peek_continue
from kubeview.cluster.kube.watch import Informer, KindSpec, Link, WatchSettings
from kubeview.model.events import Listed, Listing, SourceEvent

from .objects import api, ensure_namespace
from .plane import Plane

NS = "pages-ahead"
PODS = 45
LIMIT = 7  # 7 pages: six of 7 and one of 3


@pytest.fixture(scope="module")
def core(plane: Plane) -> Iterator[client.CoreV1Api]:
    """45 pods held back from scheduling (a scheduling gate): nothing changes them while they are listed."""
    core = client.CoreV1Api(api(plane.kubeconfig))
    ensure_namespace(core, NS)
    for i in range(PODS):
        core.create_namespaced_pod(NS, client.V1Pod(
            metadata=client.V1ObjectMeta(name=f"pa-{i:02d}", labels={"n": str(i)}),
            spec=client.V1PodSpec(containers=[client.V1Container(name="c", image="registry.k8s.io/pause:3.10")],
                                  scheduling_gates=[client.V1PodSchedulingGate(name="kubeview.test/hold")])))
    yield core
    core.delete_collection_namespaced_pod(NS, grace_period_seconds=0)


def test_the_peeked_token_is_the_pages_own_on_every_page(core: client.CoreV1Api) -> None:
    token, pages = None, 0
    while True:
        kwargs = {"limit": LIMIT, "_preload_content": False, **({"_continue": token} if token else {})}
        raw = core.list_namespaced_pod(NS, **kwargs).data
        token = json.loads(raw)["metadata"].get("continue")
        assert peek_continue(raw) == token, raw[:300]
        pages += 1
        if not token:
            break
    assert pages == -(-PODS // LIMIT)


@pytest.mark.parametrize("run", range(5))
def test_an_informer_lists_every_pod_with_the_pages_asked_ahead(core: client.CoreV1Api, run: int) -> None:  # noqa: ARG001
    events: list[SourceEvent] = []
    spec = KindSpec("Pod", "pods", functools.partial(core.list_namespaced_pod, NS), NS)
    informer = Informer(spec, events.append, threading.Event(), Link(["Pod"], lambda e: None),
                        core.api_client.configuration.host, WatchSettings(page_size=LIMIT))
    informer._list()  # the list half of run(): run() would go on to watch
    listed = [e for e in events if isinstance(e, Listed)]
    assert len(listed) == 1
    names = sorted(o["metadata"]["name"] for o in listed[0].objects)
    assert names == sorted(p.metadata.name for p in core.list_namespaced_pod(NS).items) and len(names) == PODS
    pages = -(-PODS // LIMIT)
    assert informer.pages_ahead == pages - 1
    progress = [e.items for e in events if isinstance(e, Listing)]
    assert progress == [0, *range(LIMIT, PODS, LIMIT)]  # said after each page but the last, in order
