"""Objects for the autoscaling tests: the fixtures under tests/fixtures/autoscaling (each says where its
shape comes from) and plain Node / Pod dicts in the API's shape."""

from __future__ import annotations

from pathlib import Path

import yaml

from kubeview.model.kube_events import EventView, parse_time

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "autoscaling"
NOW = parse_time("2026-11-22T10:05:00Z") or 0.0


def fixture(name: str) -> list[dict]:
    return [d for d in yaml.safe_load_all((FIXTURES / name).read_text()) if d]


def of_kind(name: str, kind: str) -> list[dict]:
    return [d for d in fixture(name) if d.get("kind") == kind]


def events_of(pod: str) -> list[EventView]:
    views = [EventView.from_api(e) for e in fixture("events.yaml") if e["involvedObject"]["name"] == pod]
    return sorted(views, key=lambda e: e.last or 0.0)


def node(name: str, labels: dict[str, str] | None = None, gpus: int = 8, cpu: str = "32",
         annotations: dict[str, str] | None = None, taints: list[dict] | None = None) -> dict:
    alloc = {"cpu": cpu, "memory": "256Gi", "pods": "110"}
    if gpus:
        alloc["nvidia.com/gpu"] = str(gpus)
    return {"metadata": {"name": name, "labels": labels or {}, "annotations": annotations or {}},
            "spec": {"taints": taints or []},
            "status": {"capacity": alloc, "allocatable": alloc,
                       "conditions": [{"type": "Ready", "status": "True"}]}}


def pod(name: str, gpus: int = 0, cpu: str = "1", selector: dict[str, str] | None = None,
        tolerations: list[dict] | None = None, node_name: str | None = None, namespace: str = "default") -> dict:
    requests = {"cpu": cpu}
    if gpus:
        requests["nvidia.com/gpu"] = str(gpus)
    spec: dict = {"containers": [{"name": "c", "resources": {"requests": requests, "limits": dict(requests)}}],
                  "nodeSelector": selector or {}, "tolerations": tolerations or []}
    if node_name:
        spec["nodeName"] = node_name
    status: dict = {"phase": "Pending"}
    if not node_name:
        status["conditions"] = [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable",
                                 "message": "0/9 nodes are available: 9 Insufficient nvidia.com/gpu."}]
    return {"metadata": {"name": name, "namespace": namespace, "uid": f"u-{name}"}, "spec": spec, "status": status}
