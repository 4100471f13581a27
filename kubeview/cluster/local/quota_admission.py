"""The ResourceQuota admission plugin and the quota controller's arithmetic, for pods (pure).

Read from kubernetes' plugin/pkg/admission/resourcequota/controller.go (`checkRequest`) and
pkg/quota/v1/evaluator/core/pods.go (what a pod uses): a pod that is not Succeeded or Failed uses
`pods` and `count/pods` (1 each), `requests.cpu`/`cpu`, `requests.memory`/`memory`, `limits.cpu`,
`limits.memory`, ephemeral storage likewise, and `requests.<name>` of every other resource, from its
effective requests and limits (`resourcehelper.PodRequests`/`PodLimits`: kubeview's
`model/requests.effective`). A quota whose scopes match the pod and whose hard names one of those is
checked: used + requested must stay at or under hard for every resource the pod asks for, else the
API server answers with the one sentence this module writes:
`pods "x" is forbidden: exceeded quota: gpus, requested: requests.nvidia.com/gpu=1, used:
requests.nvidia.com/gpu=2, limited: requests.nvidia.com/gpu=2` (resources sorted, joined by ",").
A quota on cpu or memory refuses a container that does not name them (`failed quota: <name>: must
specify requests.cpu for: c`). DRA device quota (`<class>.deviceclass.resource.k8s.io/devices`) is
counted on ResourceClaims upstream: not here.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from kubeview.cluster.source import ActionError
from kubeview.model.quantity import canonical, to_units
from kubeview.model.requests import effective

_STANDARD = ("cpu", "memory", "ephemeral-storage")
_VALIDATED = ("cpu", "memory", "requests.cpu", "requests.memory", "limits.cpu", "limits.memory")
_BINARY = ("Ki", "Mi", "Gi", "Ti", "Pi", "Ei")


class QuotaRefused(ActionError):
    """The API server's 403 for a pod create that a ResourceQuota refuses; str() is its message."""


def is_terminal(pod: dict) -> bool:
    return (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed")


def _usage_of(requests: Mapping[str, int], limits: Mapping[str, int]) -> dict[str, int]:
    out: dict[str, int] = {}
    for name, value in requests.items():
        if name == "pods":
            continue
        if name in _STANDARD:
            out[name] = value
        out[f"requests.{name}"] = value
    for name, value in limits.items():
        if name in _STANDARD or name.startswith("hugepages-"):
            out[f"limits.{name}"] = value
    return out


def pod_usage(pod: dict) -> dict[str, int]:
    """What the pod counts against a quota, in model units (cpu millicores); {} once it finished."""
    if is_terminal(pod):
        return {}
    spec = pod.get("spec") or {}
    out = _usage_of(effective(spec, "requests"), effective(spec, "limits"))
    out["pods"] = out["count/pods"] = 1
    return out


def _tracks_pods(name: str) -> bool:
    return name in ("pods", "count/pods", *_STANDARD) or name.startswith(("requests.", "limits.", "hugepages-"))


def _scope_matches(scope: str, operator: str, values: Iterable[str], pod: dict) -> bool:
    spec = pod.get("spec") or {}
    if scope == "PriorityClass":
        name = spec.get("priorityClassName") or ""
        return {"In": name in values, "NotIn": name not in values, "Exists": bool(name),
                "DoesNotExist": not name}.get(operator, False)
    deadline = spec.get("activeDeadlineSeconds") is not None
    best_effort = not any(_usage_of(effective(spec, "requests"), effective(spec, "limits")))
    hit = {"Terminating": deadline, "NotTerminating": not deadline, "BestEffort": best_effort,
           "NotBestEffort": not best_effort}.get(scope, False)
    return hit if operator in ("Exists", "In") else not hit


def matches(quota: dict, pod: dict) -> bool:
    """Does the quota count this pod: every scope and scopeSelector expression matches, and its hard
    names something a pod uses."""
    spec = quota.get("spec") or {}
    if not any(_tracks_pods(k) for k in (spec.get("hard") or {})):
        return False
    exprs = [(s, "Exists", ()) for s in spec.get("scopes") or []]
    exprs += [(e.get("scopeName", ""), e.get("operator", ""), tuple(e.get("values") or ()))
              for e in (spec.get("scopeSelector") or {}).get("matchExpressions") or []]
    return all(_scope_matches(s, op, values, pod) for s, op, values in exprs)


def _resource(key: str) -> str:
    """The resource a quota key counts (its units): `requests.cpu` -> cpu."""
    for prefix in ("requests.", "limits."):
        if key.startswith(prefix):
            return key[len(prefix):]
    return key


def units(key: str, text: str) -> int:
    return to_units(_resource(key), text)


def text(key: str, value: int, like: str | None = None) -> str:
    """A quota figure as the API server writes it; binary units where the hard figure `like` has them."""
    if _resource(key) == "cpu":
        return canonical(f"{value}m")
    if like is not None and like.strip()[-2:] in _BINARY and value >= 1024 and value % 1024 == 0:
        return canonical(f"{value // 1024}Ki")
    return canonical(str(value))


def used_status(hard: Mapping[str, str], used: Mapping[str, int]) -> dict[str, str]:
    """status.used for status.hard's keys (0 where nothing counts)."""
    return {k: text(k, used.get(k, 0), hard[k]) for k in sorted(hard)}


def _missing(quota: dict, pod: dict) -> str | None:
    """The evaluator's Constraints: with cpu or memory quota, each container names them."""
    required = sorted(k for k in (quota.get("spec") or {}).get("hard") or {} if k in _VALIDATED)
    if not required:
        return None
    spec = pod.get("spec") or {}
    missing: dict[str, list[str]] = {}
    for c in [*(spec.get("containers") or []), *(spec.get("initContainers") or [])]:
        res = c.get("resources") or {}
        have = _usage_of({k: 1 for k in res.get("requests") or {}}, {k: 1 for k in res.get("limits") or {}})
        for key in required:
            if key not in have:
                missing.setdefault(key, []).append(c.get("name", ""))
    if not missing:
        return None
    return "must specify " + "; ".join(f"{k} for: {','.join(sorted(v))}" for k, v in sorted(missing.items()))


def _pretty(values: Mapping[str, int], hard: Mapping[str, str]) -> str:
    return ",".join(f"{k}={text(k, values.get(k, 0), hard.get(k))}" for k in sorted(values))


def admit(quotas: Iterable[dict], pod: dict) -> list[tuple[dict, dict[str, str]]]:
    """Check a pod create against its namespace's quotas (name order); raise QuotaRefused with the API
    server's message, else return each charged quota with its new status.used (admission writes it)."""
    name = (pod.get("metadata") or {}).get("name") or "Unknown"
    delta = pod_usage(pod)
    out = []
    for quota in sorted(quotas, key=lambda q: q["metadata"]["name"]):
        if not matches(quota, pod):
            continue
        qname = quota["metadata"]["name"]
        if (why := _missing(quota, pod)) is not None:
            raise QuotaRefused(f'pods "{name}" is forbidden: failed quota: {qname}: {why}')
        status = quota.get("status") or {}
        hard: dict[str, str] = status.get("hard") or {}
        used = {k: units(k, v) for k, v in (status.get("used") or {}).items()}
        requested = {k: v for k, v in delta.items() if k in hard}
        if not any(requested.values()):
            continue
        new = {**used, **{k: used.get(k, 0) + v for k, v in requested.items()}}
        exceeded = sorted(k for k in requested if new[k] > units(k, hard[k]))
        if exceeded:
            raise QuotaRefused(
                f'pods "{name}" is forbidden: exceeded quota: {qname}, '
                f"requested: {_pretty({k: requested[k] for k in exceeded}, hard)}, "
                f"used: {_pretty({k: used.get(k, 0) for k in exceeded}, hard)}, "
                f"limited: {_pretty({k: units(k, hard[k]) for k in exceeded}, hard)}")
        out.append((quota, used_status(hard, new)))
    return out


def normalize_quota(manifest: dict) -> dict:
    """A ResourceQuota as the API server stores it: spec.hard canonical, status.hard the same."""
    meta = dict(manifest.get("metadata") or {})
    spec = dict(manifest.get("spec") or {})
    try:
        hard = {k: canonical(v) for k, v in (spec.get("hard") or {}).items()}
    except ValueError as e:
        raise ActionError(f"ResourceQuota {meta.get('name', '')}: spec.hard: {e}") from None
    spec["hard"] = hard
    return {"metadata": meta, "spec": spec, "status": {"hard": dict(hard)}}
