"""A pod's effective requests and limits, computed the way kube-scheduler computes them.

Mirrors `k8s.io/component-helpers/resource.PodRequests`: app containers summed; each non-restartable
init container runs alone beside the sidecars started before it; restartable init containers
(sidecars, `restartPolicy: Always`) run for the pod's lifetime and add to the app sum; the pod takes
the larger of the two; pod-level `spec.resources` wins where set; `spec.overhead` is added. Every pod
also takes one unit of the `pods` resource.
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
