"""A big list page decodes with the cyclic collector paused, and what it made is frozen after: no
collection starts while a page of pods decodes, and later collections do not walk the pages already
read (model/gcpause.py; before, the collections a page's allocations fired walked every earlier
page again: 7.9 s of CPU for 150,000 pods, 1.4 s paused). Over the test API server (tests/kubeapi),
the real `kubernetes` client, four pages of 1.2 MiB."""

from __future__ import annotations

import functools
import gc
import json
import threading

from kubeapi import KubeAPI
from kubernetes import client

from kubeview.cluster.kube import watch
from kubeview.cluster.kube.config import connect
from kubeview.cluster.kube.watch import Informer, KindSpec, Link, WatchSettings
from kubeview.model.events import Listed, SourceEvent

PODS = "/api/v1/pods"
PER_PAGE = 500


def pod(i: int) -> dict:
    return {"metadata": {"name": f"p-{i:05d}", "namespace": "gc", "uid": f"u{i}", "resourceVersion": str(i),
                         "labels": {"app": "a", "i": str(i)}, "annotations": {"note": "x" * 2500}},
            "spec": {"nodeName": f"n{i % 7}", "containers": [{"name": "c", "resources": {
                "requests": {"cpu": "100m", "memory": "64Mi"}}}]},
            "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}}


def page(n: int, last: bool) -> bytes:
    meta = {"resourceVersion": "99", **({} if last else {"continue": f"token-{n + 1}"})}
    body = {"kind": "PodList", "apiVersion": "v1", "metadata": meta,
            "items": [pod(n * PER_PAGE + i) for i in range(PER_PAGE)]}
    return json.dumps(body, separators=(",", ":")).encode()


def test_pages_decode_without_a_collection_and_stay_out_of_later_ones(kube_api: KubeAPI) -> None:
    pages = [page(n, n == 3) for n in range(4)]
    assert all(len(p) >= watch.PAUSE_BYTES for p in pages)
    for p in pages:
        kube_api.respond("GET", PODS, 200, p)
    core = client.CoreV1Api(connect(str(kube_api.kubeconfig)).api_client)
    events: list[SourceEvent] = []
    informer = Informer(KindSpec("Pod", "pods", functools.partial(core.list_pod_for_all_namespaces)), events.append,
                        threading.Event(), Link(["Pod"], lambda e: None), kube_api.url, WatchSettings(page_size=PER_PAGE))
    started: list[tuple[int, bool]] = []  # (generation, while a page decoded)
    decoding = threading.Event()
    decode = informer._decode_page

    def watched(data: bytes) -> dict:
        decoding.set()
        try:
            return decode(data)
        finally:
            decoding.clear()

    def on_gc(phase: str, info: dict) -> None:
        if phase == "start" and threading.current_thread() is threading.main_thread():
            started.append((info["generation"], decoding.is_set()))

    informer._decode_page = watched  # type: ignore[method-assign]
    frozen_before = gc.get_freeze_count()
    gc.callbacks.append(on_gc)
    try:
        informer._list()
        frozen = gc.get_freeze_count() - frozen_before
    finally:
        gc.callbacks.remove(on_gc)
    listed = [e for e in events if isinstance(e, Listed)]
    assert len(listed) == 1 and len(listed[0].objects) == 4 * PER_PAGE
    assert [o["metadata"]["name"] for o in listed[0].objects] == [f"p-{i:05d}" for i in range(4 * PER_PAGE)]
    assert not [g for g, during in started if during], started  # no collection while a page decoded
    assert frozen >= 4 * PER_PAGE * 5  # each pod's dicts (pod, metadata, labels, spec, status, ...) frozen
