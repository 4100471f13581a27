"""The `autoscaling` part of the snapshot document and its JSON Schema (pure; document.py puts it in place).

The node groups the autoscalers keep (Cluster Autoscaler's, Karpenter's NodePools, the embedded
cluster's: model/autoscaling/store.py) with their sizes against their limits, a scale-up under way,
a backoff or the last error in the autoscaler's (or the cloud's) words; and per pending pod an
autoscaler said something about, what it waits for (model/autoscaling/waits.py), with the counts of
every pending pod by what it waits for: room on nodes that exist, nodes being added, or nothing that
will come.
"""

from __future__ import annotations

from datetime import UTC, datetime

from kubeview.model.autoscaling.groups import WAIT_ROOM, WAIT_STATES, NodeGroup, PodWait
from kubeview.model.autoscaling.words import GROUP_STATES, group_state, nodes_it_can_add
from kubeview.model.cluster import ClusterModel
from kubeview.model.kinds import autoscaling_unavailable
from kubeview.snapshot.schema_parts import COUNT as _COUNT
from kubeview.snapshot.schema_parts import OPT_INT as _OPT_INT
from kubeview.snapshot.schema_parts import OPT_STR as _OPT_STR
from kubeview.snapshot.schema_parts import STR as _STR
from kubeview.snapshot.schema_parts import TIME as _TIME
from kubeview.snapshot.schema_parts import obj as _obj


def _iso(t: float | None) -> str | None:
    return None if t is None else datetime.fromtimestamp(t, UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def autoscaling_doc(model: ClusterModel, now: float) -> dict:
    store = model.autoscaling
    waits = model.pod_waits(now)  # the pods an autoscaler said something about; the others wait for room
    counts = {state: 0 for state in WAIT_STATES}
    counts[WAIT_ROOM] = model.pending_count() - len(waits)
    waiting_on: dict[tuple[str, str], int] = {}
    said = []
    for key, w in sorted(waits.items()):
        counts[w.state] += 1
        if w.group is not None and w.state != WAIT_ROOM:
            waiting_on[w.group] = waiting_on.get(w.group, 0) + 1
        said.append(wait_doc(key, w))
    return {
        "unavailable": autoscaling_unavailable(model.unavailable),
        "problems": store.problems(),
        "groups": [group_doc(g, now, store.nodes_of(g.key), waiting_on.get(g.key, 0), model) for g in store.groups()],
        "pending": counts,
        "waits": said,
    }


def wait_doc(key: tuple[str, str], w: PodWait) -> dict:
    return {"namespace": key[0], "name": key[1], "state": w.state, "words": w.words,
            "group": None if w.group is None else {"autoscaler": w.group[0], "name": w.group[1]},
            "detail": w.detail, "since": _iso(w.since)}


def group_doc(g: NodeGroup, now: float, nodes: list[str], waiting: int, model: ClusterModel) -> dict:
    state, words = group_state(g, now)
    claims = [{"name": c.name, "stage": c.stage, "node": c.node or None,
               "failure": None if (f := c.failure) is None else f.message or f.reason}
              for c in model.autoscaling.nodeclaims(g.name)] if g.autoscaler == "karpenter" else []
    return {
        "autoscaler": g.autoscaler, "name": g.name, "state": state, "words": words, "health": g.health,
        "size": g.size, "minSize": g.min_size, "maxSize": g.max_size, "target": g.target, "canAdd": nodes_it_can_add(g),
        "limits": [{"resource": lim.resource, "used": lim.used, "limit": lim.limit, "reached": lim.reached}
                   for lim in g.limits],
        "scaleUp": None if g.scale_up is None else {"from": g.scale_up.from_size, "to": g.scale_up.to_size,
                                                    "since": _iso(g.scale_up.since)},
        "backoff": g.backoff, "error": g.error, "errorAt": _iso(g.error_at),
        "gpus": g.gpus, "nodes": nodes, "template": g.template, "nodeClaims": claims, "waitingPods": waiting,
    }


AUTOSCALING_SCHEMA = _obj({
    "unavailable": {**_OPT_STR, "description": "why node groups are not shown (NodePools, NodeClaims or "
                                              "CA's status ConfigMap refused), one line"},
    "problems": {"type": "array", "items": _STR, "description": "a CA status kubeview could not read"},
    "groups": {"type": "array", "items": _obj({
        "autoscaler": {"enum": ["cluster-autoscaler", "karpenter", "embedded"]},
        "name": _STR,
        "state": {"enum": list(GROUP_STATES)},
        "words": {**_STR, "description": "its state in one line, as the views show it"},
        "health": _STR,
        "size": _COUNT, "minSize": _OPT_INT, "maxSize": _OPT_INT, "target": _OPT_INT,
        "canAdd": {**_OPT_INT, "description": "nodes it can still add by its max size and its limits (null: unbounded)"},
        "limits": {"type": "array", "items": _obj({"resource": _STR, "used": {"type": "integer"},
                                                   "limit": {"type": "integer"}, "reached": {"type": "boolean"}},
                                                  "in model units; a CA group's max size is resource \"nodes\"")},
        "scaleUp": {"type": ["object", "null"], "properties": {"from": _COUNT, "to": _COUNT, "since": _TIME},
                    "required": ["from", "to", "since"]},
        "backoff": _OPT_STR,
        "error": {**_OPT_STR, "description": "the last error in the autoscaler's (or the cloud's) words"},
        "errorAt": _TIME,
        "gpus": _COUNT,
        "nodes": {"type": "array", "items": _STR},
        "template": {"type": ["object", "null"], "additionalProperties": {"type": "integer"},
                     "description": "what one more node offers (allocatable, model units); null: unknown"},
        "nodeClaims": {"type": "array", "items": _obj({"name": _STR, "stage": _STR, "node": _OPT_STR,
                                                       "failure": _OPT_STR})},
        "waitingPods": {**_COUNT, "description": "pending pods waiting on it (for nodes, or for none that will come)"},
    })},
    "pending": _obj({state: _COUNT for state in WAIT_STATES},
                    "pending pods shown, by what they wait for: room (on nodes that exist), nodes (being "
                    "added), never (nothing that will come)"),
    "waits": {"type": "array", "items": _obj({
        "namespace": _STR, "name": _STR, "state": {"enum": list(WAIT_STATES)}, "words": _STR,
        "group": {"type": ["object", "null"], "properties": {"autoscaler": _STR, "name": _STR},
                  "required": ["autoscaler", "name"]},
        "detail": {**_OPT_STR, "description": "the autoscaler's own words (the event's message), uncut"},
        "since": _TIME,
    })},
}, "node groups and NodePools, and what pending pods wait for (#39)")
