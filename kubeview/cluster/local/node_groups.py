"""The embedded cluster's node groups and their autoscaler, writing what Cluster Autoscaler writes.

A mixin of `LocalCluster` (state.py). Each `nodeGroups:` entry of the cluster file starts at its
`size`; `autoscale(now)` is one loop of the autoscaler (its source calls it every `SCAN_INTERVAL`, and
at once when a node is due): nodes asked for `provisionSeconds` ago register (a Node from the group's
template, named `<group>-<5 letters>`, with the DaemonSet pods that match it, so the scheduler places
waiting pods there at once); then `autoscaler.plan` decides, and the loop writes CA's outputs: the
pods' Events `TriggeredScaleUp` / `NotTriggerScaleUp` (component cluster-autoscaler), `ScaledUpGroup`
on the status ConfigMap, and the ConfigMap `kube-system/cluster-autoscaler-status` (watch kind
"ca.Status", `ca_status.py`). Pure like the rest: `now` comes from the caller's clock.

**Deviations** from CA: a pod's NotTriggerScaleUp is recorded when its words change, when its Event
was pushed out of the cluster's last MAX_EVENTS, or every REPEAT_SECONDS (counted up), not every loop; the ConfigMap is rewritten when something in it other than the
probe times changes; nodes register Ready (no NotStarted phase); no scale-down.
"""

from __future__ import annotations

import builtins
import copy
import random
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from kubeview.cluster.local import ca_status
from kubeview.cluster.local import events as ev
from kubeview.cluster.local import objects as obj
from kubeview.cluster.local.autoscaler import (
    Group,
    Plan,
    daemon_matches,
    plan,
    template_allocation,
    template_node,
)
from kubeview.cluster.local.config import ClusterConfig, NodeGroupSpec, SystemWorkload
from kubeview.cluster.local.kubelet_status import Key, _key
from kubeview.model.allocation import Allocation
from kubeview.model.autoscaling.store import CA_STATUS
from kubeview.model.cluster import ClusterModel
from kubeview.model.views import PodView

SCAN_INTERVAL = 2.0  # seconds between loops (CA's --scan-interval is 10 s; the demo wants it brisker)
REPEAT_SECONDS = 60.0  # the same words on a pod are recorded again (counted up) after this long
CA = ca_status.COMPONENT


@dataclass(slots=True)
class GroupRun:
    """One node group while the cluster runs."""

    spec: NodeGroupSpec
    alloc: Allocation  # one template node with its DaemonSet pods
    target: int
    nodes: list[str] = field(default_factory=list)  # registered, oldest first
    due: list[float] = field(default_factory=list)  # when each node asked for registers

    def view(self) -> Group:
        return Group(name=self.spec.name, max_size=self.spec.max_size, target=self.target,
                     upcoming=len(self.due), alloc=self.alloc)

    def state(self) -> ca_status.GroupState:
        return ca_status.GroupState(
            name=self.spec.name, min_size=self.spec.min_size, max_size=self.spec.max_size, target=self.target,
            registered=len(self.nodes), unregistered=len(self.due),
            scale_up=ca_status.IN_PROGRESS if self.due else ca_status.NO_ACTIVITY)


class NodeGroups:
    """The node groups of `LocalCluster` and the loop that grows them; see the module docstring."""

    model: ClusterModel
    groups: dict[str, GroupRun]
    daemonsets: list[tuple[SystemWorkload, dict]]  # (workload, owner reference) of the system DaemonSets
    _node_index: dict[str, int]
    _ca_said: dict[Key, tuple[str, float]]  # pod -> the last scale-up words recorded on it, and when
    _ca_doc: dict | None  # the status last written

    if TYPE_CHECKING:  # provided by LocalCluster and its other mixins
        def get(self, kind: str, namespace: str, name: str) -> dict | None: ...
        def list(self, kind: str) -> builtins.list[dict]: ...
        def create(self, kind: str, o: dict) -> dict: ...
        def update(self, kind: str, o: dict) -> dict: ...
        def record(self, event: dict) -> None: ...
        def recorded(self, event: dict) -> bool: ...
        def reconcile(self, rounds: int = 20) -> None: ...
        def created_seq(self, kind: str, namespace: str, name: str) -> int: ...
        def _kubelet_run(self, pod: dict) -> None: ...

    def _start_groups(self, config: ClusterConfig, now: float, seed: int | None) -> None:
        """The groups at their starting size (nodes registered at once), before any pod is created."""
        self._ca_said, self._ca_doc = {}, None
        # node names and their DaemonSet pods: a stream of their own, so pod names stay what they were
        self._node_rng = random.Random(f"nodes-{seed}") if seed is not None else random.Random()
        self.groups = {g.name: GroupRun(g, template_allocation(g, config.system), g.size) for g in config.node_groups}
        for run in self.groups.values():
            for _ in range(run.target):
                self._register(run)
        if self.groups:
            self._write_status(now)

    # --- the loop --------------------------------------------------------------------------------
    def autoscale(self, now: float) -> Plan | None:
        """One autoscaler loop at `now`: due nodes register, then scale up or say why not. None without groups."""
        if not self.groups:
            return None
        registered = False
        for run in self.groups.values():
            while run.due and run.due[0] <= now:
                run.due.pop(0)
                self._register(run)
                registered = True
        if registered:
            self.reconcile()  # the scheduler places waiting pods on the new nodes
        pods = [(_key(p), PodView.from_api(p)) for p in self._unschedulable()]
        decision = plan([run.view() for run in self.groups.values()], pods, equivalence=_equivalence)
        if decision.scale_up is not None:
            self._scale_up(decision, pods, now)
        for key, message in decision.not_triggered.items():
            self._say(key, "NotTriggerScaleUp", message, now)
        self._write_status(now)
        return decision

    def next_due(self) -> float | None:
        """When the next node asked for registers (None: none is coming)."""
        due = [run.due[0] for run in self.groups.values() if run.due]
        return min(due) if due else None

    def _unschedulable(self) -> builtins.list[dict]:
        """Pods the scheduler marked PodScheduled=False, Unschedulable (what CA acts on), oldest first."""
        out = []
        for view in self.model.pending():  # only unbound pods: thousands of finished Job pods stay out
            pod = self.get("Pod", *view.key)
            if pod is None or (pod.get("spec") or {}).get("nodeName"):
                continue
            if any(c.get("type") == "PodScheduled" and c.get("status") == "False" and c.get("reason") == "Unschedulable"
                   for c in (pod.get("status") or {}).get("conditions") or []):
                out.append(pod)
        return sorted(out, key=lambda p: self.created_seq("Pod", *_key(p)))

    def _scale_up(self, decision: Plan, pods: builtins.list[tuple[Key, PodView]], now: float) -> None:
        assert decision.scale_up is not None
        name, old, new = decision.scale_up
        run = self.groups[name]
        status = self._status_object()
        max_size = run.spec.max_size
        self.record(ev.legacy_event("ConfigMap", status, "Normal", "ScaledUpGroup",
                                    ca_status.scaled_up_group(name, new, old, max_size, done=False), CA, t=now))
        run.target = new
        run.due += [now + run.spec.provision_seconds] * (new - old)
        self.record(ev.legacy_event("ConfigMap", status, "Normal", "ScaledUpGroup",
                                    ca_status.scaled_up_group(name, new, old, max_size, done=True), CA, t=now))
        message = ca_status.triggered([ca_status.scale_up_info(name, old, new, max_size)])
        for key in decision.triggered:
            self._say(key, "TriggeredScaleUp", message, now)

    def _say(self, key: Key, reason: str, message: str, now: float) -> None:
        """A scale-up Event on a pod, unless it got the same words less than REPEAT_SECONDS ago and they
        are still kept (CA says them every loop and its recorder counts them up; the cluster keeps
        MAX_EVENTS, and a busy batch pushes out the oldest)."""
        pod = self.get("Pod", *key)
        if pod is None:
            return
        event = ev.legacy_event("Pod", pod, "Normal", reason, message, CA, t=now)
        said = self._ca_said.get(key)
        if said is not None and said[0] == message and now - said[1] < REPEAT_SECONDS and self.recorded(event):
            return
        self._ca_said[key] = (message, now)
        self.record(event)

    # --- nodes -----------------------------------------------------------------------------------
    def _register(self, run: GroupRun) -> dict:
        """A node of the group joins: the Node, then the DaemonSet pods that match it."""
        name = f"{run.spec.name}-{obj.suffix(self._node_rng)}"
        self._node_index[name] = max(self._node_index.values(), default=-1) + 1
        node = self.create("Node", template_node(run.spec, name, self._node_index[name]))
        run.nodes.append(name)
        for w, owner in self.daemonsets:
            if daemon_matches(w, node):
                self._kubelet_run(self.create("Pod", obj.daemon_pod(w, name, owner, self._node_rng)))
        return node

    # --- the status ConfigMap ----------------------------------------------------------------------
    def _status_object(self) -> dict:
        current = self.get(CA_STATUS, ca_status.NAMESPACE, ca_status.NAME)
        if current is not None:
            return current
        return {"metadata": obj.metadata(ca_status.NAME, ca_status.NAMESPACE)}

    def _write_status(self, now: float) -> None:
        doc = ca_status.status_document([run.state() for run in self.groups.values()], now, self._ca_doc)
        if self._ca_doc is not None and _without_probes(doc) == _without_probes(self._ca_doc):
            return
        self._ca_doc = doc
        current = self.get(CA_STATUS, ca_status.NAMESPACE, ca_status.NAME)
        meta = copy.deepcopy(current["metadata"]) if current is not None else obj.metadata(ca_status.NAME,
                                                                                         ca_status.NAMESPACE)
        fresh = ca_status.configmap(doc, now, meta)
        if current is None:
            self.create(CA_STATUS, fresh)
        else:
            self.update(CA_STATUS, fresh)


def _equivalence(key: Key, pod: PodView) -> object:
    """Pods of one controller fit alike (CA's equivalence groups); a bare pod is its own."""
    return (key[0], pod.owner) if pod.owner is not None else key


def _without_probes(doc: object) -> object:
    if isinstance(doc, dict):
        return {k: _without_probes(v) for k, v in doc.items() if k not in ("lastProbeTime", "time")}
    if isinstance(doc, list):
        return [_without_probes(v) for v in doc]
    return doc
