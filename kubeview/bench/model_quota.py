"""`kubeview bench model --quota`: what the quota and queue views (#40) add to the model's build and snapshot time.

The plain bench's cluster (5,000 nodes, 150,000 pods) spread over 500 namespaces, each with a
ResourceQuota on GPUs, cpu and memory (hard above what its pods ask, status.used what the quota
controller would write; every tenth namespace at its GPU quota with a Job held by it: the Job and the
job-controller's FailedCreate Event in the API server's words; every 50th with a used one off, so
kubeview's count differs), and Kueue's objects (bench/model_kueue.py: 50 ClusterQueues, a LocalQueue per
namespace, 3 ResourceFlavors, 20,000 Workloads; the pods of the admitted ones carry Kueue's annotation, in
the plain build's pod list too). One run, the same data both ways:
- build: the lists the plain bench applies (Node, Pod, ReplicaSet) and the allocation, timed; then
  the ResourceQuota list and the first quota views (`quota_uses()`, `held()`), timed apart: their
  share of the build; then Kueue's four lists (a Workload goes to the gang store and the queue store)
  and the first queue views the header and the Workloads rows read (`queues.held_pods()`, `held_owners()`;
  until #40's last round the header read `held()`, every held Workload's view), timed apart; both together: target <= 10 %. The Jobs and Events are applied between, untimed: kinds
  of their own, which the views read.
- the baseline: a second model built from the same plain lists, given the same Jobs, Events and watch
  events, and Kueue's Workloads as gangs only, as kubeview read them before #40 (a Kueue Workload was a
  gang since #27; the queue views are what #40 adds): its apply of the Workload list is timed and taken
  off the Kueue step's time.
- snapshot: `snapshot_json` before the quotas, Jobs and Events are there, after them, and after the
  queues too (the best of five each, a pod event before each, and a Workload event before each with
  the queues, so that nothing cached per model version is reused; what is kept per object, such as a
  gang untouched since, is), each in turns with the baseline's (measured beside, not minutes earlier,
  so that the machine's drift between phases is not counted as the views' cost): the difference's
  share, target <= 10 %. Said too: the share beside the snapshot with no Kueue object at all (the
  Workloads' 20,000 gangs counted as the views' cost), and the first snapshot with the queues (every
  Workload read, every gang built, as in a one-shot `kubeview snapshot`).
Also said, not judged: the quota views recomputed after one watch event (per model version, when read).
"""

from __future__ import annotations

import copy
import gc
import json
import os
import time
from collections.abc import Callable
from functools import partial

from kubeview.bench.model_cluster import GPU_NODES, NODES, PODS, Cluster
from kubeview.bench.model_kueue import KueueObjects
from kubeview.model.cluster import ClusterModel
from kubeview.model.events import Listed, WatchEvent
from kubeview.model.gangs.messages import KIND_KUEUE
from kubeview.model.queues.store import QueueStore
from kubeview.model.queues.workload import KueueWorkloads
from kubeview.model.requests import pod_amounts
from kubeview.snapshot.document import snapshot_json

NAMESPACES = 500
TARGET = 0.10  # the quota and queue views add at most this share to the build and to the snapshot
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


def _workload_bump(workloads: list[dict], n: int) -> list[WatchEvent]:
    """Status updates of pending Workloads (a new resourceVersion): a new queue and gang version."""
    pending = [w for w in workloads if "admission" not in w["status"]][:n] or workloads[:n]
    out = []
    for k, w in enumerate(pending):
        obj = copy.deepcopy(w)
        obj["metadata"]["resourceVersion"] = str(990_000 + k)
        out.append(WatchEvent(KIND_KUEUE, "MODIFIED", obj))
    return out


_CPU: dict[str, float] = {}  # the same figures on process CPU time (what a shared machine steals less of)


def _cpu(name: str, action: Callable[[], object]) -> float:
    """`_timed`, keeping the CPU time under `name` (the least of repeats)."""
    c0 = time.process_time()
    wall = _timed(action)
    _CPU[name] = min(_CPU.get(name, float("inf")), time.process_time() - c0)
    return wall


def _snapshots(model: ClusterModel, base: ClusterModel, events: list[list[WatchEvent]], name: str) -> tuple[list[float], list[float]]:
    """`snapshot_json` of `model` and of `base` (the same cluster without the quota and queue views) in turns,
    the order swapped each round so that neither always follows the other, each after the round's events
    (given to both): (model's times, base's times). The CPU times are kept under `name` and `name`_base."""
    out: list[float] = []
    beside: list[float] = []
    for k, batch in enumerate(events):
        for e in batch:
            model.apply(e)
            base.apply(e)
        first = name if out else name + "_first"
        pair = [(base, name + "_base", beside), (model, first, out)]
        for m, key, into in pair if k % 2 else pair[::-1]:
            into.append(_cpu(key, partial(snapshot_json, m)))
    _CPU[name] = min(_CPU[name], _CPU.get(name + "_first", float("inf")))
    return out, beside


def measure(nodes: int = NODES, gpu_nodes: int = GPU_NODES, pods: int = PODS, namespaces: int = NAMESPACES,
            progress: Callable[[str], None] | None = None) -> dict:
    say = progress or (lambda _msg: None)
    say(f"generating {nodes:,} nodes and {pods:,} pods in {namespaces:,} namespaces as API dicts ...")
    cluster = Cluster(nodes, gpu_nodes, pods, namespaces=namespaces)
    node_list, pod_list, rs_list = cluster.nodes(), cluster.pods(), cluster.replicasets()
    kueue = KueueObjects(cluster, namespaces, pods)
    rs_list = kueue.adopt(pod_list, rs_list)  # every fifth ReplicaSet's pods are Jobs' pods admitted by Kueue
    kueue.make_rest()
    queue_lists = kueue.lists()
    used = _usage(pod_list)
    names = sorted(used)
    quotas = [quota(ns, i, used[ns]) for i, ns in enumerate(names)]
    held = [held_job(ns, i) for i, ns in enumerate(names) if i % 10 == 0]
    bump = [[e] for e in cluster.events(4 * REPEAT)]  # pod status updates: a new model version before each snapshot
    moved = _workload_bump(kueue.workloads, 2 * REPEAT)

    say("building the model from the lists ...")
    model = ClusterModel("synthetic")

    _CPU.clear()
    plain = [Listed("Node", node_list, "1"), Listed("Pod", pod_list, "1"), Listed("ReplicaSet", rs_list, "1")]
    build = _cpu("build", lambda: (model.apply_all(plain), model.allocation()))
    base = ClusterModel("synthetic-base")  # the same lists and events, never a quota or a queue view: the baseline
    base.apply_all(plain)
    base.allocation()
    del node_list, pod_list, rs_list
    plain.clear()
    gc.collect()

    say("the snapshot JSON without quotas ...")
    snap = min(_snapshots(model, base, bump[:REPEAT], "snapshot")[0])

    for m in (model, base):  # kinds of their own, untimed
        m.apply(Listed("Job", [j for j, _ in held], "1"))
        m.apply(Listed("Event", [e for _, e in held], "1"))
    say("the ResourceQuota list and the first quota views ...")
    views = _cpu("quota", lambda: (model.apply(Listed("ResourceQuota", quotas, "1")), model.quota_uses(), model.held()))
    counted = {"quotas": len(model.quotas), "held": len(model.held()),
               "differ": sum(u.differs for uses in model.quota_uses().values() for u in uses)}

    say("the snapshot JSON with quotas ...")
    with_quota, base_quota = _snapshots(model, base, bump[REPEAT:2 * REPEAT], "snapshot_quota")
    snap_quota, snap_base_quota = min(with_quota), min(base_quota)

    say("Kueue's lists and the first queue views ...")

    def queues() -> None:
        for kind, objects in queue_lists:
            model.apply(Listed(kind, objects, "1"))
        model.queues.held_pods(), model.queues.held_owners()
    queue_views = _cpu("queues", queues)
    # the baseline's Workloads are gangs only, as before #40 (its queue half goes to a store never read)
    base.kinds[KIND_KUEUE] = (KueueWorkloads(base.gangs, QueueStore()),)
    gangs_only = _cpu("gangs_only", lambda: base.apply(Listed(KIND_KUEUE, kueue.workloads, "1")))
    queue_lists.clear()
    gc.collect()

    say("the snapshot JSON with quotas and queues ...")
    snaps, base_queues = _snapshots(model, base, [p + [w] for p, w in zip(bump[2 * REPEAT:3 * REPEAT], moved[:REPEAT],
                                                                            strict=False)], "snapshot_queues")
    snap_queues, snap_base_queues = min(snaps), min(base_queues)
    doc = json.loads(snapshot_json(model))
    store = model.queues
    counted |= {"cluster_queues": len(store.cluster_queues()), "local_queues": len(store.local_queues()),
                "flavors": len(store.flavors()), "workloads": len(store.workloads()),
                "workloads_pending": len(store.held()), "kueue_gangs": sum(g.kind == KIND_KUEUE for g in model.gangs.gangs()),
                "kueue_members": sum(len(g.members) for g in model.gangs.gangs() if g.kind == KIND_KUEUE)}

    refresh, refresh_queues = [], []
    for batch in bump[3 * REPEAT:]:
        model.apply(batch[0])
        refresh.append(_timed(lambda: (model.quota_uses(), model.held())))
    for we in moved[REPEAT:]:
        model.apply(we)
        refresh_queues.append(_timed(lambda: (model.queues.held_pods(), model.queues.held_owners())))
    return {"nodes": nodes, "pods": pods, "namespaces": namespaces, **counted,
            "snapshot_quota_namespaces": len(doc["quotas"]["namespaces"]),
            "snapshot_workloads": len(doc["queues"]["workloads"]),
            "build_s": build, "quota_views_s": views, "queue_views_s": queue_views, "gangs_only_s": gangs_only,
            "build_share_quota": views / build, "build_share_queues": (queue_views - gangs_only) / build,
            "build_share": (views + queue_views - gangs_only) / build,
            "snapshot_share_no_kueue": (snap_queues - snap_base_quota) / snap_base_quota,
            "snapshot_s": snap, "snapshot_quota_s": snap_quota, "snapshot_queues_s": snap_queues,
            "snapshot_base_quota_s": snap_base_quota, "snapshot_base_queues_s": snap_base_queues,
            "snapshot_queues_first_s": snaps[0], "snapshot_share_first": (snaps[0] - snap_base_queues) / snap_base_queues,
            "snapshot_base_first_s": base_queues[0],
            "snapshot_share_first_beside": (snaps[0] - base_queues[0]) / base_queues[0],
            "snapshot_share_quota": (snap_quota - snap_base_quota) / snap_base_quota,
            "snapshot_share": (snap_queues - snap_base_queues) / snap_base_queues,
            "views_after_event_ms": 1000 * min(refresh), "queue_views_after_event_ms": 1000 * min(refresh_queues),
            "cpu": {"build_share": (_CPU["quota"] + _CPU["queues"] - _CPU["gangs_only"]) / _CPU["build"],
                    "build_share_queues": (_CPU["queues"] - _CPU["gangs_only"]) / _CPU["build"],
                    "snapshot_share": (_CPU["snapshot_queues"] - _CPU["snapshot_queues_base"]) / _CPU["snapshot_queues_base"],
                    "snapshot_share_first": (_CPU["snapshot_queues_first"] - _CPU["snapshot_queues_base"])
                    / _CPU["snapshot_queues_base"],
                    **{f"{k}_s": v for k, v in _CPU.items()}},
            "target": TARGET}


def report(r: dict, quick: bool) -> list[str]:
    def verdict(share: float) -> str:
        ratio = f"x{TARGET / share:5.2f}" if share > TARGET / 99 else "x>99  "  # none measurable
        return f"{ratio}  {'pass' if share <= TARGET else 'FAIL'}"

    target = f"target <= {100 * TARGET:.0f} %"
    return [
        f"kubeview bench model --quota: {r['nodes']:,} nodes, {r['pods']:,} pods in {r['namespaces']:,} namespaces, "
        f"{r['quotas']:,} ResourceQuotas, {r['held']:,} Jobs held by quota, {r['differ']:,} counts that differ"
        f"{' (--quick: sizes / 10)' if quick else ''}",
        f"  Kueue: {r['cluster_queues']:,} ClusterQueues, {r['local_queues']:,} LocalQueues, {r['flavors']:,} "
        f"ResourceFlavors, {r['workloads']:,} Workloads ({r['workloads_pending']:,} pending; "
        f"{r['kueue_members']:,} pods in {r['kueue_gangs']:,} gangs)",
        f"  build from lists               {r['build_s']:8.3f} s",
        f"  + quota list and views         {r['quota_views_s']:8.3f} s  = {100 * r['build_share_quota']:5.1f} % of the build",
        f"  + Kueue lists and views        {r['queue_views_s']:8.3f} s, less {r['gangs_only_s']:.3f} s for its Workloads as "
        f"gangs only (as before #40, on the baseline) = {100 * r['build_share_queues']:5.1f} % of the build",
        f"  = quota and queue views        {r['quota_views_s'] + r['queue_views_s'] - r['gangs_only_s']:8.3f} s  = "
        f"{100 * r['build_share']:5.1f} % of the build  {target}  {verdict(r['build_share'])}",
        f"  snapshot JSON                  {r['snapshot_s']:8.3f} s  (the same model before quotas and queues)",
        f"  snapshot JSON with quotas      {r['snapshot_quota_s']:8.3f} s  = {100 * r['snapshot_share_quota']:+5.1f} %"
        f"  beside {r['snapshot_base_quota_s']:.3f} s without, in turns",
        f"  snapshot JSON, quotas, queues  {r['snapshot_queues_s']:8.3f} s  = {100 * r['snapshot_share']:+5.1f} %"
        f"  beside {r['snapshot_base_queues_s']:.3f} s with the Workloads as gangs only, in turns  {target}  "
        f"{verdict(r['snapshot_share'])}",
        f"  (beside the snapshot without any Kueue object, the Workloads' gangs counted too: "
        f"{100 * r['snapshot_share_no_kueue']:+.1f} %, said, not judged)",
        f"  the first of them             {r['snapshot_queues_first_s']:8.3f} s  = {100 * r['snapshot_share_first']:+5.1f} %"
        f"  (every Workload read, every gang built: the one-shot `snapshot`'s case); beside the baseline's first "
        f"{r['snapshot_base_first_s']:.3f} s (its gangs built too, each Workload read as kubeview reads one now, "
        f"both halves at once): {100 * r['snapshot_share_first_beside']:+.1f} %, said, not judged",
        f"  on CPU time: quotas and queues {100 * r['cpu']['build_share']:.1f} % of the build (queues "
        f"{100 * r['cpu']['build_share_queues']:.1f} %), snapshot {100 * r['cpu']['snapshot_share']:+.1f} %, the first "
        f"{100 * r['cpu']['snapshot_share_first']:+.1f} %",
        f"  views after one watch event: quotas {r['views_after_event_ms']:.1f} ms, queues "
        f"{r['queue_views_after_event_ms']:.1f} ms (recomputed per version, when read); wall-clock, load average "
        f"{os.getloadavg()[0]:.1f}",
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
