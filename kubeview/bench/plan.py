"""`kubeview bench plan`: how long the planner takes on `bench model`'s synthetic cluster (5,000 nodes,
500 of them with 8 GPUs packed full first-fit, 150,000 pods), target ≤ 1 s per plan.

Every GPU node is full (its free GPUs taken by 1-GPU pods). Plans for a pending GPU pod of the cluster, a hypothetical 2 GPUs, 8 GPUs (a whole node: several pods
must go) and a gang of 4 × 8 GPUs, under `spread`, on a model built once from the lists. Each figure
is the best of three wall times (the planner is pure: nothing changes between runs), with its CPU time,
the plan's size and the search's own quality figure. `--quick`: a tenth of the sizes.
"""

from __future__ import annotations

import argparse
import json
import sys
import time

from kubeview.bench.model import Figure, cpu_note
from kubeview.bench.model_cluster import GPU_NODES, NODES, PODS, Cluster, pod
from kubeview.model.allocation import GPU
from kubeview.model.cluster import ClusterModel
from kubeview.model.events import Listed
from kubeview.scheduling.config import PackingConfig
from kubeview.scheduling.plan_types import Plan, Target, hypothetical
from kubeview.scheduling.planner import plan_for

TARGET_S = 1.0
REPEAT = 3


def build(nodes: int, gpu_nodes: int, pods: int) -> ClusterModel:
    """`bench model`'s cluster with every GPU node's free GPUs taken by 1-GPU pods of a ReplicaSet:
    no GPU is free, so every plan below has to disrupt something (the hard case)."""
    cluster = Cluster(nodes, gpu_nodes, pods)
    used: dict[str, int] = {}
    for _, where, gpus in cluster.placement.values():
        if where is not None and gpus:
            used[where] = used.get(where, 0) + gpus
    fillers, i = [], cluster.next_index
    for name in cluster.node_names[:gpu_nodes]:
        for _ in range(8 - used.get(name, 0)):
            fillers.append(pod(i, 0, name, 1, 5000 + i))  # workload 0 is a GPU workload (a ReplicaSet)
            i += 1
    model = ClusterModel("synthetic")
    model.apply(Listed("Node", cluster.nodes(), "1"))
    model.apply(Listed("Pod", cluster.pods() + fillers, "1"))
    model.apply(Listed("ReplicaSet", cluster.replicasets(), "1"))
    model.allocation()
    return model


def targets(model: ClusterModel) -> list[tuple[str, Target]]:
    pending = next((p for p in model.pending() if p.requests.get(GPU, 0) >= 2), None)
    out = []
    if pending is not None:
        out.append((f"pending pod {pending.namespace}/{pending.name}", Target.of_pods([pending])))
    out += [("2 GPUs", hypothetical(2)), ("8 GPUs", hypothetical(8)), ("gang 4 × 8 GPUs", hypothetical(8, pods=4))]
    return out


def timed(model: ClusterModel, target: Target, config: PackingConfig) -> tuple[float, float, Plan]:
    best, best_cpu, plan = float("inf"), float("inf"), None
    for _ in range(REPEAT):
        t0, c0 = time.perf_counter(), time.process_time()
        plan = plan_for(model, target, config)
        best = min(best, time.perf_counter() - t0)
        best_cpu = min(best_cpu, time.process_time() - c0)
    assert plan is not None
    return best, best_cpu, plan


def run(args: argparse.Namespace) -> int:
    quick = getattr(args, "quick", False)
    as_json = getattr(args, "json", False)
    scale = 10 if quick else 1
    sizes = dict(nodes=NODES // scale, gpu_nodes=GPU_NODES // scale, pods=PODS // scale)
    say = (lambda _m: None) if as_json else (lambda m: print(m, file=sys.stderr))
    say(f"building the model: {sizes['nodes']:,} nodes, {sizes['pods']:,} pods ...")
    model = build(**sizes)
    config = PackingConfig(policy="spread")
    rows = []
    for name, target in targets(model):
        say(f"planning for {name} ...")
        wall, cpu, plan = timed(model, target, config)
        fig = Figure(f"plan: {name}", wall, "s", TARGET_S, False, cpu)
        rows.append((fig, plan))
    ok = all(f.passed for f, _ in rows)
    if as_json:
        print(json.dumps({"sizes": sizes, "figures": [
            {"name": f.name, "value": f.value, "unit": f.unit, "target": f.target, "passed": f.passed, "cpu": f.cpu,
             "moves": len(p.moves), "found": p.found, "method": p.method, "quality": p.quality} for f, p in rows]},
            indent=2))
        return 0 if ok else 1
    print(f"kubeview bench plan: {sizes['nodes']:,} nodes ({sizes['gpu_nodes']:,} with 8 GPUs), "
          f"{sizes['pods']:,} pods, policy spread, best of {REPEAT}")
    for f, p in rows:
        verdict = "ok" if f.passed else "OVER TARGET"
        what = (f"{len(p.moves)} disruption{'s' if len(p.moves) != 1 else ''}" if p.found and not p.fits_now
                else "fits now" if p.fits_now else "no plan")
        print(f"  {f.name:<44} {f.value:7.3f} s  (target ≤ {f.target:g} s: {verdict}){cpu_note(f)}")
        print(f"    {what}, {p.method}: {p.quality or p.reason}")
    return 0 if ok else 1
