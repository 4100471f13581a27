"""The trimmed pod decode (kube/pod_wire.py) gives every reader what json.loads gave it: for every
recorded pod (lists and watch streams in tests/fixtures/k8s, from real API servers), the model's
views, the Jobs' and gangs' readings, the DRA claim names and the whole model's snapshot are equal."""

from __future__ import annotations

import json
from pathlib import Path

from kubeview.cluster.kube import pod_wire
from kubeview.model.cluster import ClusterModel
from kubeview.model.events import ConnectionState, Listed, WatchEvent
from kubeview.model.gangs.store import group_keys
from kubeview.model.gpus.dra import mapped_resources, pod_claim_names
from kubeview.model.jobs.views import JobPodView
from kubeview.model.views import PodView
from kubeview.snapshot.document import snapshot_json

FIXTURES = Path(__file__).parents[1] / "fixtures" / "k8s"


def pod_lists() -> list[tuple[Path, bytes]]:
    found = []
    for path in sorted(FIXTURES.rglob("*.json")):
        data = path.read_bytes()
        if b'"PodList"' in data and json.loads(data).get("kind") == "PodList":
            found.append((path, data))
    return found


def pod_watch_lines() -> list[tuple[Path, bytes]]:
    found = []
    for path in sorted(FIXTURES.rglob("*.jsonl")):
        for line in path.read_bytes().splitlines():
            if not line.strip() or b'"kind":"Pod"' not in line.replace(b" ", b""):
                continue
            doc = json.loads(line)
            if isinstance(doc, dict) and "type" in doc and (doc.get("object") or {}).get("kind") == "Pod":
                found.append((path, line))
    return found


def readings(pod: dict) -> tuple:
    return (PodView.from_api(pod), JobPodView.from_api(pod), group_keys(pod), pod_claim_names(pod),
            mapped_resources(pod))


def model_of(pods: list[dict]) -> str:
    model = ClusterModel("fixtures")
    model.connection = ConnectionState("connecting", 0.0)  # not the clock: two models compare equal
    model.apply(Listed("Pod", pods, "1"))
    return snapshot_json(model, now=0.0)


def test_every_recorded_pod_list_reads_the_same_trimmed() -> None:
    lists = pod_lists()
    assert len(lists) >= 40
    pods = whole_bytes = trimmed_bytes = 0
    for path, data in lists:
        full, trimmed = json.loads(data), pod_wire.pod_list(data)
        assert trimmed["metadata"] == full["metadata"], path
        items, kept = full.get("items") or [], trimmed.get("items") or []
        assert [readings(p) for p in kept] == [readings(p) for p in items], path
        assert model_of(kept) == model_of(items), path
        pods += len(items)
        whole_bytes += len(json.dumps(items))
        trimmed_bytes += len(json.dumps(kept))
    assert pods >= 200
    assert trimmed_bytes < 0.6 * whole_bytes  # managedFields, env, images...: skipped, not built


def test_every_recorded_pod_event_reads_the_same_trimmed() -> None:
    lines = pod_watch_lines()
    assert len(lines) >= 100
    full_model, trimmed_model = ClusterModel(), ClusterModel()
    for path, line in lines:
        full, trimmed = json.loads(line), pod_wire.pod_event(line)
        assert trimmed["type"] == full["type"], path
        if full["type"] not in ("ADDED", "MODIFIED", "DELETED"):
            assert trimmed == full, path  # a BOOKMARK: whole
            continue
        assert readings(trimmed["object"]) == readings(full["object"]), path
        full_model.apply(WatchEvent("Pod", full["type"], full["object"]))
        trimmed_model.apply(WatchEvent("Pod", trimmed["type"], trimmed["object"]))
    assert snapshot_json(trimmed_model, now=0.0) == snapshot_json(full_model, now=0.0)


def test_an_error_event_keeps_its_status_whole() -> None:
    line = next(x for x in (FIXTURES / "watch-410-rv1.jsonl").read_bytes().splitlines() if b"ERROR" in x)
    event = pod_wire.pod_event(line)
    assert event == json.loads(line)
    assert event["object"]["code"] == 410
