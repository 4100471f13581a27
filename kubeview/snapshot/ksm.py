"""The model's numbers as kube-state-metrics names them (Prometheus text exposition format).

Dashboards and alerts are already written against kube-state-metrics; `kubeview snapshot --metrics`
prints the same series so they can be compared or scraped from a file. Resource names are
sanitised as KSM's `SanitizeLabelName` does (`nvidia.com/gpu` -> `nvidia_com_gpu`) and units follow
KSM: `core` for cpu (value in cores), `byte` for memory, storage and hugepages, `integer` for pods
and extended resources. Resources KSM does not export (unprefixed non-native names) are skipped.
Differences from KSM: no `uid` label on pod series (the model does not keep uids).
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from kubeview.model.cluster import ClusterModel
from kubeview.snapshot.dra import DEVICE_HELP, DEVICE_METRIC, device_series

_INVALID = re.compile(r"[^a-zA-Z0-9_]")
_NATIVE_PREFIX = "kubernetes.io/"

HELP = {
    "kube_node_status_capacity": "The capacity for different resources of a node.",
    "kube_node_status_allocatable": "The allocatable for different resources of a node that are available for scheduling.",
    "kube_pod_container_resource_requests": "The number of requested request resource by a container.",
    "kube_pod_container_resource_limits": "The number of requested limit resource by a container.",
    DEVICE_METRIC: DEVICE_HELP,  # kubeview's own: KSM has no per-device DRA series
}


def sanitize(name: str) -> str:
    """KSM's SanitizeLabelName: every character outside [a-zA-Z0-9_] becomes '_'."""
    return _INVALID.sub("_", name)


def unit(resource: str) -> str | None:
    """KSM's unit label for a resource, or None when KSM does not export it."""
    if resource == "cpu":
        return "core"
    if resource in ("memory", "ephemeral-storage", "storage") or resource.startswith("hugepages-"):
        return "byte"
    if resource.startswith("attachable-volumes-"):
        return "byte"
    if resource == "pods":
        return "integer"
    if "/" in resource and not resource.split("/", 1)[0].endswith("kubernetes.io") and not resource.startswith("requests."):
        return "integer"  # extended resource, e.g. nvidia.com/gpu
    return None


def value(resource: str, amount: int) -> str:
    """A model amount as KSM's value: cpu millicores become cores."""
    if resource == "cpu":
        return str(amount // 1000) if amount % 1000 == 0 else repr(amount / 1000)
    return str(amount)


def _escape(v: str) -> str:
    return v.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _labels(pairs: tuple[tuple[str, str], ...]) -> str:
    return ",".join(f'{k}="{_escape(v)}"' for k, v in pairs)


def series(model: ClusterModel) -> Iterator[tuple[str, tuple[tuple[str, str], ...], str]]:
    """(metric, labels, value) for every series, metrics grouped in HELP order."""
    alloc = model.allocation()
    for metric, matrix in (("kube_node_status_capacity", alloc.capacity),
                           ("kube_node_status_allocatable", alloc.allocatable)):
        for i, node in enumerate(alloc.nodes):
            declared = alloc.views[i].capacity if metric.endswith("capacity") else alloc.views[i].allocatable
            for j, r in enumerate(alloc.resources):
                u = unit(r)
                if u is None or r not in declared:
                    continue
                yield metric, (("node", node), ("resource", sanitize(r)), ("unit", u)), value(r, int(matrix[i, j]))
    pods = sorted(model.pods.items())
    yield from _container_series("kube_pod_container_resource_requests", pods, "requests")
    yield from _container_series("kube_pod_container_resource_limits", pods, "limits")
    yield from device_series(model.gpus)


def _container_series(metric: str, pods: list, field: str):
    for (ns, name), pod in pods:
        containers = pod.containers if field == "requests" else pod.container_limits
        for cname, amounts in containers:
            for r, amount in amounts.items():
                u = unit(r)
                if u is None:
                    continue
                labels = (("namespace", ns), ("pod", name), ("container", cname), ("node", pod.node or ""),
                          ("resource", sanitize(r)), ("unit", u))
                yield metric, labels, value(r, amount)


def exposition(model: ClusterModel) -> str:
    """Prometheus text format (version 0.0.4) with HELP/TYPE lines."""
    by_metric: dict[str, list[str]] = {m: [] for m in HELP}
    for metric, labels, v in series(model):
        by_metric[metric].append(f"{metric}{{{_labels(labels)}}} {v}")
    out: list[str] = []
    for metric, lines in by_metric.items():
        out.append(f"# HELP {metric} {HELP[metric]}")
        out.append(f"# TYPE {metric} gauge")
        out.extend(lines)
    return "\n".join(out) + "\n"
