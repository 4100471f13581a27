"""Prometheus query results (the API's `data.result` lists) -> a `UsageUpdate` for the model. PURE.

Kept apart from the HTTP client so the arithmetic (which label names the node, how DCGM's per-GPU
series fold into nodes and pods, NaN -> None) is tested without a server. A series that is absent
leaves the figure `None`, shown "—": absence of data never reads as 0.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from kubeview.cluster.prometheus.queries import QuerySet
from kubeview.model.usage import NodeUsage, PodUsage, UsageUpdate

Result = Sequence[Mapping]  # [{"metric": {label: value}, "value": [ts, "1.5"]}, ...]
_HOST_PORT = re.compile(r"^\[?(.*?)\]?:\d+$")


@dataclass(frozen=True, slots=True)
class GpuUsage:
    """One GPU as DCGM reports it; the pod fields are empty when no pod holds the GPU."""

    node: str
    index: int | None  # DCGM's `gpu` label
    uuid: str
    util: float | None  # percent, averaged over the window
    memory_used: int | None  # framebuffer bytes
    memory_free: int | None
    namespace: str = ""
    pod: str = ""
    container: str = ""

    @property
    def pod_key(self) -> tuple[str, str] | None:
        return (self.namespace, self.pod) if self.namespace and self.pod else None


@dataclass(frozen=True, slots=True)
class Reading:
    """One poll: what the model gets (`update`) and the per-GPU detail behind it (`gpus`)."""

    update: UsageUpdate
    gpus: tuple[GpuUsage, ...] = ()


def value_of(sample: Mapping) -> float | None:
    """A sample's value; NaN, infinities and garbage become None, never 0."""
    try:
        v = float(sample["value"][1])
    except (KeyError, IndexError, TypeError, ValueError):
        return None
    return v if math.isfinite(v) else None


def node_name(metric: Mapping[str, str], labels: Sequence[str]) -> str | None:
    """The first non-empty of `labels`; HOST:PORT (an unrelabelled `instance`) counts as HOST."""
    for label in labels:
        value = metric.get(label)
        if value:
            m = _HOST_PORT.match(value)
            return m.group(1) if m else value
    return None


def _by_node(result: Result, labels: Sequence[str]) -> dict[str, float]:
    out: dict[str, float] = {}
    for sample in result:
        name, v = node_name(sample.get("metric") or {}, labels), value_of(sample)
        if name is None or v is None:
            continue
        out[name] = max(v, out.get(name, v))  # the same node seen twice (two scrapes): not summed
    return out


def _by_pod(result: Result, qs: QuerySet) -> dict[tuple[str, str], float]:
    ns_label, pod_label = qs.labels["namespace"], qs.labels["pod"]
    out: dict[tuple[str, str], float] = {}
    for sample in result:
        metric, v = sample.get("metric") or {}, value_of(sample)
        ns, pod = metric.get(ns_label), metric.get(pod_label)
        if not ns or not pod or v is None:
            continue
        out[(ns, pod)] = out.get((ns, pod), 0.0) + v
    return out


def _gpu_key(metric: Mapping[str, str], qs: QuerySet) -> tuple[str, ...]:
    lb = qs.labels
    return tuple(metric.get(lb[k], "") for k in
                 ("gpu_node", "gpu_index", "gpu_uuid", "gpu_namespace", "gpu_pod", "gpu_container"))


def gpus_of(results: Mapping[str, Result], qs: QuerySet) -> tuple[GpuUsage, ...]:
    """DCGM's three series joined per GPU (and per pod holding it), sorted by node and index."""
    table: dict[tuple[str, ...], dict[str, float | None]] = {}
    for name in ("gpu_util", "gpu_memory_used", "gpu_memory_free"):
        for sample in results.get(name) or ():
            key = _gpu_key(sample.get("metric") or {}, qs)
            if not key[0]:
                continue
            table.setdefault(key, {})[name] = value_of(sample)
    gpus = []
    for (node, index, uuid, ns, pod, container), v in table.items():
        used, free = v.get("gpu_memory_used"), v.get("gpu_memory_free")
        gpus.append(GpuUsage(
            node=node, index=int(index) if index.isdigit() else None, uuid=uuid, util=v.get("gpu_util"),
            memory_used=None if used is None else round(used), memory_free=None if free is None else round(free),
            namespace=ns, pod=pod, container=container,
        ))
    gpus.sort(key=lambda g: (g.node, g.index if g.index is not None else 1 << 30, g.uuid, g.namespace, g.pod))
    return tuple(gpus)


def _gpu_utils(gpus: Sequence[GpuUsage]) -> tuple[float, ...] | None:
    """Utilization per distinct GPU (node, index, uuid), in the given order; None if none measured."""
    per: dict[tuple, float] = {}
    for g in gpus:
        if g.util is not None:
            key = (g.node, g.index, g.uuid)
            per[key] = max(g.util, per.get(key, g.util))  # a GPU seen under an old and a new pod
    return tuple(per.values()) or None


def _gpu_memory(gpus: Sequence[GpuUsage]) -> int | None:
    """Framebuffer bytes used over distinct GPUs (node, index, uuid); None if none measured."""
    per = {(g.node, g.index, g.uuid): g.memory_used for g in gpus if g.memory_used is not None}
    return sum(per.values()) if per else None


def reading_from_results(results: Mapping[str, Result], qs: QuerySet, *, at: float, window: str,
                         source: str = "prometheus") -> Reading:
    """Fold the named query results (see QUERY_NAMES) into one full-replace `UsageUpdate`."""
    node_cpu = _by_node(results.get("node_cpu") or (), qs.node_labels)
    node_mem = _by_node(results.get("node_memory") or (), qs.node_labels)
    pod_cpu = _by_pod(results.get("pod_cpu") or (), qs)
    pod_mem = _by_pod(results.get("pod_memory") or (), qs)
    gpus = gpus_of(results, qs)

    node_gpus: dict[str, list[GpuUsage]] = {}
    pod_gpus: dict[tuple[str, str], list[GpuUsage]] = {}
    for g in gpus:
        node_gpus.setdefault(g.node, []).append(g)
        if g.pod_key is not None:
            pod_gpus.setdefault(g.pod_key, []).append(g)

    nodes = {
        name: NodeUsage(
            cpu=node_cpu.get(name),
            memory=None if name not in node_mem else round(node_mem[name]),
            gpu_util=_gpu_utils(node_gpus.get(name, ())),
            gpu_memory=_gpu_memory(node_gpus.get(name, ())),
        )
        for name in sorted(set(node_cpu) | set(node_mem) | set(node_gpus))
    }
    pods = {
        key: PodUsage(
            cpu=pod_cpu.get(key),
            memory=None if key not in pod_mem else round(pod_mem[key]),
            gpu_util=_gpu_utils(pod_gpus.get(key, ())),
            gpu_memory=_gpu_memory(pod_gpus.get(key, ())),
        )
        for key in sorted(set(pod_cpu) | set(pod_mem) | set(pod_gpus))
    }
    by_uuid = {g.uuid: g.util for g in gpus if g.uuid}  # DRA devices publish their UUID: joined by it
    update = UsageUpdate(nodes=nodes, pods=pods, source=source, at=at, window=window, replace=True, gpus=by_uuid)
    return Reading(update=update, gpus=gpus)
