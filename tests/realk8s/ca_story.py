"""The story the real Cluster Autoscaler plays on the plane, one phase at a time (ca_objects.py has the groups).

Every phase creates its pods in `NS` and returns once what CA writes about them is there, read from the
API server (events, the status ConfigMap, pods): no sleeps. `watch(cm)` is called with every status
ConfigMap read while waiting (the recorder saves the states it wants from there).
1. `gpu_batch`: `count` pods x 8 GPUs on gpu-pool (max 6, 8 GPUs a node) and `huge` (16 GPUs, more
   than any node has): CA grows gpu-pool to 6 and no further; 6 pods run, the rest stay Pending with
   "max node group size reached" in a NotTriggerScaleUp.
2. `quota`: 2 pods on quota-pool, whose Nodes the cloud (a ValidatingAdmissionPolicy) refuses:
   FailedToScaleUpGroup with the cloud's words, quota-pool in Backoff, the pods NotTriggerScaleUp.
3. `slow`: 2 pods on slow-pool, whose nodes never lose their startup taint: scale-up InProgress,
   then ScaleUpTimedOut after --max-node-provision-time and Backoff ("timeout").
4. `cpu`: 3 pods x 6 cpu on cpu-pool (max 3, 8 cpu a node): a scale-up that completes.
5. `limited`: 4 pods x 12 cpu on batch-pool (16 cpu a node, max 10), but CA's --cores-total leaves
   room for 2 nodes: 2 pods run, 2 stay Pending with "exceeded quota: "cluster-wide", resources: cpu".
"""

from __future__ import annotations

from collections.abc import Callable

from kubernetes import client

from . import ca_objects as ca
from .procs import wait_until

NS = "batch"
TIMEOUT = 180.0  # CA waits 30 s before it acts on pods that ask for GPUs (core/static_autoscaler.go)


class Story:
    def __init__(self, core: client.CoreV1Api, watch: Callable[[dict | None], None] | None = None,
                 read: Callable[[], dict | None] | None = None, ns: str = NS) -> None:
        """`read` returns the status ConfigMap (None before CA wrote it); the default reads it with
        the Python client, the recorder passes one that keeps the server's JSON as it came."""
        self.core = core
        self.ns = ns
        self.watch = watch or (lambda cm: None)
        self.read = read or (lambda: ca.status(core))

    # --- reading ------------------------------------------------------------------------------
    def status(self) -> dict | None:
        cm = self.read()
        self.watch(cm)
        return cm

    def group(self, name: str) -> dict:
        return ca.group_status(self.status(), name)

    def pods(self, group: str) -> list[client.V1Pod]:
        return self.core.list_namespaced_pod(self.ns, label_selector=f"group={group}").items

    def reasons(self, pod: str) -> list[str]:
        """The reasons of CA's events on this pod, oldest write first (resourceVersion order)."""
        items = self.core.list_namespaced_event(self.ns, field_selector=f"involvedObject.name={pod}").items
        mine = [e for e in items if (e.source and e.source.component) == "cluster-autoscaler"]
        return [e.reason for e in sorted(mine, key=lambda e: int(e.metadata.resource_version))]

    def status_events(self, reason: str) -> list[str]:
        """Messages of CA's events on its status ConfigMap with this reason."""
        items = self.core.list_namespaced_event(ca.NS, field_selector=f"reason={reason}").items
        return [e.message for e in items if e.involved_object.name == ca.STATUS]

    def _wait(self, check: Callable[[], bool], what: str) -> None:
        wait_until(check, TIMEOUT, what, interval=0.2)

    def _create(self, pods: list[dict]) -> None:
        for pod in pods:
            self.core.create_namespaced_pod(self.ns, pod)

    # --- phases -------------------------------------------------------------------------------
    def idle(self) -> None:
        def running() -> bool:
            doc = ca.status_doc(self.status())
            names = {g.get("name") for g in doc.get("nodeGroups") or ()}
            return doc.get("autoscalerStatus") == "Running" and names >= set(ca.GROUPS)
        self._wait(running, "CA's status Running with every kwok node group")

    def gpu_batch(self, count: int = 10, gpu_max: int = ca.GPU_MAX, huge: bool = True) -> None:
        """`count` pods x 8 GPUs (one a node) on gpu-pool, whose max is `gpu_max` (as CA was started)."""
        self._create([ca.gpu_pod(f"train-{i}", "gpu-pool") for i in range(count)]
                     + ([ca.gpu_pod("huge", "gpu-pool", gpus=16)] if huge else []))

        def settled() -> bool:
            g = self.group("gpu-pool")
            health = g.get("health") or {}
            if health.get("cloudProviderTarget") != gpu_max or health["nodeCounts"]["registered"]["ready"] != gpu_max:
                return False
            pods = self.pods("gpu-pool")
            running = [p for p in pods if p.status.phase == "Running"]
            pending = [p for p in pods if p.status.phase == "Pending"]
            return (len(running) == min(count, gpu_max) and len(pending) == len(pods) - len(running)
                    and all("NotTriggerScaleUp" in self.reasons(p.metadata.name) for p in pending))
        self._wait(settled, f"gpu-pool at {gpu_max} ready nodes, {min(count, gpu_max)} pods running, "
                            "a NotTriggerScaleUp on every pending one")

    def quota(self) -> None:
        self._create([ca.gpu_pod(f"quota-{i}", "quota-pool", gpus=4) for i in range(2)])

        def refused() -> bool:
            up = self.group("quota-pool").get("scaleUp") or {}
            return (up.get("status") == "Backoff" and bool(self.status_events("FailedToScaleUpGroup"))
                    and all("NotTriggerScaleUp" in self.reasons(p.metadata.name) for p in self.pods("quota-pool")))
        self._wait(refused, "quota-pool in Backoff, FailedToScaleUpGroup, NotTriggerScaleUp on its pods")

    def slow(self, in_progress: Callable[[dict | None], None] | None = None) -> None:
        self._create([ca.gpu_pod(f"slow-{i}", "slow-pool", gpus=0) for i in range(2)])
        seen: list[dict | None] = []

        def progressing() -> bool:
            cm = self.status()
            if (ca.group_status(cm, "slow-pool").get("scaleUp") or {}).get("status") == "InProgress":
                seen.append(cm)
            return bool(seen)
        self._wait(progressing, "slow-pool's scale-up InProgress")
        if in_progress:
            in_progress(seen[0])

        def timed_out() -> bool:
            up = self.group("slow-pool").get("scaleUp") or {}
            return (up.get("status") == "Backoff" and bool(self.status_events("ScaleUpTimedOut"))
                    and all(self.reasons(p.metadata.name)[-1:] == ["NotTriggerScaleUp"] for p in self.pods("slow-pool")))
        self._wait(timed_out, "slow-pool in Backoff after ScaleUpTimedOut, its pods NotTriggerScaleUp")

    def cpu(self) -> None:
        self._create([ca.gpu_pod(f"web-{i}", "cpu-pool", gpus=0, cpu="6") for i in range(3)])

        def done() -> bool:
            g = self.group("cpu-pool")
            ready = ((g.get("health") or {}).get("nodeCounts") or {}).get("registered", {}).get("ready")
            return (ready == 3 and (g.get("scaleUp") or {}).get("status") == "NoActivity"
                    and all(p.status.phase == "Running" for p in self.pods("cpu-pool")))
        self._wait(done, "cpu-pool at 3 ready nodes, its scale-up over, its 3 pods running")

    def limited(self) -> None:
        self._create([ca.gpu_pod(f"etl-{i}", "batch-pool", gpus=0, cpu="12") for i in range(4)])

        def capped() -> bool:
            g = self.group("batch-pool")
            ready = ((g.get("health") or {}).get("nodeCounts") or {}).get("registered", {}).get("ready")
            pods = self.pods("batch-pool")
            pending = [p for p in pods if p.status.phase == "Pending"]
            return (ready == 2 and len(pending) == 2 and len(pods) - len(pending) == 2
                    and all("NotTriggerScaleUp" in self.reasons(p.metadata.name) for p in pending))
        self._wait(capped, "batch-pool at 2 ready nodes (the cores limit), 2 pods running, NotTriggerScaleUp on the rest")
