"""The `gangs` part of the snapshot document and its JSON Schema (pure; document.py puts it in place).

Per gang (model/gangs/store.py): which scheduler's object it is, minCount, its members with where they are or
why they wait, the counts computed from them, the group's condition, and — for a gang with members
waiting — its fit now (scheduling/gang_fit.py, computed by the command and handed in, since the model
does not import scheduling): whether all of it can be placed together, one placement, and what blocks it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kubeview.model.gangs.store import Gang, GangStore, GroupKey


def gang_items(store: GangStore, shown: str | None = None,
               fits: Mapping[GroupKey, tuple[Any, str]] | None = None) -> tuple[list[Gang], list[dict | None]]:
    """Every gang (in namespace `shown` only, when set) and, beside each, its fit's document (`fits`: gang
    key -> (a GangFit, the policy it was computed under)) or None: what `gang_doc` reads."""
    gangs = store.gangs()
    if shown is not None:
        gangs = [g for g in gangs if g.namespace == shown]
    if not fits:
        return gangs, [None] * len(gangs)
    return gangs, [fit_doc(*fit) if (fit := fits.get(g.key)) is not None else None for g in gangs]


def gangs_doc(store: GangStore, shown: str | None = None, fits: Mapping[GroupKey, tuple[Any, str]] | None = None) -> list[dict]:
    """Every gang's document (see `gang_items`)."""
    return [gang_doc(g, fit) for g, fit in zip(*gang_items(store, shown, fits), strict=True)]


def gang_doc(g: Gang, fit: dict | None) -> dict:
    cond = None if g.condition_type is None else {
        "type": g.condition_type, "status": g.condition_status, "reason": g.condition_reason,
        "message": g.condition_message}
    return {
        "scheduler": g.scheduler, "kind": g.kind, "apiVersion": g.api_version, "namespace": g.namespace,
        "name": g.name, "minCount": g.min_count, "size": g.size, "state": g.state,
        "counts": g.counts(),
        "condition": cond, "queue": g.queue, "claims": list(g.claims), "workload": g.workload, "owner": g.owner,
        "phase": g.phase, "reported": dict(g.reported) if g.reported is not None else None,
        "subgroups": [{"name": n, "minMember": m, "members": c, "bound": b} for n, m, c, b in g.subgroup_counts()],
        "disruptionMode": g.disruption_mode, "topologyKey": g.topology_key,
        "members": [{"name": m.name, "node": m.node, "state": m.state, "reason": m.reason, "message": m.message,
                     "subgroup": m.subgroup} for m in g.members],
        "fit": fit,
    }


def fit_doc(fit: Any, policy: str) -> dict:
    """A GangFit (scheduling/gang_fit.py) as plain JSON; read by attribute, so the model need not import it."""
    return {
        "policy": policy, "fits": fit.fits, "room": fit.room, "summary": fit.summary, "message": fit.message,
        "placement": [{"pod": p.name, "node": n} for p, n in fit.placement],
        "saturated": {n: dict(r) for n, r in sorted(fit.saturated.items())},
        "excluded": fit.excluded_counts(), "excludedNodes": len(fit.excluded), "notes": list(fit.notes),
        "domain": fit.domain, "domains": [{"name": d, "room": room, "members": n, "freeGpus": free}
                                          for d, (room, n, free) in sorted(fit.domains.items())],
    }


_STR = {"type": "string"}
_OPT_STR = {"type": ["string", "null"]}
_COUNT = {"type": "integer", "minimum": 0}


def _obj(props: dict) -> dict:
    return {"type": "object", "properties": props, "required": list(props)}


_COUNTS_MAP = {"type": "object", "additionalProperties": _COUNT}
FIT_SCHEMA: dict = {**_obj({
    "policy": {"enum": ["pack", "spread", "balanced"]},
    "fits": {"type": "boolean", "description": "at least minCount members can be placed together now"},
    "room": {**_COUNT, "description": "members that could be placed together now (bound ones included)"},
    "summary": {**_STR, "description": 'e.g. "4 × 8 GPUs: room for 3 (largest free block per node: a 8, b 8, c 8, d 4)"'},
    "message": {**_OPT_STR, "description": "the group's reason in kube-scheduler's words when it does not fit"},
    "placement": {"type": "array", "items": _obj({"pod": _STR, "node": _STR}),
                  "description": "one placement of every member placed (empty when it does not fit)"},
    "saturated": {"type": "object", "additionalProperties": _COUNTS_MAP,
                  "description": "node -> reason -> members it refused after taking some"},
    "excluded": {**_COUNTS_MAP, "description": "reason -> nodes that took no member for it"},
    "excludedNodes": _COUNT,
    "notes": {"type": "array", "items": _STR},
    "domain": {**_OPT_STR, "description": "a gang with a topology key: the domain it goes to; null: none holds it"},
    "domains": {"type": "array", "items": _obj({"name": _STR, "room": _COUNT, "members": _COUNT, "freeGpus": _COUNT}),
                "description": "a gang with a topology key: each domain tried, the members it allows (empty: no key)"},
}), "type": ["object", "null"]}
GANG_SCHEMA: dict = _obj({
    "scheduler": {"enum": ["kubernetes", "kai", "kueue", "volcano"]},
    "kind": {"enum": ["PodGroup", "kai.PodGroup", "kueue.Workload", "volcano.PodGroup"]},
    "apiVersion": _STR, "namespace": _STR, "name": _STR, "minCount": _COUNT,
    "size": {"type": ["integer", "null"], "minimum": 0, "description": "Kueue: the podSets' counts; else null"},
    "state": {"enum": ["empty", "finished", "running", "scheduled", "incomplete", "waiting"]},
    "counts": _obj({"placed": _COUNT, "running": _COUNT, "pending": _COUNT, "finished": _COUNT}),
    "condition": {"type": ["object", "null"], "properties": {"type": _STR, "status": _OPT_STR, "reason": _OPT_STR,
                                                            "message": _OPT_STR}},
    "queue": _OPT_STR, "claims": {"type": "array", "items": _STR}, "workload": _OPT_STR, "owner": _OPT_STR,
    "phase": _OPT_STR, "reported": {"type": ["object", "null"], "additionalProperties": _COUNT},
    "subgroups": {"type": "array", "items": _obj({"name": _STR, "minMember": _COUNT, "members": _COUNT, "bound": _COUNT})},
    "disruptionMode": _OPT_STR,
    "topologyKey": {**_OPT_STR, "description": "upstream: schedulingConstraints.topology[0].key (one domain)"},
    "members": {"type": "array", "items": _obj({
        "name": _STR, "node": _OPT_STR, "state": {"enum": ["placed", "running", "pending", "finished"]},
        "reason": _OPT_STR, "message": _OPT_STR, "subgroup": _OPT_STR})},
    "fit": FIT_SCHEMA,
})
