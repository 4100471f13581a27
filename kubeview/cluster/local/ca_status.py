"""Cluster Autoscaler's words, for the embedded cluster's node groups (pure).

The status ConfigMap `kube-system/cluster-autoscaler-status` as CA writes it: `data.status` is
`api.ClusterAutoscalerStatus` (cluster-autoscaler/clusterstate/api/types.go) marshalled by
sigs.k8s.io/yaml (JSON field names, keys sorted, `metav1.Time` as RFC 3339 seconds, `null` when zero;
a zero `candidates` and `beingDeleted` left out, `omitempty`), with the annotation
`cluster-autoscaler.kubernetes.io/last-updated` in Go's `2006-01-02 15:04:05.999999999 -0700 MST`
(clusterstate/utils/status.go). Conditions keep their `lastTransitionTime` while their status stays
(clusterstate.go, `build*Status*`). The events' messages are CA's format strings:
processors/status/eventing_scale_up_processor.go (TriggeredScaleUp, NotTriggerScaleUp and
`ReasonsMessage`), core/scaleup/orchestrator/skippedreasons.go (the skipped reasons) and executor.go
(ScaledUpGroup on the ConfigMap); `ScaleUpInfo.String()` is `{group cur->new (max: max)}`.
"""

from __future__ import annotations

import math
import time
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

import yaml

from kubeview.model.autoscaling.store import MANAGED_BY

NAMESPACE = "kube-system"
NAME = "cluster-autoscaler-status"
LAST_UPDATED = "cluster-autoscaler.kubernetes.io/last-updated"
COMPONENT = "cluster-autoscaler"

# core/scaleup/orchestrator/skippedreasons.go
MAX_SIZE_REACHED = "max node group size reached"
IN_BACKOFF = "in backoff after failed scale-up"

# api.ClusterAutoscalerConditionStatus values
HEALTHY, IN_PROGRESS, NO_ACTIVITY, BACKOFF, NO_CANDIDATES = (
    "Healthy", "InProgress", "NoActivity", "Backoff", "NoCandidates")


@dataclass(frozen=True, slots=True)
class GroupState:
    """What the status says of one node group at one moment."""

    name: str
    min_size: int
    max_size: int
    target: int  # cloudProviderTarget
    registered: int  # Nodes of the group (all Ready here)
    unregistered: int  # asked for, not registered yet (provisioning)
    scale_up: str  # IN_PROGRESS, NO_ACTIVITY or BACKOFF
    error_code: str = ""
    error_message: str = ""


def rfc3339(t: float) -> str:
    """metav1.Time in JSON: whole seconds, UTC."""
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t))


def go_time(t: float) -> str:
    """Go's time.Format(`2006-01-02 15:04:05.999999999 -0700 MST`) for a UTC time (trailing zeros cut)."""
    whole = math.floor(t)
    frac = f"{min(999_999_999, round((t - whole) * 1e9)):09d}".rstrip("0")
    return time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(whole)) + (f".{frac}" if frac else "") + " +0000 UTC"


def _node_count(registered: int, unregistered: int) -> dict:
    return {"longUnregistered": 0,
            "registered": {"notStarted": 0, "ready": registered, "suspended": 0, "total": registered,
                           "unready": {"resourceUnready": 0, "total": 0}},
            "unregistered": unregistered}


def _since(status: str, last: dict | None, now: str) -> str:
    """lastTransitionTime: kept while the status stays what it was."""
    if last is not None and last.get("status") == status and last.get("lastTransitionTime"):
        return str(last["lastTransitionTime"])
    return now


def status_document(groups: Iterable[GroupState], now: float, last: dict | None = None) -> dict:
    """`api.ClusterAutoscalerStatus` as a dict in CA's key order (sorted); `last` is the previous one."""
    probe = rfc3339(now)
    last = last or {}
    last_groups = {g.get("name"): g for g in last.get("nodeGroups") or []}
    out_groups, total, unregistered, in_progress = [], 0, 0, False
    for g in groups:
        old = last_groups.get(g.name) or {}
        backoff = {}
        if g.scale_up == BACKOFF:
            backoff = {k: v for k, v in (("errorCode", g.error_code), ("errorMessage", g.error_message)) if v}
        health = {"cloudProviderTarget": g.target, "lastProbeTime": probe,
                  "lastTransitionTime": _since(HEALTHY, old.get("health"), probe), "maxSize": g.max_size,
                  "minSize": g.min_size, "nodeCounts": _node_count(g.registered, g.unregistered), "status": HEALTHY}
        scale_up = {"backoffInfo": backoff, "lastProbeTime": probe,
                    "lastTransitionTime": _since(g.scale_up, old.get("scaleUp"), probe), "status": g.scale_up}
        scale_down = {"lastProbeTime": probe, "lastTransitionTime": _since(NO_CANDIDATES, old.get("scaleDown"), probe),
                      "status": NO_CANDIDATES}
        out_groups.append({"health": health, "name": g.name, "scaleDown": scale_down, "scaleUp": scale_up})
        total += g.registered
        unregistered += g.unregistered
        in_progress |= g.scale_up == IN_PROGRESS
    wide = last.get("clusterWide") or {}
    up = IN_PROGRESS if in_progress else NO_ACTIVITY
    doc = {
        "autoscalerStatus": "Running",
        "clusterWide": {
            "health": {"lastProbeTime": probe, "lastTransitionTime": _since(HEALTHY, wide.get("health"), probe),
                       "nodeCounts": _node_count(total, unregistered), "status": HEALTHY},
            "scaleDown": {"lastProbeTime": probe,
                          "lastTransitionTime": _since(NO_CANDIDATES, wide.get("scaleDown"), probe),
                          "status": NO_CANDIDATES},
            "scaleUp": {"lastProbeTime": probe, "lastTransitionTime": _since(up, wide.get("scaleUp"), probe),
                        "status": up},
        },
        "nodeGroups": out_groups,
        "time": go_time(now),
    }
    return doc


class _GoYaml(yaml.SafeDumper):
    """yaml.v2's look: a string that would read back as another type is double-quoted."""


def _str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    plain = dumper.resolve(yaml.ScalarNode, value, (True, False)) == "tag:yaml.org,2002:str"
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=None if plain and value else '"')


_GoYaml.add_representer(str, _str)


def status_yaml(doc: dict) -> str:
    return yaml.dump(doc, Dumper=_GoYaml, sort_keys=True, default_flow_style=False, width=10**6)


def configmap(doc: dict, now: float, metadata: dict) -> dict:
    """The ConfigMap CA writes (`metadata` made by the caller: name, namespace, uid, ...)."""
    labels = {**(metadata.get("labels") or {}), MANAGED_BY[0]: MANAGED_BY[1]}  # the model: its groups are EMBEDDED
    meta = {**metadata, "labels": labels, "annotations": {LAST_UPDATED: go_time(now)}}
    return {"metadata": meta, "data": {"status": status_yaml(doc)}}


def scale_up_info(group: str, current: int, new: int, max_size: int) -> str:
    """nodegroupset.ScaleUpInfo.String()."""
    return f"{{{group} {current}->{new} (max: {max_size})}}"


def triggered(infos: Iterable[str]) -> str:
    """TriggeredScaleUp: `pod triggered scale-up: %v` of a []ScaleUpInfo."""
    return f"pod triggered scale-up: [{' '.join(infos)}]"


def not_triggered(reasons: Iterable[str]) -> str:
    """NotTriggerScaleUp: each reason counted over the node groups that gave it (`ReasonsMessage`).
    CA iterates a Go map, so its order varies; here the count order, then the words."""
    counts = Counter(reasons)
    parts = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    return "pod didn't trigger scale-up: " + ", ".join(f"{n} {why}" for why, n in parts)


def scaled_up_group(group: str, new: int, current: int, max_size: int, *, done: bool) -> str:
    """ScaledUpGroup on the status ConfigMap (executor.go), before and after the cloud's call."""
    if done:
        return f"Scale-up: group {group} size set to {new} instead of {current} (max: {max_size})"
    return f"Scale-up: setting group {group} size to {new} instead of {current} (max: {max_size})"
