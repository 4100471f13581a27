"""Run one scheduler_perf-style workload in-process and measure SchedulingThroughput.

The loop is the embedded scheduler's: for each pending pod, read it (`PodView.from_api`), `evaluate`
it over all nodes, bind it to the best node by adding its requests to that row of the allocation
arrays, so the next pod sees it. Throughput is sampled as scheduler_perf's throughputCollector does:
pods scheduled per sample interval, divided by the interval's real length; the DataItem's Average is
the mean of the samples and PercNN are nearest-rank percentiles of them.

Gangs (pods naming a PodGroup of a `createPodGroups` op) are placed as the embedded cluster's
pod-group cycle places them: the group's pods together by `scheduling.gang_fit.fit_gang`, all bound
if at least minCount fit, none otherwise (then all counted unschedulable); a pod whose group does
not exist waits (unschedulable here). Every pod ticks the sampler once, so pods/s compare with the
plain workload's.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

import numpy as np

from kubeview.bench.scheduler.scenarios import Workload, node_objects, pod_group_objects, pod_objects
from kubeview.model.allocation import GPU, Allocation
from kubeview.model.views import NodeView, PodView
from kubeview.scheduling.allocations import from_views, with_usage_from
from kubeview.scheduling.evaluate import evaluate
from kubeview.scheduling.gang_fit import fit_gang


@dataclass(slots=True)
class WorkloadResult:
    name: str
    threshold: float | None
    nodes: int
    measured_pods: int
    scheduled: int
    unschedulable: int
    seconds: float
    samples: list[float] = field(default_factory=list)  # pods/s per interval
    gpu: dict[str, int] = field(default_factory=dict)  # packing quality, when the cluster has GPUs
    gang_size: int = 0  # pods per PodGroup of the measured pods (0: plain pods)
    recovery: str = ""  # what a plan places of the pods left Pending (real-cluster runs; plan_recovery)
    round_rates: list[float] = field(default_factory=list)  # real-cluster runs: each round's Average

    def data_item(self) -> dict:
        """scheduler_perf's DataItem for SchedulingThroughput."""
        return {"data": throughput_summary(self.samples), "unit": "pods/s",
                "labels": {"Metric": "SchedulingThroughput", "Name": self.name}}


def throughput_summary(samples: list[float]) -> dict[str, float]:
    """Average and nearest-rank percentiles, as scheduler_perf's throughputCollector.collect()."""
    if not samples:
        return {"Average": 0.0, "Perc50": 0.0, "Perc90": 0.0, "Perc95": 0.0, "Perc99": 0.0}
    ordered = sorted(samples)
    n = len(ordered)

    def perc(p: int) -> float:
        return round(ordered[math.ceil(n * p / 100) - 1], 2)

    return {"Average": round(sum(ordered) / n, 2), "Perc50": perc(50), "Perc90": perc(90), "Perc95": perc(95),
            "Perc99": perc(99)}


class _Sampler:
    def __init__(self, interval: float) -> None:
        self.interval = interval
        self.samples: list[float] = []
        self.start = self.last = time.perf_counter()
        self.count = 0
        self.at_last = 0

    def tick(self) -> None:
        self.count += 1
        now = time.perf_counter()
        if now - self.last >= self.interval:
            self.samples.append((self.count - self.at_last) / (now - self.last))
            self.last, self.at_last = now, self.count

    def finish(self) -> float:
        now = time.perf_counter()
        # the tail counts if it is at least half an interval long (or if it is all there is)
        if self.count > self.at_last and (now - self.last >= self.interval / 2 or not self.samples):
            self.samples.append((self.count - self.at_last) / max(now - self.last, 1e-9))
        return now - self.start


def _bind(alloc: Allocation, col: dict[str, int], row: int, view: PodView) -> None:
    """Add the pod's requests to its node's row: the next pod sees this one."""
    for name, value in view.requests.items():
        c = col.get(name)
        if c is not None:
            alloc.requested[row, c] += value


def _schedule(alloc: Allocation, pods: list[dict], workload: Workload, sampler: _Sampler | None,
              groups: dict[str, int] | None = None) -> tuple[int, int]:
    """Place `pods` one by one (a gang's all together, at its first pod); returns (scheduled, unschedulable).
    `groups`: PodGroup name -> minCount."""
    config = workload.packing
    groups = groups or {}
    members: dict[str, list[PodView]] = {}
    views = [PodView.from_api(obj) for obj in pods]
    for obj, view in zip(pods, views, strict=True):
        group = ((obj.get("spec") or {}).get("schedulingGroup") or {}).get("podGroupName")
        if group is not None:
            members.setdefault(group, []).append(view)
    rows = {name: i for i, name in enumerate(alloc.nodes)}
    col = {r: j for j, r in enumerate(alloc.resources)}
    scheduled = failed = 0
    done: set[str] = set()
    for obj, view in zip(pods, views, strict=True):
        group = ((obj.get("spec") or {}).get("schedulingGroup") or {}).get("podGroupName")
        if group is None:
            row = evaluate(alloc, view, config).best_row
            if row is None:
                failed += 1
            else:
                _bind(alloc, col, row, view)
                scheduled += 1
            if sampler is not None:
                sampler.tick()
            continue
        if group in done:
            continue
        done.add(group)
        gang = members[group]
        placed = []
        if group in groups and len(gang) >= groups[group]:
            fit = fit_gang(alloc, gang, groups[group], config)
            placed = fit.placement if fit.fits else []
        for pod, node in placed:
            _bind(alloc, col, rows[node], pod)
        scheduled += len(placed)
        failed += len(gang) - len(placed)
        if sampler is not None:
            for _ in gang:
                sampler.tick()
    return scheduled, failed


def run_workload(workload: Workload) -> WorkloadResult:
    views: list[NodeView] = []
    alloc: Allocation | None = None
    pod_seq = node_seq = 0
    groups: dict[str, int] = {}
    result = WorkloadResult(workload.full_name, workload.threshold, 0, 0, 0, 0, 0.0, gang_size=workload.gang_size)
    for op in workload.ops:
        if op.opcode == "createPodGroups":
            groups.update((g["metadata"]["name"], op.min_count) for g in pod_group_objects(op))
        if op.opcode == "createNodes":
            views = views + [NodeView.from_api(o) for o in node_objects(op, node_seq)]
            node_seq += op.count
            alloc = from_views(views) if alloc is None else with_usage_from(views, alloc)
        elif op.opcode == "createPods":
            if alloc is None:
                alloc = from_views([])
            pods = pod_objects(op, pod_seq)
            pod_seq += op.count
            if op.collect:
                sampler = _Sampler(workload.sample_interval)
                scheduled, failed = _schedule(alloc, pods, workload, sampler, groups)
                result.seconds += sampler.finish()
                result.samples += sampler.samples
                result.measured_pods += op.count
                result.scheduled += scheduled
                result.unschedulable += failed
            else:
                _schedule(alloc, pods, workload, None, groups)
    result.nodes = len(views)
    if alloc is not None:
        result.gpu = gpu_packing(alloc)
    return result


def gpu_packing(alloc: Allocation) -> dict[str, int]:
    """How well GPUs were packed: GPU nodes in use, and whole free nodes left for 8-GPU jobs."""
    col = alloc.column(GPU)
    if col is None:
        return {}
    has = alloc.allocatable[:, col] > 0
    used = alloc.requested[has, col]
    free = alloc.allocatable[has, col] - used
    return {"gpu_nodes": int(has.sum()), "gpus_requested": int(used.sum()),
            "gpu_nodes_in_use": int((used > 0).sum()), "gpu_nodes_empty": int((used == 0).sum()),
            "gpus_free": int(free.sum()), "largest_free_gpus": int(free.max()) if free.size else 0,
            "stranded_gpus": int(np.where((used > 0) & (free > 0), free, 0).sum())}
