"""Events of the local cluster, shaped as kube-apiserver v1.36 serves them through core/v1 (pure).

Two recorders, as in Kubernetes (tests/fixtures/k8s/events.json shows both): kube-scheduler writes
through events.k8s.io (`eventTime`, `action`, a `series` when repeated, no `source`), the
controllers and kubelets through the legacy recorder (`source.component`, `count`,
`firstTimestamp`/`lastTimestamp`). Names are `INVOLVED.HEX` like client-go's. The messages are the
upstream ones: "Successfully assigned NS/POD to NODE", "Created pod: POD", "Started container C",
"Stopping container C", "Scaled up replica set RS from 0 to 3".
"""

from __future__ import annotations

import itertools
import time
import uuid

from kubeview.cluster.local.objects import API_VERSIONS
from kubeview.cluster.local.objects import timestamp as stamp

SCHEDULER = "default-scheduler"
SCHEDULER_INSTANCE = "default-scheduler-local"
_serial = itertools.count(1)


def _now(t: float | None) -> float:
    return time.time() if t is None else t


def micro_stamp(t: float) -> str:
    """metav1.MicroTime as the apiserver writes it: `2026-11-22T10:04:59.197068Z`."""
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(t)) + f".{int(t * 1e6) % 1_000_000:06d}Z"


def _reference(kind: str, o: dict, field_path: str | None = None) -> dict:
    meta = o.get("metadata") or {}
    ref = {"kind": kind, "namespace": meta.get("namespace", ""), "name": meta.get("name", ""),
           "uid": meta.get("uid", ""), "apiVersion": API_VERSIONS.get(kind, "v1"),
           "resourceVersion": meta.get("resourceVersion", "")}
    if field_path:
        ref["fieldPath"] = field_path
    return ref


def _metadata(ref: dict, t: float) -> dict:
    # client-go: fmt.Sprintf("%v.%x", ref.Name, t.UnixNano()); a serial keeps two in one tick apart
    name = f"{ref['name']}.{int(t * 1e9) + next(_serial):x}"
    return {"name": name, "namespace": ref["namespace"] or "default", "uid": str(uuid.uuid4()),
            "resourceVersion": "0", "creationTimestamp": stamp(t)}


def legacy_event(kind: str, o: dict, type_: str, reason: str, message: str, component: str, *,
                 host: str = "", field_path: str | None = None, t: float | None = None) -> dict:
    """A controller's or kubelet's Event (client-go's legacy recorder)."""
    t = _now(t)
    ref = _reference(kind, o, field_path)
    source = {"component": component, **({"host": host} if host else {})}
    return {"metadata": _metadata(ref, t), "involvedObject": ref, "reason": reason, "message": message,
            "source": source, "firstTimestamp": stamp(t), "lastTimestamp": stamp(t), "count": 1,
            "type": type_, "eventTime": None, "reportingComponent": component, "reportingInstance": host}


def scheduler_event(pod: dict, type_: str, reason: str, message: str, action: str, t: float | None = None) -> dict:
    """kube-scheduler's Event (events.k8s.io recorder): `Scheduled`/Binding or `FailedScheduling`/Scheduling."""
    t = _now(t)
    ref = _reference("Pod", pod)
    return {"metadata": _metadata(ref, t), "involvedObject": ref, "reason": reason, "message": message,
            "source": {}, "firstTimestamp": None, "lastTimestamp": None, "type": type_,
            "eventTime": micro_stamp(t), "action": action, "reportingComponent": SCHEDULER,
            "reportingInstance": SCHEDULER_INSTANCE}


def repeated(event: dict, t: float | None = None) -> dict:
    """The same Event seen again: the series count (events.k8s.io) or the count (legacy) rises."""
    t = _now(t)
    out = {**event, "metadata": dict(event["metadata"])}
    if out.get("eventTime"):
        series = out.get("series") or {"count": 1}
        out["series"] = {"count": int(series["count"]) + 1, "lastObservedTime": micro_stamp(t)}
    else:
        out["count"] = int(out.get("count") or 1) + 1
        out["lastTimestamp"] = stamp(t)
    return out


def aggregation_key(event: dict) -> tuple[str, str, str, str]:
    """What makes two Events the same occurrence again: the object (uid), type, reason and message."""
    ref = event.get("involvedObject") or {}
    return (ref.get("uid", ""), event.get("type", ""), event.get("reason", ""), event.get("message", ""))
