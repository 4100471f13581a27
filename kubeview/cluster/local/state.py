"""The local cluster's state: an in-memory apiserver, its controllers, scheduler and kubelet status.

Everything here is a pure state transition: a call changes objects, and every change becomes a
`WatchEvent` (appended to `events`, applied to the internal `ClusterModel` the scheduler reads) and,
where a process must start or stop, an intent (appended to `intents`) for the process supervisor.
No threads, no processes, no I/O: `LocalSource` holds the lock, drains both lists and runs the
supervisor, and feeds what the processes did back in through `container_*`.
"""

from __future__ import annotations

import builtins
import copy
import itertools
import random
import time
import uuid
from collections import OrderedDict
from collections.abc import Callable

from kubeview.cluster.local import dra as dra
from kubeview.cluster.local import events as ev
from kubeview.cluster.local import objects as obj
from kubeview.cluster.local.actions import ClusterActions
from kubeview.cluster.local.claims import TEMPLATE, ClaimControllers
from kubeview.cluster.local.config import ClusterConfig, SystemWorkload
from kubeview.cluster.local.controllers import (
    collect_garbage,
    controller_uid,
    is_active,
    reconcile_deployment,
    reconcile_replicaset,
)
from kubeview.cluster.local.eviction import nominated_load
from kubeview.cluster.local.gang_cycle import GangCycle
from kubeview.cluster.local.gang_objects import GANG_OBJECT_KINDS, pod_group_of
from kubeview.cluster.local.jobs import JobLedger, reconcile_job
from kubeview.cluster.local.kubelet_status import Intent, Key, KubeletStatus, StopPod, _container_name, _key
from kubeview.cluster.local.node_groups import NodeGroups
from kubeview.cluster.local.quota import QUOTA, Quotas
from kubeview.cluster.local.scheduler import decide, is_pending, queue_order
from kubeview.cluster.source import ActionError
from kubeview.model.autoscaling.store import CA_STATUS
from kubeview.model.cluster import ClusterModel
from kubeview.model.events import Listed, SourceEvent, WatchEvent
from kubeview.model.gpus.dra import DRA_KINDS
from kubeview.scheduling.config import PackingConfig

LOCAL_KINDS = ("Node", "Pod", "ReplicaSet", "Deployment", "Event", "Job", QUOTA) + GANG_OBJECT_KINDS
MAX_EVENTS = 1000  # the oldest Event goes beyond this (an apiserver lets them expire after an hour)


class LocalCluster(ClusterActions, ClaimControllers, GangCycle, KubeletStatus, NodeGroups, Quotas):
    """Objects, controllers and scheduler of the embedded cluster; see the module docstring."""

    def __init__(self, config: ClusterConfig, packing: PackingConfig | None = None, seed: int | None = None,
                 clock: Callable[[], float] = time.time) -> None:
        self.packing = packing or PackingConfig()
        self.model = ClusterModel("local cluster")
        self.rng = random.Random(seed)
        # the scheduler's tie-breaks (local_scheduler.decide): their own stream, so that pod names
        # (self.rng) stay what they were for a seed however many ties came before
        self.ties = random.Random(f"ties-{seed}") if seed is not None else random.Random()
        self.events: list[SourceEvent] = []
        self.intents: list[Intent] = []
        self.clock = clock  # the autoscaler's time (node_groups.py); tests pass their own
        self.daemon_uids: set[str] = set()
        self.daemonsets: list[tuple[SystemWorkload, dict]] = []
        self.budgets: dict[Key, dict] = {}  # PodDisruptionBudgets, for the Eviction API (local/eviction.py)
        self.nominated: dict[Key, str] = {}  # pending pods with status.nominatedNodeName (local/eviction.py)
        self._objects: dict[str, dict[Key, dict]] = {k: {} for k in LOCAL_KINDS + DRA_KINDS + (TEMPLATE, CA_STATUS)}
        self._dra = any(n.dra is not None for n in config.nodes)  # serve the DRA kinds (resource.k8s.io/v1)
        self._seq: dict[tuple[str, Key], int] = {}
        self._counter = itertools.count()
        self._rv = 0
        self._owned: dict[str, dict[Key, dict]] = {}  # controller uid -> its pods (controllers' lookups)
        self._processes: set[Key] = set()  # pods the supervisor was asked to run and has not stopped
        self._pod_ips: dict[str, int] = {}
        self._node_index: dict[str, int] = {}
        self._schedule_needed = True
        self._event_keys: OrderedDict[tuple, Key] = OrderedDict()  # aggregation key -> Event, oldest first
        self._said: dict[tuple[str, str, str], Key] = {}  # event_once: (uid, reason, what) -> its Event
        self.job_ledgers: dict[str, JobLedger] = {}  # Job uid -> what its controller has counted
        self._init_quotas()
        self._bootstrap(config)
        self._start_groups(config, clock(), seed)
        self.reconcile()

    # --- the apiserver (also the controllers' Api) -------------------------------------------------
    @property
    def resource_version(self) -> str:
        return str(self._rv)

    def list(self, kind: str) -> list[dict]:  # below, `list` names this method: the type is builtins.list
        return list(self._objects[kind].values())

    def get(self, kind: str, namespace: str, name: str) -> dict | None:
        return self._objects[kind].get((namespace, name))

    def created_seq(self, kind: str, namespace: str, name: str) -> int:
        return self._seq.get((kind, (namespace, name)), 0)

    def owned(self, uid: str) -> builtins.list[dict]:
        return list((self._owned.get(uid) or {}).values())

    def pod_owners(self) -> builtins.list[str]:
        return list(self._owned)

    def _write(self, kind: str, type_: obj.Change, o: dict) -> dict:
        self._rv += 1
        o["metadata"]["resourceVersion"] = str(self._rv)
        key = _key(o)
        if type_ == "DELETED":
            self._objects[kind].pop(key, None)
            self._seq.pop((kind, key), None)
        else:
            self._objects[kind][key] = o
        owner = controller_uid(o) if kind == "Pod" else None
        if owner is not None:
            pods = self._owned.setdefault(owner, {})
            if type_ == "DELETED":
                pods.pop(key, None)
                if not pods:
                    del self._owned[owner]
            else:
                pods[key] = o
        if kind == TEMPLATE:  # read by the resourceclaim controller only: no client lists or watches it
            return o
        event = WatchEvent(kind, type_, obj.with_kind(kind, o))
        self.model.apply(event)
        self.events.append(event)
        if kind == "PodGroup":  # the gang plugin's events: a group added or changed requeues its pods
            self._schedule_needed = True
        if kind == "Pod":
            self._schedule_needed = True
            self.quota_pod_written(type_ == "DELETED", o)
            if self._dra:
                self._release_claims(o, type_)
        return o

    def create(self, kind: str, o: dict) -> dict:
        key = _key(o)
        if key in self._objects[kind]:
            raise ActionError(f"{kind.lower()} {key[0]}/{key[1]} already exists")
        if kind == "Pod":
            self.admit_quota(o)  # the ResourceQuota admission plugin: QuotaRefused, or its quotas charged
        self._seq[(kind, key)] = next(self._counter)
        return self._write(kind, "ADDED", o)

    def update(self, kind: str, o: dict) -> dict:
        return self._write(kind, "MODIFIED", o)

    def delete(self, kind: str, namespace: str, name: str) -> None:
        """Delete a workload; the garbage collector removes what it owns."""
        o = self._objects[kind].get((namespace, name))
        if o is not None:
            self._write(kind, "DELETED", copy.deepcopy(o))

    def event(self, kind: str, o: dict, type_: str, reason: str, message: str, component: str, *,
              host: str = "", field_path: str | None = None) -> None:
        """Record a controller's or kubelet's Event about `o` (a kind of LOCAL_KINDS)."""
        self.record(ev.legacy_event(kind, o, type_, reason, message, component, host=host, field_path=field_path))

    def event_once(self, kind: str, o: dict, type_: str, reason: str, message: str, component: str,
                   same: str) -> None:
        """`event`, unless one with the same `same` (the message less what changes between retries, such
        as a refused pod's name) about `o` is still kept: a controller's retry, not a new fact."""
        said = (o["metadata"]["uid"], reason, same)
        kept = self._said.get(said)
        if kept is not None and kept in self._objects["Event"]:
            return
        event = ev.legacy_event(kind, o, type_, reason, message, component)
        self.record(event)
        self._said[said] = self._event_keys[ev.aggregation_key(event)]

    def record(self, event: dict) -> None:
        """Write an Event; the same occurrence again (object, type, reason, message) counts up instead,
        as client-go's aggregation and the scheduler's series do. At most MAX_EVENTS are kept."""
        agg = ev.aggregation_key(event)
        key = self._event_keys.get(agg)
        old = self._objects["Event"].get(key) if key is not None else None
        if old is not None:
            self._event_keys.move_to_end(agg)
            self.update("Event", ev.repeated(old))
            return
        self._event_keys[agg] = _key(self.create("Event", event))
        while len(self._event_keys) > MAX_EVENTS:
            _, oldest = self._event_keys.popitem(last=False)
            gone = self._objects["Event"].get(oldest)
            if gone is not None:
                self._write("Event", "DELETED", copy.deepcopy(gone))

    def recorded(self, event: dict) -> bool:
        """Is this occurrence (object, type, reason, message) among the Events kept?"""
        key = self._event_keys.get(ev.aggregation_key(event))
        return key is not None and key in self._objects["Event"]

    def delete_pod(self, namespace: str, name: str, grace: float | None = None) -> None:
        pod = self._objects["Pod"].get((namespace, name))
        if pod is None or (pod.get("metadata") or {}).get("deletionTimestamp"):
            return
        period = int(grace if grace is not None else (pod.get("spec") or {}).get("terminationGracePeriodSeconds", 30))
        if not (pod.get("spec") or {}).get("nodeName"):
            self._write("Pod", "DELETED", copy.deepcopy(pod))  # never bound: gone at once
            return
        marked = self.update("Pod", obj.deleting(pod, period))
        if (namespace, name) in self._processes:
            self.intents.append(StopPod((namespace, name), float(period)))
            name_ = _container_name(pod)
            self.event("Pod", marked, "Normal", "Killing", f"Stopping container {name_}", "kubelet",
                       host=pod["spec"]["nodeName"], field_path=f"spec.containers{{{name_}}}")
        else:  # nothing runs behind it: the kubelet confirms at once
            self._write("Pod", "DELETED", copy.deepcopy(marked))

    def snapshot(self) -> builtins.list[Listed]:
        """One `Listed` per kind: what a client's first list returns (items without kind/apiVersion).

        StatefulSets are listed too, empty: the local cluster runs none, and a client waiting for every
        kind to sync must not wait for ever."""
        kinds = LOCAL_KINDS + (DRA_KINDS if self._dra else ()) + ((CA_STATUS,) if self.groups else ())
        listed = [Listed(kind, [copy.deepcopy(o) for o in self._objects[kind].values()], self.resource_version)
                  for kind in kinds]
        return listed + [Listed("StatefulSet", [], self.resource_version)]

    # --- bootstrap ------------------------------------------------------------------------------
    def _bootstrap(self, config: ClusterConfig) -> None:
        nodes = []
        for i, spec in enumerate(config.nodes):
            self._node_index[spec.name] = i
            nodes.append(self.create("Node", obj.node_object(spec, i)))
        if self._dra:
            self.create("DeviceClass", dra.device_class())
        for node, spec in zip(nodes, config.nodes, strict=True):
            if spec.dra is not None:
                self.create("ResourceSlice", dra.resource_slice(node, spec.dra, self.rng))
        for w in config.system:
            if w.kind == "Deployment":
                self.create("Deployment", obj.system_deployment(w))
            elif w.kind == "Static":
                for node, spec in zip(nodes, config.nodes, strict=True):
                    if spec.control_plane:
                        self._kubelet_run(self.create("Pod", obj.static_pod(w, node)))
            else:
                owner = {"kind": "DaemonSet", "name": w.name, "uid": str(uuid.uuid4())}
                self.daemon_uids.add(owner["uid"])
                self.daemonsets.append((w, owner))  # nodes that join later get theirs (node_groups.py)
                for node in nodes:
                    labels = node["metadata"].get("labels") or {}
                    if all(labels.get(k) == v for k, v in w.node_selector.items()):
                        self._kubelet_run(self.create("Pod", obj.daemon_pod(w, node["metadata"]["name"], owner,
                                                                            self.rng)))

    # --- controllers and scheduler ---------------------------------------------------------------
    def reconcile(self, rounds: int = 20) -> None:
        """Run the controllers and the scheduler until nothing changes."""
        for _ in range(rounds):
            before = self._rv
            collect_garbage(self)
            self.collect_gang_garbage()
            self.sync_quotas()
            if self._dra:
                self._make_template_claims()
            for dep in self.list("Deployment"):
                reconcile_deployment(self, dep)
            for rs in self.list("ReplicaSet"):
                reconcile_replicaset(self, rs)
            for job in self.list("Job"):
                ledger = self.job_ledgers.setdefault(job["metadata"]["uid"], JobLedger())
                ledger.pod_group = self.ensure_job_group(job)
                reconcile_job(self, job, ledger)
            self._schedule()
            if self._rv == before:  # a round that wrote nothing: settled
                return

    def _schedule(self) -> bool:
        if not self._schedule_needed:
            return False
        self._schedule_needed = False
        bound_any = False
        # only unbound, unfinished pods can be scheduled: the model keeps them (finished Job pods
        # pile up by the thousand, and a pass over every pod per event made the demo Job crawl)
        pods = self._objects["Pod"]
        seq = ((self.created_seq("Pod", *v.key), pods[v.key]) for v in self.model.pending() if v.key in pods)
        cycled: dict[tuple[str, str], bool] = {}  # groups seen in this pass -> whether they are gangs
        for pod in queue_order(seq):
            group = pod_group_of(pod)
            if group is not None:
                key = (pod["metadata"]["namespace"], group)
                if cycled.get(key, False):
                    continue  # a gang: its cycle placed every member it could
                if key not in cycled:
                    bound = self.schedule_group(*key)  # the whole group, all or nothing (gang_cycle.py)
                    cycled[key] = bound is not None
                    if bound is not None:
                        bound_any |= bound
                        continue
                current = pods.get(_key(pod))  # a basic-policy group: its pods go one by one
                if current is None or not is_pending(current):
                    continue
                pod = current
            claims = self._pod_claims(pod) if self._dra else []
            if claims is None:  # a claim its template has not made yet (or missing): not scheduled yet
                continue
            fit = (lambda node, c=claims, g=self.model.gpus: dra.allocate_on(g, node, c) is not None) if claims else None
            decision = decide(self.model.allocation(), pod, self.packing, fit, self.ties, nominated_load(self, pod))
            if decision.node is not None:
                self._bind(pod, decision.node)
                bound_any = True
            else:
                self._refuse(pod, decision.message)
        self._schedule_needed = False  # our own writes above need no second pass
        return bound_any

    def _bind(self, pod: dict, node: str) -> dict:
        """The Binding: the pod's claims allocated on `node`, then nodeName, the event, the kubelet."""
        meta = pod["metadata"]
        pod = self._allocate_claims(pod, node)
        placed = self.update("Pod", obj.bound(pod, node))
        self.record(ev.scheduler_event(placed, "Normal", "Scheduled", f"Successfully assigned "
                                       f"{meta['namespace']}/{meta['name']} to {node}", "Binding"))
        self._kubelet_run(placed)
        return placed

    def _refuse(self, pod: dict, message: str) -> None:
        """PodScheduled=False with `message` and a FailedScheduling event; the same verdict again only counts up."""
        if _scheduled_message(pod) != message:
            failed = self.update("Pod", obj.unschedulable(pod, message))
            self.record(ev.scheduler_event(failed, "Warning", "FailedScheduling", message, "Scheduling"))

    def active_pods(self, owner_kind: str, namespace: str, name: str) -> builtins.list[dict]:
        """Pods of a workload that are not finished and not being deleted (a Deployment's via its RS)."""
        owner = self.get(owner_kind, namespace, name)
        if owner is None:
            return []
        uids = {owner["metadata"]["uid"]}
        if owner_kind == "Deployment":
            uids |= {rs["metadata"]["uid"] for rs in self.list("ReplicaSet")
                     if any(r.get("uid") in uids for r in rs["metadata"].get("ownerReferences") or [])}
        return [p for p in self.list("Pod") if is_active(p)
                and any(r.get("uid") in uids for r in p["metadata"].get("ownerReferences") or [])]


def _scheduled_message(pod: dict) -> str | None:
    for c in (pod.get("status") or {}).get("conditions") or []:
        if c.get("type") == "PodScheduled" and c.get("status") == "False":
            return c.get("message")
    return None
