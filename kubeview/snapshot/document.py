"""The `kubeview snapshot --json` document (its JSON Schema: schema_doc.py, `snapshot --schema`).

One document a script can rely on: `schemaVersion` changes only when a field changes meaning or
disappears (adding fields does not bump it). Amounts are integers in model units: cpu in
millicores, memory and storage in bytes, everything else a count (`units` says which). Usage that
nobody measured is `null`, never 0. docs/snapshot.md is the field reference.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from datetime import UTC, datetime

from kubeview.model.allocation import GPU
from kubeview.model.cluster import ClusterModel
from kubeview.model.gcpause import gc_paused
from kubeview.model.gpus.idle import find_idle, idle_count
from kubeview.model.kinds import gangs_unavailable
from kubeview.model.usage import NodeUsage, PodUsage
from kubeview.model.views import TERMINAL_PHASES, PodView
from kubeview.snapshot.autoscaling import autoscaling_doc
from kubeview.snapshot.dra import dra_doc
from kubeview.snapshot.gangs import gang_doc, gang_items, gangs_doc
from kubeview.snapshot.gpus import fragmentation_doc, gpus_doc
from kubeview.snapshot.jobs import jobs_doc
from kubeview.snapshot.kept import KeptTexts, ModelTexts, kept_for
from kubeview.snapshot.queues import (
    cluster_queue_entry,
    cluster_queue_items,
    queues_doc,
    workload_doc,
    workload_items,
)
from kubeview.snapshot.quotas import quotas_doc
from kubeview.snapshot.schema_doc import SCHEMA_VERSION
from kubeview.snapshot.schema_doc import SNAPSHOT_SCHEMA as SNAPSHOT_SCHEMA  # where callers find it

_encode_str = json.encoder.encode_basestring_ascii  # the C encoder json.dumps uses: quotes and escapes

FIGURES = ("capacity", "allocatable", "requested", "limits", "free")


def unit_of(resource: str) -> str:
    """"millicores" for cpu, "bytes" for memory/storage/hugepages, "count" for the rest (GPUs, pods)."""
    if resource == "cpu":
        return "millicores"
    if resource in ("memory", "ephemeral-storage") or resource.startswith("hugepages-"):
        return "bytes"
    return "count"


def _iso(t: float | None) -> str | None:
    return None if t is None else datetime.fromtimestamp(t, UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def _node_usage(nu: NodeUsage | None, resource: str) -> float | int | None:
    if nu is None:
        return None
    return nu.cpu if resource == "cpu" else nu.memory if resource == "memory" else None


_FIGURES_JSON = '%s:{"capacity":%d,"allocatable":%d,"requested":%d,"limits":%d,"free":%d,"usage":%s}'


def _nodes_json(model: ClusterModel, nodes: list[dict]) -> str:
    """The "nodes" array as text: `nodes` (built without "resources") plus each node's figures."""
    alloc = model.allocation()
    names = [_encode_str(r) for r in alloc.resources]
    cap, al, req, lim = (a.tolist() for a in (alloc.capacity, alloc.allocatable, alloc.requested, alloc.limits))
    usage = model.usage.nodes
    out = []
    for i, doc in enumerate(nodes):
        nu = usage.get(doc["name"]) if usage else None
        ci, ai, ri, li = cap[i], al[i], req[i], lim[i]
        figures = ",".join(
            _FIGURES_JSON % (names[j], ci[j], ai[j], ri[j], li[j], ai[j] - ri[j],
                             "null" if nu is None else json.dumps(_node_usage(nu, r)))
            for j, r in enumerate(alloc.resources))
        head = json.dumps(doc, separators=(",", ":"))
        out.append(f'{head[:-1]},"resources":{{{figures}}}}}')
    return "[" + ",".join(out) + "]"


def _usage_doc(pu: PodUsage | None) -> dict | None:
    if pu is None:
        return None
    return {"cpu": pu.cpu, "memory": pu.memory,
            "gpuUtilization": list(pu.gpu_util) if pu.gpu_util is not None else None,
            "gpuMemoryUsed": pu.gpu_memory, "idleGpus": idle_count(pu.gpu_util)}


def _pod_doc(p: PodView, pu: PodUsage | None) -> dict:
    return {
        "namespace": p.namespace,
        "name": p.name,
        "node": p.node,
        "phase": p.phase,
        "deleting": p.deleting,
        "restarts": p.restarts,
        "owner": {"kind": p.owner[0], "name": p.owner[1]} if p.owner else None,
        "requests": p.requests,
        "limits": p.limits,
        "pendingReason": p.pending_reason if p.pending else None,
        "usage": _usage_doc(pu),
    }


_POD_JSON = ('{"namespace":%s,"name":%s,"node":%s,"phase":%s,"deleting":%s,"restarts":%d,"owner":%s,'
             '"requests":%s,"limits":%s,"pendingReason":%s,"usage":%s}')


def _pods_json(model: ClusterModel) -> list[str]:
    """The "pods" array as text fragments (join them with ","), equal to json.dumps of build_snapshot's.

    Pods share their requests/limits dicts (requests.pod_amounts) and owners repeat, so each
    distinct one is encoded once; strings go through the C string encoder.
    """
    enc = _encode_str
    dumps = json.dumps
    amounts: dict[int, str] = {}
    keep: list[dict] = []  # holds the dicts whose id() keys `amounts`
    owners: dict[tuple[str, str], str] = {}
    words: dict[str | None, str] = {None: "null"}  # namespaces, nodes, phases: few distinct, encoded once
    usage = model.usage.pods
    out: list[str] = []
    append = out.append
    for key, p in model.shown_pods().items():
        req, lim = p.requests, p.limits
        rj = amounts.get(id(req))
        if rj is None:
            rj = amounts[id(req)] = dumps(req, separators=(",", ":"))
            keep.append(req)
        lj = amounts.get(id(lim))
        if lj is None:
            lj = amounts[id(lim)] = dumps(lim, separators=(",", ":"))
            keep.append(lim)
        owner = p.owner
        oj: str | None
        if owner is None:
            oj = "null"
        else:
            oj = owners.get(owner)
            if oj is None:
                oj = owners[owner] = f'{{"kind":{enc(owner[0])},"name":{enc(owner[1])}}}'
        node, ns, phase = p.node, p.namespace, p.phase
        nj = words.get(node)
        if nj is None:
            assert node is not None  # words maps None from the start
            nj = words[node] = enc(node)
        nsj = words.get(ns)
        if nsj is None:
            nsj = words[ns] = enc(ns)
        pj = words.get(phase)
        if pj is None:
            pj = words[phase] = enc(phase)
        reason = p.pending_reason if node is None and phase not in TERMINAL_PHASES else None
        pu = usage.get(key) if usage else None
        append(_POD_JSON % (nsj, enc(p.name), nj, pj,
                            "true" if p.deleting else "false", p.restarts, oj, rj, lj,
                            "null" if reason is None else enc(reason),
                            "null" if pu is None else dumps(_usage_doc(pu), separators=(",", ":"))))
    return out


def _kept_texts() -> ModelTexts:
    return ModelTexts(KeptTexts(gang_doc), KeptTexts(workload_doc), KeptTexts(cluster_queue_entry))


def snapshot_json(model: ClusterModel, now: float | None = None, gang_fits: Mapping | None = None) -> str:
    """`json.dumps(build_snapshot(model), separators=(",", ":"))`, built fast for 150,000 pods: the pods
    and nodes written as text, the gangs and the queues' Workloads as text kept per view (snapshot/kept.py)."""
    with gc_paused():
        doc = build_snapshot(model, now, pods=False, node_resources=False, gang_fits=gang_fits, per_view=False)
        kept = kept_for(model, _kept_texts)
        parts: list[str] = []
        for k, v in doc.items():  # one join at the end: the pods are most of 50 MB
            parts.append(("{" if not parts else ",") + json.dumps(k) + ":")
            if k == "pods":
                parts.append("[")
                parts.append(",".join(_pods_json(model)))
                parts.append("]")
            elif k == "nodes":
                parts.append(_nodes_json(model, v))
            elif k == "gangs":
                parts += kept.gangs.array(*gang_items(model.gangs, model.display_namespace, gang_fits))
            elif k == "queues":  # its keys in order, the two arrays of kept texts in their places
                for i, (q, x) in enumerate(v.items()):
                    parts.append(("," if i else "{") + json.dumps(q) + ":")
                    if q == "clusterQueues":
                        parts += kept.cluster_queues.array(*cluster_queue_items(model))
                    elif q == "workloads":
                        parts += kept.workloads.array(*workload_items(model))
                    else:
                        parts.append(json.dumps(x, separators=(",", ":")))
                parts.append("}")
            else:
                parts.append(json.dumps(v, separators=(",", ":")))
        parts.append("}")
        text = "".join(parts)
        del doc, parts  # freed before the collector is back: its first pass would walk the document's dicts
    return text


def build_snapshot(model: ClusterModel, now: float | None = None, *, pods: bool = True,
                   node_resources: bool = True, gang_fits: Mapping | None = None, per_view: bool = True) -> dict:
    """The snapshot document of `model` (see SNAPSHOT_SCHEMA). `pods=False` leaves "pods" empty,
    `node_resources=False` leaves out the nodes' last key, "resources", and `per_view=False` leaves the
    documents made per view empty, "gangs" and the queues' "workloads" (snapshot_json adds them as text).
    `gang_fits`: gang key -> (GangFit, policy) for the gangs whose fit the caller computed
    (scheduling/gang_fit.py; see commands/snapshot.py)."""
    alloc = model.allocation()
    resources = alloc.resources
    usage = model.usage
    cols = {"capacity": alloc.capacity.tolist(), "allocatable": alloc.allocatable.tolist(),
            "requested": alloc.requested.tolist(), "limits": alloc.limits.tolist(), "free": alloc.free.tolist()}
    counts = model.pod_counts().tolist()
    fits = model.largest_fit(GPU).tolist()
    schedulable = model.schedulable().tolist()
    nodes = []
    for i, view in enumerate(alloc.views):
        nu = usage.nodes.get(view.name)
        per = {}
        for j, r in enumerate(resources if node_resources else ()):
            entry = {f: cols[f][i][j] for f in FIGURES}
            entry["usage"] = _node_usage(nu, r)
            per[r] = entry
        nodes.append({
            "name": view.name,
            "ready": view.ready,
            "schedulable": schedulable[i],
            "unschedulable": view.unschedulable,
            "conditions": dict(view.conditions),
            "taints": [{"key": t.get("key", ""), "value": t.get("value"), "effect": t.get("effect", "")}
                       for t in view.taints],
            "labels": dict(view.labels),
            "podCount": counts[i],
            "gpuLargestFit": fits[i],
            "gpuUtilization": list(nu.gpu_util) if nu is not None and nu.gpu_util is not None else None,
            "gpuMemoryUsed": nu.gpu_memory if nu is not None else None,
            "resources": per,
        })
        if not node_resources:
            del nodes[-1]["resources"]
    pod_usage = usage.pods
    pod_docs = [_pod_doc(p, pod_usage.get(key)) for key, p in model.shown_pods().items()] if pods else []
    workloads = [
        {"kind": w.kind, "namespace": w.namespace, "name": w.name, "desired": w.desired, "ready": w.ready,
         "current": w.current, "available": w.available}
        for _, w in sorted(model.workloads.items())
    ]
    totals: dict[str, dict[str, float | None]] = {}
    for r, t in model.totals().items():
        measured = usage.nodes and r in ("cpu", "memory")
        known = [v for u in usage.nodes.values() if (v := getattr(u, r)) is not None] if measured else []
        totals[r] = {**t, "usage": sum(known) if known else None}
    idle = find_idle(model.pods.values(), usage.pods, dra=model.gpus.pod_devices(),
                     by_uuid=usage.gpus)
    conn = model.connection
    at = time.time() if now is None else now
    return {
        "schemaVersion": SCHEMA_VERSION,
        "generatedAt": _iso(at),
        "units": {r: unit_of(r) for r in resources},
        "cluster": {
            "title": model.title,
            "connection": {"state": conn.state, "since": _iso(conn.since), "detail": conn.detail},
            "partial": {"reason": model.partial} if model.partial else None,
            "noGangs": gangs_unavailable(model.unavailable),
            "kubernetes": {"version": model.kubernetes, "notServed": dict(model.not_served),
                           "schedulerSkew": model.scheduler_skew()},
            "version": model.version,
            "synced": sorted(model.synced),
            "nodes": len(alloc.nodes),
            "readyNodes": sum(1 for v in alloc.views if v.ready),
            "pods": len(model.shown_pods()),
            "pendingPods": model.pending_count(),
            "totals": totals,
            "usage": {"source": usage.source, "at": _iso(usage.at), "window": usage.window, "error": usage.error,
                      "idleGpus": idle.idle_gpus, "idlePods": idle.idle_pods,
                      "unmeasuredGpuPods": idle.unmeasured_pods, "idleThreshold": idle.threshold},
        },
        "nodes": nodes,
        "pods": pod_docs,
        "workloads": workloads,
        "jobs": jobs_doc(model.jobs, model.display_namespace),
        "gangs": gangs_doc(model.gangs, model.display_namespace, gang_fits) if per_view else [],
        "fragmentation": fragmentation_doc(model.fragmentation(GPU)),
        "dra": dra_doc(model.gpus),
        "gpus": gpus_doc(model),
        "autoscaling": autoscaling_doc(model, at),
        "quotas": quotas_doc(model),
        "queues": queues_doc(model, entries=per_view),
    }
