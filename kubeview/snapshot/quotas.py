"""The `quotas` part of the snapshot document and its JSON Schema (pure; document.py puts it in place).

Per namespace with a ResourceQuota (or a workload held by one): each quota's keys with hard, the quota
controller's used (status.used) and kubeview's own count from the pods (model/quota/counting.py; null
where kubeview does not count that key or scope), and the Jobs, ReplicaSets and StatefulSets the quota
admission holds back (model/quota/held.py), in the API server's words. Amounts are model units of the
key: millicores for cpu keys (`cpu`, `requests.cpu`, `limits.cpu`), bytes for memory, counts otherwise.
"""

from __future__ import annotations

from datetime import UTC, datetime

from kubeview.model.cluster import ClusterModel
from kubeview.model.kinds import quota_unavailable
from kubeview.model.quota.counting import unevaluated_scopes
from kubeview.model.quota.held import Held
from kubeview.snapshot.schema_parts import COUNT as _COUNT
from kubeview.snapshot.schema_parts import OPT_INT as _OPT_INT
from kubeview.snapshot.schema_parts import OPT_STR as _OPT_STR
from kubeview.snapshot.schema_parts import STR as _STR
from kubeview.snapshot.schema_parts import TIME as _TIME
from kubeview.snapshot.schema_parts import obj as _obj


def _iso(t: float | None) -> str | None:
    return None if t is None else datetime.fromtimestamp(t, UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def held_doc(h: Held) -> dict:
    return {"kind": h.kind, "name": h.name, "quota": h.quota, "words": h.words(), "message": h.message,
            "notCreated": h.not_created, "reporter": h.reporter, "count": h.count, "lastAt": _iso(h.last),
            "limits": [{"key": k, "used": used, "hard": hard} for k, used, hard in h.limits], "origin": h.origin()}


def quotas_doc(model: ClusterModel) -> dict:
    uses = model.quota_uses()
    held = model.held()
    shown = model.display_namespace
    quotas_in: dict[str, list] = {}  # grouped once: 500 namespaces each asking of 500 quotas was 250,000 steps
    for q in model.quotas.quotas():
        quotas_in.setdefault(q.namespace, []).append(q)
    held_in: dict[str, list[Held]] = {}
    for key, h in held.items():
        held_in.setdefault(key[1], []).append(h)
    out = []
    for ns in sorted(quotas_in.keys() | held_in.keys()):
        if shown is not None and ns != shown:
            continue
        quotas = [{
            "name": q.name, "scopes": list(q.scopes), "scopeSelector": [str(r) for r in q.scope_selector],
            "uncounted": unevaluated_scopes(q), "reported": q.reported,
            "resources": [{"key": u.key, "hard": u.hard, "used": u.used, "counted": u.counted,
                           "hardText": u.hard_text, "usedText": u.used_text or None, "differs": u.differs,
                           "full": u.full} for u in uses.get(q.key, ())],
        } for q in quotas_in.get(ns, ())]
        out.append({"namespace": ns, "quotas": quotas, "held": [held_doc(h) for h in held_in.get(ns, ())]})
    return {"unavailable": quota_unavailable(model.unavailable),
            "heldPods": sum(h.not_created for key, h in held.items() if shown is None or key[1] == shown),
            "namespaces": out}


HELD_SCHEMA = _obj({
    "kind": {"enum": ["Job", "ReplicaSet", "StatefulSet"]}, "name": _STR,
    "quota": {**_STR, "description": "the quota the API server named"},
    "words": {**_STR, "description": "the one line the views show (held by quota gpus: requests.nvidia.com/gpu 2/2 — "
                                    "1 pod not created)"},
    "message": {**_STR, "description": "the API server's words, as the controller's FailedCreate Event carries them"},
    "notCreated": {**_COUNT, "description": "pods its spec asks for that do not exist (from its status and pods)"},
    "reporter": _STR, "count": _COUNT, "lastAt": _TIME,
    "limits": {"type": "array", "items": _obj({"key": _STR, "used": _STR, "hard": _STR},
                                              "the refused keys: the quota's used and hard now, as written")},
    "origin": {**_STR, "description": "where this comes from"},
})

QUOTAS_SCHEMA = _obj({
    "unavailable": {**_OPT_STR, "description": "why quotas are not shown (the ResourceQuota list was refused)"},
    "heldPods": {**_COUNT, "description": "pods not created because a quota refused them"},
    "namespaces": {"type": "array", "items": _obj({
        "namespace": _STR,
        "quotas": {"type": "array", "items": _obj({
            "name": _STR,
            "scopes": {"type": "array", "items": _STR},
            "scopeSelector": {"type": "array", "items": _STR},
            "uncounted": {"type": "array", "items": _STR,
                          "description": "scopes kubeview does not evaluate: its counts are null"},
            "reported": {"type": "boolean", "description": "the quota controller has written status.used"},
            "resources": {"type": "array", "items": _obj({
                "key": _STR, "hard": {"type": "integer"}, "used": _OPT_INT,
                "counted": {**_OPT_INT, "description": "kubeview's count from the pods; null: not counted"},
                "hardText": _STR, "usedText": _OPT_STR,
                "differs": {"type": "boolean"}, "full": {"type": "boolean"},
            }, "one key: amounts in model units (millicores for cpu keys)")},
        })},
        "held": {"type": "array", "items": HELD_SCHEMA},
    })},
}, "ResourceQuotas per namespace and the workloads they hold back (#40)")
