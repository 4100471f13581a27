"""Run one scheduler_perf-style workload in-process and measure SchedulingThroughput.

The loop is the embedded scheduler's: for each pending pod, read it (`PodView.from_api`), `evaluate`
it over all nodes, bind it to the best node by adding its requests to that row of the allocation
arrays, so the next pod sees it. Throughput is sampled as scheduler_perf's throughputCollector does:
pods scheduled per sample interval, divided by the interval's real length; the DataItem's Average is
the mean of the samples and PercNN are nearest-rank percentiles of them.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

import numpy as np

from kubeview.bench.scheduler.scenarios import Workload, node_objects, pod_objects
from kubeview.model.allocation import GPU, Allocation
from kubeview.model.views import NodeView, PodView
from kubeview.scheduling.allocations import from_views, with_usage_from
from kubeview.scheduling.evaluate import evaluate


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


def _schedule(alloc: Allocation, pods: list[dict], workload: Workload, sampler: _Sampler | None) -> tuple[int, int]:
    """Place `pods` one by one; returns (scheduled, unschedulable)."""
    config = workload.packing
    col = {r: j for j, r in enumerate(alloc.resources)}
    requested = alloc.requested
    scheduled = failed = 0
    for obj in pods:
        view = PodView.from_api(obj)
        row = evaluate(alloc, view, config).best_row
        if row is None:
            failed += 1
        else:
            for name, value in view.requests.items():
                c = col.get(name)
                if c is not None:
                    requested[row, c] += value  # bind: the next pod sees this one
            scheduled += 1
        if sampler is not None:
            sampler.tick()
    return scheduled, failed


def run_workload(workload: Workload) -> WorkloadResult:
    views: list[NodeView] = []
    alloc: Allocation | None = None
    pod_seq = node_seq = 0
    result = WorkloadResult(workload.full_name, workload.threshold, 0, 0, 0, 0, 0.0)
    for op in workload.ops:
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
                scheduled, failed = _schedule(alloc, pods, workload, sampler)
                result.seconds += sampler.finish()
                result.samples += sampler.samples
                result.measured_pods += op.count
                result.scheduled += scheduled
                result.unschedulable += failed
            else:
                _schedule(alloc, pods, workload, None)
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
