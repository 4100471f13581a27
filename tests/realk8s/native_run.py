"""The native profile's choices on the real kube-scheduler, set beside kubeview's what-if.

One GPU pod at a time: kubeview's view of the plane (live_view.LiveView, the TUI's source and model) is
current (every earlier pod bound, or gone, in the view as in the API server), the what-if evaluates
the new pod on it with the profile's NativeScoring, then the pod is created and kube-scheduler's
choice read back. Agreement: the node it chose is in the what-if's best set (kube-scheduler picks at
random among equal totals); a pod it cannot place agrees when the what-if has no feasible node.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from kubernetes import client

from kubeview.model.views import PodView
from kubeview.scheduling.config import PackingConfig
from kubeview.scheduling.evaluate import evaluate
from kubeview.scheduling.native_profile import native_config
from kubeview.scheduling.native_scoring import NativeScoring

from .live_view import LiveView
from .procs import wait_until

GPU = "nvidia.com/gpu"
NODE_GPUS = (1, 2, 4, 8)
NODE_CPUS = ("8", "16", "32", "64")
NODE_MEMORY = ("32Gi", "64Gi", "128Gi", "256Gi")
SPREAD = native_config(PackingConfig(policy="spread"))
POD_GPUS = (1, 1, 1, 2, 2, 4, 8)
POD_CPUS = ("500m", "1", "2", "4", "8", "16")
POD_MEMORY = ("1Gi", "4Gi", "16Gi", "32Gi", "64Gi")


def node_shapes(rng: random.Random, count: int) -> list[dict[str, str]]:
    """Mixed GPU nodes: every GPU count, cpu and memory drawn independently."""
    return [{"cpu": rng.choice(NODE_CPUS), "memory": rng.choice(NODE_MEMORY), "pods": "110",
             GPU: str(NODE_GPUS[i % len(NODE_GPUS)])} for i in range(count)]


def pod_body(name: str, namespace: str, rng: random.Random, select: dict[str, str], scheduler: str) -> dict:
    res = {"cpu": rng.choice(POD_CPUS), "memory": rng.choice(POD_MEMORY), GPU: str(rng.choice(POD_GPUS))}
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": namespace, "labels": {"app": "native-mix"}},
            "spec": {"schedulerName": scheduler, "nodeSelector": select, "terminationGracePeriodSeconds": 0,
                     "containers": [{"name": "train", "image": "registry.k8s.io/pause:3.10",
                                     "resources": {"requests": res, "limits": res}}]}}


@dataclass
class Comparison:
    """Decisions compared so far, and the disagreements with what was known at the time."""

    bound: int = 0
    unschedulable: int = 0
    agree: int = 0
    tied: int = 0  # decisions where the what-if's best set had more than one node
    native_set: int = 0  # summed size of the what-if's best sets
    extender_agree: int = 0  # the same decisions against the extender's pack scoring (0..10)
    extender_set: int = 0  # summed size of its best sets: coarser scores, larger sets, easier to be in
    spread_agree: int = 0  # the control: LeastAllocated (the default profile's Fit) as the what-if
    differ: list[str] = field(default_factory=list)

    @property
    def total(self) -> int:
        return self.bound + self.unschedulable

    def words(self) -> str:
        share = 100.0 * self.agree / max(self.total, 1)
        return (f"{self.agree}/{self.total} agree ({share:.1f}%): {self.bound} bound, {self.unschedulable} "
                f"unschedulable; {self.tied} ties kube-scheduler broke at random within the best set (mean size "
                f"{self.native_set / max(self.total, 1):.2f}); as the what-if, the extender's pack scoring would "
                f"agree {self.extender_agree}/{self.total} (mean best set {self.extender_set / max(self.total, 1):.2f} "
                f"nodes), LeastAllocated {self.spread_agree}/{self.total}")


@dataclass
class MixRun:
    core: client.CoreV1Api
    view: LiveView
    namespace: str
    select: dict[str, str]
    scheduler: str
    scoring: NativeScoring
    rng: random.Random
    result: Comparison = field(default_factory=Comparison)
    live: list[tuple[str, int]] = field(default_factory=list)  # (pod, GPUs) bound now
    gpus: int = 0  # the GPUs of the mixed nodes

    def step(self, index: int) -> None:
        """Keep the nodes between half and ~70% full of GPUs, then place one new pod and compare."""
        while self.live and sum(g for _, g in self.live) > 0.7 * self.gpus:
            self._delete(self.live.pop(self.rng.randrange(len(self.live)))[0])
        name = f"mix-{index:03d}"
        body = pod_body(name, self.namespace, self.rng, self.select, self.scheduler)
        view = PodView.from_api(body)
        placement, extender, spread = self.view.read(lambda m: (
            evaluate(m.allocation(), view, PackingConfig(native=self.scoring)),
            evaluate(m.allocation(), view, PackingConfig()), evaluate(m.allocation(), view, SPREAD)))
        best = placement.best_set
        self.result.native_set += len(best)
        self.result.extender_set += len(extender.best_set)
        self.core.create_namespaced_pod(self.namespace, body)
        node = wait_until(lambda: self._outcome(name), 30, f"{name} bound or unschedulable")
        gpus = int(body["spec"]["containers"][0]["resources"]["requests"][GPU])
        if node == "-":
            self.result.unschedulable += 1
            ok = not best
            self.result.extender_agree += not extender.best_set
            self.result.spread_agree += not spread.best_set
            self._delete(name)
        else:
            self.result.bound += 1
            ok = node in best
            self.result.extender_agree += node in extender.best_set
            self.result.spread_agree += node in spread.best_set
            self.live.append((name, gpus))
            self.view.read(lambda m: None)  # surfaces a failed source
            wait_until(lambda: self.view.read(lambda m: getattr(m.pods.get((self.namespace, name)), "node", None))
                       == node, 30, f"kubeview's view to show {name} on {node}")
        self.result.tied += len(best) > 1
        if ok:
            self.result.agree += 1
        else:
            scores = dict(zip(placement.nodes, placement.scores.tolist(), strict=True))
            self.result.differ.append(f"{name} ({gpus} GPUs): kube-scheduler chose {node} (what-if score "
                                      f"{scores.get(node)}), what-if best {best} (score "
                                      f"{scores.get(best[0]) if best else None})")

    def _outcome(self, name: str) -> str | None:
        pod = self.core.read_namespaced_pod(name, self.namespace)
        if pod.spec.node_name:
            return str(pod.spec.node_name)
        for c in pod.status.conditions or []:
            if c.type == "PodScheduled" and c.status == "False" and c.reason == "Unschedulable":
                return "-"
        return None

    def _delete(self, name: str) -> None:
        """Delete, then wait until the API server and kubeview's view both have it gone."""
        self.core.delete_namespaced_pod(name, self.namespace, grace_period_seconds=0)

        def gone() -> bool:
            try:
                self.core.read_namespaced_pod(name, self.namespace)
                return False
            except client.ApiException as exc:
                if exc.status != 404:
                    raise
            return self.view.read(lambda m: (self.namespace, name) not in m.pods)

        wait_until(gone, 30, f"{name} gone from the API server and kubeview's view")
