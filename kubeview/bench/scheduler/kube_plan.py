"""The pure half of `kubeview bench scheduler --kubeconfig`: what it creates and how it counts.

Everything kubeview creates on a real cluster carries the run's label, so that cleanup (and a
refusal to touch a cluster it did not set up) needs nothing but a label selector. Throughput is
sampled the way scheduler_perf's throughputCollector does it (test/integration/scheduler_perf/
util.go): a tick every interval counts the scheduled pods; nothing is recorded until the first pod
is scheduled, the first non-empty tick is skipped (sampling and pod creation did not start
together), a tick with no new pod is held and, once one comes, the rate over the whole stretch is
recorded once for every interval it covered.
"""

from __future__ import annotations

import copy
import secrets
from dataclasses import dataclass, field

from kubeview.model.allocation import Allocation
from kubeview.model.views import NodeView, PodView
from kubeview.scheduling.allocations import from_views

RUN_LABEL = "kubeview.io/bench-run"
# Fake nodes have no kubelet: once the node lifecycle controller marks them NotReady it taints them.
# scheduler_perf runs without that controller; on a real cluster the bench pods tolerate the taints
# (NoSchedule only: a pod on a fake node is never evicted by a kubelet that is not there anyway).
NODE_LIFECYCLE_TAINTS = ("node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable")


def new_run_id() -> str:
    return secrets.token_hex(3)


def namespace_name(run: str) -> str:
    return f"kubeview-bench-{run}"


def bench_namespace(run: str) -> dict:
    return {"apiVersion": "v1", "kind": "Namespace",
            "metadata": {"name": namespace_name(run), "labels": {RUN_LABEL: run}}}


def bench_node(template: dict, run: str) -> tuple[dict, dict]:
    """(the Node to create, its status to write): the API server drops status on create, so it is
    written with a second call to the status subresource, as scheduler_perf does."""
    obj = copy.deepcopy(template)
    obj["apiVersion"], obj["kind"] = "v1", "Node"
    meta = obj.setdefault("metadata", {})
    meta["name"] = f"kvb-{run}-{meta['name']}"
    labels = meta.setdefault("labels", {})
    labels[RUN_LABEL] = run
    labels["kubernetes.io/hostname"] = meta["name"]
    status = obj.pop("status", {}) or {}
    status.setdefault("conditions", [{"type": "Ready", "status": "True", "reason": "KubeviewBench",
                                      "message": "a fake node of kubeview bench scheduler (no kubelet)"}])
    for c in status["conditions"]:
        c.setdefault("reason", "KubeviewBench")
    status.setdefault("phase", "Running")
    return obj, {"status": status}


def bench_pod(template: dict, run: str, scheduler: str) -> dict:
    """A pod of the scenario, in the run's namespace, for `scheduler`; its generated uid, version and
    status are the API server's to set."""
    obj = copy.deepcopy(template)
    obj["apiVersion"], obj["kind"] = "v1", "Pod"
    meta = obj.setdefault("metadata", {})
    for key in ("uid", "resourceVersion", "creationTimestamp"):
        meta.pop(key, None)
    meta["namespace"] = namespace_name(run)
    meta.setdefault("labels", {})[RUN_LABEL] = run
    obj.pop("status", None)
    spec = obj.setdefault("spec", {})
    spec["schedulerName"] = scheduler
    spec.setdefault("terminationGracePeriodSeconds", 0)
    tolerations = spec.setdefault("tolerations", [])
    for key in NODE_LIFECYCLE_TAINTS:
        tolerations.append({"key": key, "operator": "Exists", "effect": "NoSchedule"})
    spec["nodeSelector"] = {**(spec.get("nodeSelector") or {}), RUN_LABEL: run}
    return obj


def foreign_nodes(nodes: list[dict], run: str | None = None) -> list[str]:
    """Names of nodes this bench did not create (any run's label counts as ours; with `run`, only that run's)."""
    out = []
    for node in nodes:
        labels = (node.get("metadata") or {}).get("labels") or {}
        mark = labels.get(RUN_LABEL)
        if mark is None or (run is not None and mark != run):
            out.append((node.get("metadata") or {}).get("name", "?"))
    return out


@dataclass
class ThroughputCollector:
    """scheduler_perf's throughputCollector, fed by ticks instead of its own ticker (so it is pure)."""

    interval: float
    samples: list[float] = field(default_factory=list)
    _started: bool = False
    _last_count: int = 0
    _last_time: float = 0.0
    _skipped: int = 0

    def tick(self, now: float, scheduled: int) -> None:
        if scheduled == 0:
            return
        if not self._started:
            self._started, self._last_count, self._last_time = True, scheduled, now
            return
        new = scheduled - self._last_count
        if new <= 0:
            self._skipped += 1
            return
        rate = new / max(now - self._last_time, 1e-9)
        self.samples.extend([rate] * (self._skipped + 1))
        self._last_count, self._last_time, self._skipped = scheduled, now, 0


def allocation_of(node_objs: list[dict], bound: list[dict]) -> Allocation:
    """What the bound pods (each with spec.nodeName) request on the bench's nodes, for `gpu_packing`:
    how well the scheduler packed, read from where the pods really went."""
    requested: dict[str, dict[str, int]] = {}
    for obj in bound:
        per_node = requested.setdefault(obj["spec"]["nodeName"], {})
        for name, value in PodView.from_api(obj).requests.items():
            per_node[name] = per_node.get(name, 0) + value
    return from_views([NodeView.from_api(o) for o in node_objs], requested)
