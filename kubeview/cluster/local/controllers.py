"""The local cluster's controllers: Deployment -> ReplicaSet -> Pods, and garbage collection.

They follow kube-controller-manager's semantics closely enough that the model cannot tell: a
Deployment owns one ReplicaSet per pod template (`NAME-HASH`, label `pod-template-hash`) and scales
older ones to 0; a ReplicaSet creates pods until its active ones (not finished, not terminating)
match `spec.replicas` and deletes the surplus in kube's rank order (unscheduled, then pending, then
not ready, then the newest first); objects whose owner is gone are deleted. They record the Events
kube-controller-manager records (SuccessfulCreate, SuccessfulDelete, ScalingReplicaSet), same words. Each function talks to
the cluster only through the `Api` protocol, like a real controller talks to the apiserver.
"""

from __future__ import annotations

import builtins
import copy
import random
import re
from collections.abc import Callable
from typing import Protocol

from kubeview.cluster.local import objects as obj
from kubeview.cluster.local.quota_admission import QuotaRefused
from kubeview.model.pod_status import restarts as pod_restarts

_POD_NAME = re.compile(r'pods "[^"]*"')
RANK_PHASE = {"Pending": 0, "Unknown": 1, "Running": 2}
RS_CONTROLLER = "replicaset-controller"
DEPLOYMENT_CONTROLLER = "deployment-controller"


class Api(Protocol):
    rng: random.Random  # pod name suffixes
    daemon_uids: set[str]  # owners that exist without an object here (the system DaemonSets)

    def list(self, kind: str) -> list[dict]: ...
    def get(self, kind: str, namespace: str, name: str) -> dict | None: ...
    def create(self, kind: str, o: dict) -> dict: ...
    def update(self, kind: str, o: dict) -> dict: ...
    def delete_pod(self, namespace: str, name: str) -> None: ...
    def delete(self, kind: str, namespace: str, name: str) -> None: ...
    def created_seq(self, kind: str, namespace: str, name: str) -> int: ...
    def event(self, kind: str, o: dict, type_: str, reason: str, message: str, component: str) -> None: ...
    def event_once(self, kind: str, o: dict, type_: str, reason: str, message: str, component: str,
                   same: str) -> None: ...
    # below `list` names the method above: the type is builtins.list
    def owned(self, uid: str) -> builtins.list[dict]: ...  # pods whose controller has this uid
    def pod_owners(self) -> builtins.list[str]: ...  # every controller uid some pod names


def _meta(o: dict) -> dict:
    return o.get("metadata") or {}


def controller_uid(o: dict) -> str | None:
    return next((r.get("uid") for r in _meta(o).get("ownerReferences") or [] if r.get("controller")), None)


def is_active(pod: dict) -> bool:
    """kube's FilterActivePods: not Succeeded/Failed and not being deleted."""
    return (pod.get("status") or {}).get("phase") not in ("Succeeded", "Failed") and not _meta(pod).get(
        "deletionTimestamp")


def is_ready(pod: dict) -> bool:
    return any(c.get("type") == "Ready" and c.get("status") == "True"
               for c in (pod.get("status") or {}).get("conditions") or [])


def deletion_order(api: Api, pods: list[dict]) -> list[dict]:
    """Which pods a scale-down removes first (kube's ActivePodsWithRanks, simplified)."""
    def rank(p: dict) -> tuple:
        phase = (p.get("status") or {}).get("phase", "Pending")
        return (bool((p.get("spec") or {}).get("nodeName")), RANK_PHASE.get(phase, 1), is_ready(p),
                -pod_restarts(p), -api.created_seq("Pod", _meta(p).get("namespace", ""), _meta(p)["name"]))
    return sorted(pods, key=rank)


def _set_status(api: Api, kind: str, o: dict, status: dict) -> None:
    if (o.get("status") or {}) != status:
        fresh = copy.deepcopy(o)
        fresh["status"] = status
        api.update(kind, fresh)


def try_create_pod(api: Api, kind: str, owner: dict, build: Callable[[], dict], component: str) -> dict | str:
    """Create the pod `build` makes, or take the API server's refusal (a ResourceQuota's 403): then the
    name stream is put back (a refused pod takes no name, so later names stay what they were for a
    seed), `FailedCreate` "Error creating: <the API server's message>" is recorded on the owner as
    upstream's PodControl records it, and the message is returned. **Deviation**: recorded once per
    refusal (its words less the pod's name) while that Event is kept; upstream records every retry
    of its backoff, each naming a new pod, until client-go's correlator combines them."""
    state = api.rng.getstate()
    try:
        return api.create("Pod", build())
    except QuotaRefused as e:
        api.rng.setstate(state)
        api.event_once(kind, owner, "Warning", "FailedCreate", f"Error creating: {e}", component,
                       _POD_NAME.sub('pods "…"', str(e), count=1))
        return str(e)


def _replica_failure(old: dict, refused: str | None) -> list[dict]:
    """The ReplicaSet's `ReplicaFailure` condition (reason FailedCreate, the API server's message) while
    creates are refused; gone once one succeeds (replica_set_utils.go calculateStatus)."""
    kept = [c for c in old.get("conditions") or [] if c.get("type") != "ReplicaFailure"]
    if refused is None:
        return kept
    prior = next((c for c in old.get("conditions") or [] if c.get("type") == "ReplicaFailure"), None)
    when = prior["lastTransitionTime"] if prior is not None and prior.get("message") == refused else obj.timestamp()
    return [*kept, {"type": "ReplicaFailure", "status": "True", "lastTransitionTime": when,
                    "reason": "FailedCreate", "message": refused}]


def adopt_orphans(api: Api, rs: dict) -> bool:
    """Take as its own the active pods of its namespace that match its selector and have no controller,
    as kube's ControllerRefManager does (a bare pod created before its ReplicaSet is adopted, not
    doubled). Only `matchLabels` selectors, the only kind this cluster's workloads carry; and only on a
    ReplicaSet's first reconcile (no status yet): kube adopts later orphans too, but that costs a scan of
    every pod per reconcile, and here only manifests applied together (the demo) create such orphans."""
    if rs.get("status"):
        return False
    meta, spec = _meta(rs), rs.get("spec") or {}
    want = (spec.get("selector") or {}).get("matchLabels") or {}
    if not want or (spec.get("selector") or {}).get("matchExpressions"):
        return False
    adopted = False
    for pod in api.list("Pod"):
        pm = _meta(pod)
        if (pm.get("namespace") != meta.get("namespace") or controller_uid(pod) is not None or not is_active(pod)
                or any((pm.get("labels") or {}).get(k) != v for k, v in want.items())):
            continue
        fresh = copy.deepcopy(pod)
        fresh["metadata"]["ownerReferences"] = [*(pm.get("ownerReferences") or []), {
            "apiVersion": "apps/v1", "kind": "ReplicaSet", "name": meta["name"], "uid": meta["uid"],
            "controller": True, "blockOwnerDeletion": True}]
        api.update("Pod", fresh)
        adopted = True
    return adopted


def reconcile_replicaset(api: Api, rs: dict) -> bool:
    """Adopt orphans, then create or delete pods to match spec.replicas; update status. True if
    anything was written."""
    meta, uid = _meta(rs), _meta(rs)["uid"]
    adopted = adopt_orphans(api, rs)
    owned = api.owned(uid)
    active = [p for p in owned if is_active(p)]
    want = int((rs.get("spec") or {}).get("replicas", 1))
    changed = adopted
    refused: str | None = None
    if len(active) < want:
        template = (rs.get("spec") or {}).get("template") or {}
        for _ in range(want - len(active)):
            pod = try_create_pod(api, "ReplicaSet", rs, lambda: obj.pod_from_template("ReplicaSet", rs, template,
                                                                                      api.rng), RS_CONTROLLER)
            if isinstance(pod, str):
                refused = pod
                break
            api.event("ReplicaSet", rs, "Normal", "SuccessfulCreate", f"Created pod: {_meta(pod)['name']}",
                      RS_CONTROLLER)
            changed = True
    elif len(active) > want:
        for pod in deletion_order(api, active)[: len(active) - want]:
            api.delete_pod(meta.get("namespace", ""), _meta(pod)["name"])
            api.event("ReplicaSet", rs, "Normal", "SuccessfulDelete", f"Deleted pod: {_meta(pod)['name']}",
                      RS_CONTROLLER)
        changed = True
    if changed:
        owned = api.owned(uid)
        active = [p for p in owned if is_active(p)]
    ready = sum(1 for p in active if is_ready(p))
    status: dict[str, object] = {"replicas": len(active), "fullyLabeledReplicas": len(active), "readyReplicas": ready,
                                 "availableReplicas": ready,
                                 "terminatingReplicas": sum(1 for p in owned if _meta(p).get("deletionTimestamp")),
                                 "observedGeneration": int(meta.get("generation", 1))}
    fresh = api.get("ReplicaSet", meta.get("namespace", ""), meta["name"])
    if fresh is not None:
        if conditions := _replica_failure(fresh.get("status") or {}, refused):
            status["conditions"] = conditions
        _set_status(api, "ReplicaSet", fresh, status)
    return changed


def replicaset_for(dep: dict) -> dict:
    """The ReplicaSet a Deployment's current template maps to."""
    meta, spec = _meta(dep), dep.get("spec") or {}
    template = copy.deepcopy(spec.get("template") or {})
    h = obj.template_hash(template)
    labels = dict((template.get("metadata") or {}).get("labels") or {})
    labels["pod-template-hash"] = h
    template.setdefault("metadata", {})["labels"] = labels
    selector = copy.deepcopy(spec.get("selector") or {"matchLabels": {}})
    selector.setdefault("matchLabels", {})["pod-template-hash"] = h
    rs = {"metadata": obj.metadata(f"{meta['name']}-{h}", meta.get("namespace"), labels=labels,
                                   owner=obj.owner_ref("Deployment", dep)),
          "spec": {"replicas": int(spec.get("replicas", 1)), "selector": selector, "template": template}}
    rs["metadata"]["annotations"] = {"deployment.kubernetes.io/revision": "1",
                                     "deployment.kubernetes.io/desired-replicas": str(spec.get("replicas", 1))}
    return obj.normalize_workload("ReplicaSet", rs)


def reconcile_deployment(api: Api, dep: dict) -> bool:
    meta, uid = _meta(dep), _meta(dep)["uid"]
    ns = meta.get("namespace", "")
    want = int((dep.get("spec") or {}).get("replicas", 1))
    target = replicaset_for(dep)
    changed = False
    current = api.get("ReplicaSet", ns, target["metadata"]["name"])
    if current is None:
        current = api.create("ReplicaSet", target)
        _scaled(api, dep, current["metadata"]["name"], 0, want)
        changed = True
    owned = [rs for rs in api.list("ReplicaSet") if controller_uid(rs) == uid]
    for rs in owned:
        desired = want if rs["metadata"]["name"] == current["metadata"]["name"] else 0
        if int(rs["spec"].get("replicas", 1)) != desired:
            _scaled(api, dep, rs["metadata"]["name"], int(rs["spec"].get("replicas", 1)), desired)
            fresh = copy.deepcopy(rs)
            fresh["spec"]["replicas"] = desired
            fresh["metadata"]["generation"] = int(fresh["metadata"].get("generation", 1)) + 1
            fresh["metadata"].setdefault("annotations", {})["deployment.kubernetes.io/desired-replicas"] = str(want)
            api.update("ReplicaSet", fresh)
            changed = True
    owned = [rs for rs in api.list("ReplicaSet") if controller_uid(rs) == uid]
    st = [rs.get("status") or {} for rs in owned]
    cur = api.get("ReplicaSet", ns, current["metadata"]["name"]) or current
    available = sum(int(s.get("availableReplicas", 0)) for s in st)
    now = obj.timestamp()
    old_conds = {c["type"]: c for c in (dep.get("status") or {}).get("conditions") or []}

    def cond(kind: str, value: str, reason: str, message: str) -> dict:
        old = old_conds.get(kind)
        kept = old if old is not None and old.get("status") == value and old.get("reason") == reason else None
        return {"type": kind, "status": value,
                "lastUpdateTime": kept["lastUpdateTime"] if kept is not None else now,
                "lastTransitionTime": kept["lastTransitionTime"] if kept is not None else now,
                "reason": reason, "message": message}

    ok = available >= want
    status = {
        "observedGeneration": int(meta.get("generation", 1)),
        "replicas": sum(int(s.get("replicas", 0)) for s in st),
        "updatedReplicas": int((cur.get("status") or {}).get("replicas", 0)),
        "readyReplicas": sum(int(s.get("readyReplicas", 0)) for s in st),
        "availableReplicas": available,
        "unavailableReplicas": max(0, want - available),
        "terminatingReplicas": sum(int(s.get("terminatingReplicas", 0)) for s in st),
        "conditions": [
            cond("Available", "True" if ok else "False", "MinimumReplicasAvailable" if ok else
                 "MinimumReplicasUnavailable",
                 "Deployment has minimum availability." if ok else "Deployment does not have minimum availability."),
            cond("Progressing", "True", "NewReplicaSetAvailable" if ok else "ReplicaSetUpdated",
                 f'ReplicaSet "{cur["metadata"]["name"]}" has '
                 + ("successfully progressed." if ok else "is progressing.")),
        ],
    }
    latest = api.get("Deployment", ns, meta["name"])
    if latest is not None:
        _set_status(api, "Deployment", latest, status)
    return changed


def _scaled(api: Api, dep: dict, rs: str, old: int, new: int) -> None:
    """The deployment controller's ScalingReplicaSet Event (its wording since Kubernetes 1.29)."""
    if old != new:
        api.event("Deployment", dep, "Normal", "ScalingReplicaSet",
                  f"Scaled {'up' if new > old else 'down'} replica set {rs} from {old} to {new}", DEPLOYMENT_CONTROLLER)


def collect_garbage(api: Api) -> bool:
    """Delete ReplicaSets and Pods (of ReplicaSets, Jobs, Nodes) whose controlling owner no longer exists
    (background cascade)."""
    uids = {_meta(o)["uid"] for kind in ("Deployment", "ReplicaSet", "Node") for o in api.list(kind)}
    changed = False
    for rs in api.list("ReplicaSet"):
        owner = controller_uid(rs)
        if owner is not None and owner not in uids:
            api.delete("ReplicaSet", _meta(rs).get("namespace", ""), _meta(rs)["name"])
            changed = True
    uids = {_meta(o)["uid"] for kind in ("ReplicaSet", "Node", "Job") for o in api.list(kind)}
    uids |= api.daemon_uids
    for owner in api.pod_owners():  # by owner: a pass over every pod per round cost O(pods) per event
        if owner in uids:
            continue
        for pod in api.owned(owner):
            if not _meta(pod).get("deletionTimestamp"):
                api.delete_pod(_meta(pod).get("namespace", ""), _meta(pod)["name"])
                changed = True
    return changed
