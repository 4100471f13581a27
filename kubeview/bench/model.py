"""`kubeview bench model`: the model at scale, on a synthetic 5,000-node, 150,000-pod cluster.

The cluster is generated as raw API dicts shaped like kube-apiserver's (every pod its own dicts, as
`json.loads` of a list gives them; no managedFields), then measured against the targets of issue 4:
build from lists <= 2 s, watch events >= 20,000/s, snapshot JSON <= 1 s, peak RSS <= 1.5 GB.
Watch events are a mix of status updates, replacements (DELETED, ADDED unbound, MODIFIED bound),
scheduling failures and node heartbeats, generated in batches outside the timed section.
`--quick` divides the sizes by ten (targets unchanged). `--quota`: what the quota views add to the build
and the snapshot, on the same cluster in 500 namespaces with a ResourceQuota each (bench/model_quota.py). Timings are wall-clock on a shared machine:
run it twice and look at `uptime`.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import resource
import subprocess
import sys
import time
from dataclasses import asdict, dataclass

from kubeview.bench.model_cluster import CLAIMS, DRA_NODES, EVENTS, GPU_NODES, NODES, PODS, Cluster
from kubeview.bench.model_dra import DraCluster, device_class
from kubeview.model.cluster import ClusterModel
from kubeview.model.events import Listed
from kubeview.snapshot.document import snapshot_json


def cpu_note(f: Figure) -> str:
    """The figure measured on process CPU time, labelled as what it is: a time for a duration
    ("cpu time: 1.20 s"), a rate for a rate ("rate on cpu time: 31,000 events/s"; it said "cpu time")."""
    if f.cpu is None:
        return ""
    n = f"{f.cpu:,.0f}" if f.cpu >= 1000 else f"{f.cpu:.2f}"
    return f"  (cpu time: {n} {f.unit})" if f.unit == "s" else f"  (rate on cpu time: {n} {f.unit})"


@dataclass
class Figure:
    name: str
    value: float
    unit: str
    target: float
    higher_is_better: bool
    cpu: float | None = None  # the same figure from process CPU time: what a shared machine cannot steal

    @property
    def ratio(self) -> float:
        """How far inside the target (> 1 is a pass)."""
        if self.higher_is_better:
            return self.value / self.target
        return self.target / self.value if self.value > 0 else float("inf")

    @property
    def passed(self) -> bool:
        return self.ratio >= 1.0


def peak_rss_bytes() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # Linux reports KiB


# -- the benchmark --------------------------------------------------------------------------------
def measure(nodes: int = NODES, gpu_nodes: int = GPU_NODES, pods: int = PODS, events: int = EVENTS,
            progress=None, claims: int = 0) -> tuple[list[Figure], dict]:
    """`claims` > 0: the DRA case (bench/model_dra.py): the GPU nodes publish ResourceSlices instead."""
    say = progress or (lambda _msg: None)
    say(f"generating {nodes:,} nodes and {pods:,} pods as API dicts ...")
    dra_lists: list[tuple[str, list[dict]]] = []
    cluster: Cluster
    if claims:
        cluster = DraCluster(nodes, gpu_nodes, pods, claims)
        dra_lists = [("DeviceClass", [device_class()]), ("ResourceSlice", cluster.slices()),
                     ("ResourceClaim", cluster.claims())]
    else:
        cluster = Cluster(nodes, gpu_nodes, pods)
    node_list, pod_list, rs_list = cluster.nodes(), cluster.pods(), cluster.replicasets()

    say("building the model from the lists ...")
    model = ClusterModel("synthetic")
    t0, c0 = time.perf_counter(), time.process_time()
    model.apply(Listed("Node", node_list, "1"))
    model.apply(Listed("Pod", pod_list, "1"))
    model.apply(Listed("ReplicaSet", rs_list, "1"))
    for kind, objects in dra_lists:
        model.apply(Listed(kind, objects, "1"))
    model.allocation()
    build, build_cpu = time.perf_counter() - t0, time.process_time() - c0
    del pod_list, node_list, rs_list, dra_lists  # the source drops its lists once they are applied
    gc.collect()

    say(f"applying {events:,} watch events ...")
    applied, elapsed, elapsed_cpu = 0, 0.0, 0.0
    while applied < events:
        batch = cluster.events(min(20_000, events - applied))
        t0, c0 = time.perf_counter(), time.process_time()
        for e in batch:
            model.apply(e)
        elapsed += time.perf_counter() - t0
        elapsed_cpu += time.process_time() - c0
        applied += len(batch)
        del batch
    model.allocation()

    say("building the snapshot JSON ...")
    t0, c0 = time.perf_counter(), time.process_time()
    text = snapshot_json(model)
    snap, snap_cpu = time.perf_counter() - t0, time.process_time() - c0

    figures = [
        Figure("build from lists", build, "s", 2.0, False, build_cpu),
        Figure("watch events applied", applied / elapsed, "events/s", 20_000, True, applied / max(elapsed_cpu, 1e-9)),
        Figure("snapshot JSON", snap, "s", 1.0, False, snap_cpu),
        Figure("peak RSS", peak_rss_bytes() / 2**30, "GiB", 1.5, False),
    ]
    info = {"nodes": nodes, "gpu_nodes": gpu_nodes, "pods": pods, "events": applied, "snapshot_bytes": len(text),
            "pods_in_model": len(model.pods), "pending": model.pending_count(),
            "gpus_free": model.fragmentation().free_total, "claims": len(model.gpus.claims),
            "dra_devices": sum(len(n.devices) for n in model.gpus.nodes().values())}
    return figures, info


def plain_case(quick: bool) -> dict[str, float]:
    """The plain (device-plugin) case's figures, measured in a child process just before the DRA case
    (its own peak RSS; the same machine load)."""
    argv = [sys.executable, "-m", "kubeview", "bench", "model", "--json"] + (["--quick"] if quick else [])
    out = subprocess.run(argv, capture_output=True, text=True, check=True).stdout
    return {f["name"]: f["value"] for f in json.loads(out)["figures"]}


def run(args: argparse.Namespace) -> int:
    quick = getattr(args, "quick", False)
    as_json = getattr(args, "json", False)
    dra = getattr(args, "dra", False)
    if getattr(args, "quota", False):  # the quota views' share of the build and the snapshot (#40)
        from kubeview.bench.model_quota import run as run_quota

        return run_quota(quick, as_json, None if as_json else lambda m: print(m, file=sys.stderr))
    scale = 10 if quick else 1
    sizes = dict(nodes=NODES // scale, gpu_nodes=(DRA_NODES if dra else GPU_NODES) // scale, pods=PODS // scale,
                 events=EVENTS // scale, claims=CLAIMS // scale if dra else 0)
    plain = plain_case(quick) if dra and not as_json else None  # same run, same load: a ratio, not two days
    figures, info = measure(**sizes, progress=None if as_json else lambda m: print(m, file=sys.stderr))
    if as_json:
        print(json.dumps({"benchmark": "model", "quick": quick, "dra": dra, **info,
                          "figures": [{**asdict(f), "ratio": round(f.ratio, 3), "pass": f.passed} for f in figures]},
                         indent=2))
        return 0
    kind = f"8 DRA GPUs; {info['claims']:,} claims" if dra else "8 GPUs"
    print(f"kubeview bench model: {info['nodes']:,} nodes ({info['gpu_nodes']:,} with {kind}), "
          f"{info['pods']:,} pods, {info['events']:,} watch events{' (--quick: sizes / 10)' if quick else ''}")
    for f in figures:
        op = ">=" if f.higher_is_better else "<="
        value = f"{f.value:,.0f}" if f.value >= 1000 else f"{f.value:.2f}"
        target = f"{f.target:,.0f}" if f.target >= 1000 else f"{f.target:g}"
        cpu = cpu_note(f)
        print(f"  {f.name:<22} {value:>10} {f.unit:<9} target {op} {target:>7} {f.unit:<9} "
              f"x{f.ratio:5.2f}  {'pass' if f.passed else 'FAIL'}{cpu}")
        if plain is not None and f.name in plain:
            print(f"  {'':<22} {'plain':>10} {plain[f.name]:,.2f} {f.unit}: DRA / plain = {f.value / plain[f.name]:.2f}")
    print(f"  snapshot document {info['snapshot_bytes'] / 2**20:.1f} MiB; {info['pending']:,} pending pods; "
          f"{info['gpus_free']:,} GPUs free; pass/fail on wall-clock time, load average {os.getloadavg()[0]:.1f}")
    return 0
