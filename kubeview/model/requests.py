"""A pod's effective requests and limits, computed the way kube-scheduler computes them.

Mirrors `k8s.io/component-helpers/resource.PodRequests`: app containers summed; each non-restartable
init container runs alone beside the sidecars started before it; restartable init containers
(sidecars, `restartPolicy: Always`) run for the pod's lifetime and add to the app sum; the pod takes
the larger of the two; pod-level `spec.resources` wins where set; `spec.overhead` is added. Every pod
also takes one unit of the `pods` resource.

`pod_amounts` is the hot path (150,000 pods in a list): replicas of one workload share their
containers' resources, so the result is cached by the resources' *content* (names and quantity
strings) and shared between pods. The returned dicts are read-only by convention.
"""

from __future__ import annotations

from collections.abc import Iterable

from kubeview.model.quantity import resource_dict


def _add(into: dict[str, int], other: dict[str, int]) -> None:
    for k, v in other.items():
        into[k] = into.get(k, 0) + v


def _max(into: dict[str, int], other: dict[str, int]) -> None:
    for k, v in other.items():
        if v > into.get(k, 0):
            into[k] = v


def _container_amounts(containers: Iterable[dict] | None, field: str) -> list[tuple[dict, dict[str, int]]]:
    return [(c, resource_dict((c.get("resources") or {}).get(field))) for c in containers or ()]


def effective(spec: dict, field: str = "requests") -> dict[str, int]:
    """Effective `requests` or `limits` of a pod spec, in model units (cpu millicores)."""
    total: dict[str, int] = {}
    for _, amounts in _container_amounts(spec.get("containers"), field):
        _add(total, amounts)
    sidecars: dict[str, int] = {}
    init_peak: dict[str, int] = {}
    for container, amounts in _container_amounts(spec.get("initContainers"), field):
        if container.get("restartPolicy") == "Always":
            _add(total, amounts)
            _add(sidecars, amounts)
            _max(init_peak, sidecars)
        else:
            running = dict(sidecars)
            _add(running, amounts)
            _max(init_peak, running)
    _max(total, init_peak)
    pod_level = resource_dict((spec.get("resources") or {}).get(field))
    for name in ("cpu", "memory"):
        if name in pod_level:
            total[name] = pod_level[name]
    _add(total, resource_dict(spec.get("overhead")))
    if field == "requests":
        total["pods"] = 1
    return total


def per_container(spec: dict, field: str = "requests") -> list[tuple[str, dict[str, int]]]:
    """(container name, amounts) for app containers, as kube-state-metrics reports them."""
    return [(c.get("name", ""), a) for c, a in _container_amounts(spec.get("containers"), field)]


_PerContainer = list[tuple[str, dict[str, int]]]
_Amounts = tuple[dict[str, int], dict[str, int], _PerContainer, _PerContainer]
_CACHE: dict[tuple, _Amounts] = {}
_CACHE_LIMIT = 65536


def _resources_key(containers: Iterable[dict] | None, init: bool) -> tuple:
    key: list[tuple] = []  # per container: name, requests, limits (and restartPolicy for init ones)
    for c in containers or ():
        res = c.get("resources")
        if res:
            req, lim = res.get("requests"), res.get("limits")
            req_key = tuple(req.items()) if req else None
            lim_key = tuple(lim.items()) if lim else None
        else:
            req_key = lim_key = None
        if init:
            key.append((c.get("name"), req_key, lim_key, c.get("restartPolicy")))
        else:
            key.append((c.get("name"), req_key, lim_key))
    return tuple(key)


def pod_amounts(spec: dict) -> _Amounts:
    """(effective requests, effective limits, per-app-container requests, per-app-container limits), cached.

    Same values as `effective(spec, "requests")`, `effective(spec, "limits")`,
    `per_container(spec, "requests")` and `per_container(spec, "limits")`; pods with identical
    container resources share one result.
    """
    containers = spec.get("containers")
    if containers and len(containers) == 1 and not (
        spec.get("initContainers") or spec.get("overhead") or spec.get("resources")
    ):  # the common case, keyed cheaply
        key: tuple  # a cache key: only its equality matters
        c = containers[0]
        res = c.get("resources")
        if res:
            req, lim = res.get("requests"), res.get("limits")
            key = (c.get("name"), tuple(req.items()) if req else None, tuple(lim.items()) if lim else None)
        else:
            key = (c.get("name"),)
    else:
        init = spec.get("initContainers")
        overhead = spec.get("overhead")
        pod_res = spec.get("resources")
        key = (
            _resources_key(containers, False),
            _resources_key(init, True) if init else None,
            tuple(overhead.items()) if overhead else None,
            (tuple((k, tuple(v.items()) if isinstance(v, dict) else v) for k, v in pod_res.items())
             if pod_res else None),
        )
    try:
        return _CACHE[key]
    except (KeyError, TypeError):
        pass
    result = (effective(spec, "requests"), effective(spec, "limits"), per_container(spec, "requests"),
              per_container(spec, "limits"))
    try:
        if len(_CACHE) >= _CACHE_LIMIT:
            _CACHE.clear()
        _CACHE[key] = result
    except TypeError:  # an unhashable oddity in the spec: compute, don't cache
        pass
    return result
