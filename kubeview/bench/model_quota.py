"""`kubeview bench model --quota`: what the quota views (#40) add to the model's build and snapshot time.

The plain bench's cluster (5,000 nodes, 150,000 pods) spread over 500 namespaces, each with a
ResourceQuota on GPUs, cpu and memory (hard above what its pods ask, status.used what the quota
controller would write; every tenth namespace at its GPU quota with a Job held by it: the Job and the
job-controller's FailedCreate Event in the API server's words; every 50th with a used one off, so
kubeview's count differs). One run, one model, the same data both ways:
- build: the lists the plain bench applies (Node, Pod, ReplicaSet) and the allocation, timed; then
  the ResourceQuota list and the first quota views (`quota_uses()`, `held()`), timed apart: their
  share of the build, target <= 10 %. The Jobs and Events are applied between, untimed: kinds of
  their own, which the views read.
- snapshot: `snapshot_json` before the quotas, Jobs and Events are there, and after (the best of
  five each, a pod event before each so that nothing cached per model version is reused): the
  difference's share, target <= 10 %.
Also said, not judged: the quota views recomputed after one watch event (per model version, when read).
"""

from __future__ import annotations

import gc
import json
import os
import time
from collections.abc import Callable

from kubeview.bench.model_cluster import GPU_NODES, NODES, PODS, Cluster
from kubeview.model.cluster import ClusterModel
from kubeview.model.events import Listed
from kubeview.model.requests import pod_amounts
from kubeview.snapshot.document import snapshot_json

NAMESPACES = 500
TARGET = 0.10  # the quota views add at most this share to the build and to the snapshot
REPEAT = 5  # snapshots each way (the best is taken: the others are what the machine's load added)
GPU_KEY = "requests.nvidia.com/gpu"
_TS = "2026-11-22T10:00:00Z"


def _usage(pods: list[dict]) -> dict[str, dict[str, int]]:
    """Per namespace: GPUs, cpu (millicores) and memory its unfinished pods request."""
    out: dict[str, dict[str, int]] = {}
    for p in pods:
        if p["status"].get("phase") in ("Succeeded", "Failed"):
            continue
        req = pod_amounts(p["spec"])[0]
        mine = out.setdefault(p["metadata"]["namespace"], {"gpu": 0, "cpu": 0, "memory": 0})
        mine["gpu"] += req.get("nvidia.com/gpu", 0)
        mine["cpu"] += req.get("cpu", 0)
        mine["memory"] += req.get("memory", 0)
    return out


def quota(ns: str, i: int, used: dict[str, int]) -> dict:
    at_quota = i % 10 == 0
    gpu_hard = used["gpu"] if at_quota else used["gpu"] + 8
    hard = {GPU_KEY: str(gpu_hard), "requests.cpu": f"{2 * used['cpu'] + 1000}m",
            "requests.memory": str(2 * used["memory"] + 2**30)}
    off = 1 if i % 50 == 25 else 0  # the controller's figure one off: kubeview's count differs
    status_used = {GPU_KEY: str(used["gpu"] + off), "requests.cpu": f"{used['cpu']}m",
                   "requests.memory": str(used["memory"])}
    return {"metadata": {"name": "team-quota", "namespace": ns, "uid": f"{i:08x}-3333-4000-8000-000000000000",
                         "resourceVersion": str(900_000 + i), "creationTimestamp": _TS},
            "spec": {"hard": hard}, "status": {"hard": hard, "used": status_used}}


def held_job(ns: str, i: int) -> tuple[dict, dict]:
    """A Job of 4 × 1 GPU whose pods the quota refused, and the job-controller's FailedCreate Event."""
    uid = f"{i:08x}-4444-4000-8000-000000000000"
    job = {"metadata": {"name": "finetune", "namespace": ns, "uid": uid, "resourceVersion": str(910_000 + i),
                        "creationTimestamp": _TS},
           "spec": {"parallelism": 4, "completions": 4, "completionMode": "NonIndexed", "suspend": False,
                    "backoffLimit": 6, "template": {"spec": {"containers": [{"name": "t", "resources": {
                        "requests": {"cpu": "1", "nvidia.com/gpu": "1"}}}]}}},
           "status": {"startTime": _TS, "ready": 0, "terminating": 0, "uncountedTerminatedPods": {}}}
    message = (f'Error creating: pods "finetune-{i:05d}" is forbidden: exceeded quota: team-quota, requested: '
               f"{GPU_KEY}=1, used: {GPU_KEY}=8, limited: {GPU_KEY}=8")
    event = {"metadata": {"name": f"finetune.{i:016x}", "namespace": ns, "uid": f"{i:08x}-5555-4000-8000-000000000000",
                          "resourceVersion": str(920_000 + i), "creationTimestamp": _TS},
             "involvedObject": {"kind": "Job", "namespace": ns, "name": "finetune", "uid": uid, "apiVersion": "batch/v1"},
             "reason": "FailedCreate", "message": message, "type": "Warning", "count": 3,
             "source": {"component": "job-controller"}, "firstTimestamp": _TS, "lastTimestamp": _TS}
    return job, event


def _timed(action: Callable[[], object]) -> float:
    t0 = time.perf_counter()
    action()
    return time.perf_counter() - t0


def measure(nodes: int = NODES, gpu_nodes: int = GPU_NODES, pods: int = PODS, namespaces: int = NAMESPACES,
            progress: Callable[[str], None] | None = None) -> dict:
    say = progress or (lambda _msg: None)
    say(f"generating {nodes:,} nodes and {pods:,} pods in {namespaces:,} namespaces as API dicts ...")
    cluster = Cluster(nodes, gpu_nodes, pods, namespaces=namespaces)
    node_list, pod_list, rs_list = cluster.nodes(), cluster.pods(), cluster.replicasets()
    used = _usage(pod_list)
    names = sorted(used)
    quotas = [quota(ns, i, used[ns]) for i, ns in enumerate(names)]
    held = [held_job(ns, i) for i, ns in enumerate(names) if i % 10 == 0]
    bump = cluster.events(3 * REPEAT)  # pod status updates: a new model version before each snapshot

    say("building the model from the lists ...")
    model = ClusterModel("synthetic")

    t0 = time.perf_counter()
    model.apply(Listed("Node", node_list, "1"))
    model.apply(Listed("Pod", pod_list, "1"))
    model.apply(Listed("ReplicaSet", rs_list, "1"))
    model.allocation()
    build = time.perf_counter() - t0
    del node_list, pod_list, rs_list
    gc.collect()

    say("the snapshot JSON without quotas ...")
    snaps = []
    for e in bump[:REPEAT]:
        model.apply(e)
        snaps.append(_timed(lambda: snapshot_json(model)))
    snap = min(snaps)

    model.apply(Listed("Job", [j for j, _ in held], "1"))  # kinds of their own, untimed
    model.apply(Listed("Event", [e for _, e in held], "1"))
    say("the ResourceQuota list and the first quota views ...")
    views = _timed(lambda: (model.apply(Listed("ResourceQuota", quotas, "1")), model.quota_uses(), model.held()))
    counted = {"quotas": len(model.quotas), "held": len(model.held()),
               "differ": sum(u.differs for uses in model.quota_uses().values() for u in uses)}

    say("the snapshot JSON with quotas ...")
    snaps = []
    for e in bump[REPEAT:2 * REPEAT]:
        model.apply(e)
        snaps.append(_timed(lambda: snapshot_json(model)))
    snap_quota = min(snaps)
    doc = json.loads(snapshot_json(model))

    refresh = []
    for e in bump[2 * REPEAT:]:
        model.apply(e)
        refresh.append(_timed(lambda: (model.quota_uses(), model.held())))
    return {"nodes": nodes, "pods": pods, "namespaces": namespaces, **counted,
            "snapshot_quota_namespaces": len(doc["quotas"]["namespaces"]),
            "build_s": build, "quota_views_s": views, "build_share": views / build,
            "snapshot_s": snap, "snapshot_quota_s": snap_quota, "snapshot_share": (snap_quota - snap) / snap,
            "views_after_event_ms": 1000 * min(refresh), "target": TARGET}


def report(r: dict, quick: bool) -> list[str]:
    def verdict(share: float) -> str:
        ratio = f"x{TARGET / share:5.2f}" if share > TARGET / 99 else "x>99  "  # none measurable
        return f"{ratio}  {'pass' if share <= TARGET else 'FAIL'}"

    return [
        f"kubeview bench model --quota: {r['nodes']:,} nodes, {r['pods']:,} pods in {r['namespaces']:,} namespaces, "
        f"{r['quotas']:,} ResourceQuotas, {r['held']:,} Jobs held by quota, {r['differ']:,} counts that differ"
        f"{' (--quick: sizes / 10)' if quick else ''}",
        f"  build from lists          {r['build_s']:8.3f} s",
        f"  + quota list and views    {r['quota_views_s']:8.3f} s  = {100 * r['build_share']:5.1f} % of the build"
        f"     target <= {100 * TARGET:.0f} %  {verdict(r['build_share'])}",
        f"  snapshot JSON             {r['snapshot_s']:8.3f} s",
        f"  snapshot JSON with quotas {r['snapshot_quota_s']:8.3f} s  = {100 * r['snapshot_share']:+5.1f} %"
        f"                target <= {100 * TARGET:.0f} %  {verdict(r['snapshot_share'])}",
        f"  quota views after one watch event: {r['views_after_event_ms']:.1f} ms (recomputed per model version, "
        f"when read); wall-clock, load average {os.getloadavg()[0]:.1f}",
    ]


def run(quick: bool, as_json: bool, progress: Callable[[str], None] | None) -> int:
    scale = 10 if quick else 1
    r = measure(NODES // scale, GPU_NODES // scale, PODS // scale, NAMESPACES // scale, progress)
    if as_json:
        print(json.dumps({"benchmark": "model-quota", "quick": quick, **r,
                          "pass": r["build_share"] <= TARGET and r["snapshot_share"] <= TARGET}, indent=2))
    else:
        print("\n".join(report(r, quick)))
    return 0
