"""Gangs in the embedded cluster: kube-scheduler 1.37's pod-group cycle and the Job controller's groups.

A mixin of `LocalCluster` (state.py), which owns the objects; pure state transitions, no I/O.
What it does, as the real components do (pkg/scheduler/schedule_one_podgroup.go, the GangScheduling
plugin, pkg/controller/job/job_scheduling_manager.go) and as the 1.37 plane recorded it
(gangreal's tests/fixtures/k8s/gang137/README.md):
- a pod naming a PodGroup that does not exist, or a gang with fewer live members than minCount, is
  held at PreEnqueue: nothing is written (no PodScheduled condition, no event, no group status);
- otherwise the group's pods are placed together in one cycle by `scheduling.gang_fit.fit_gang`
  (the one placement of the TUI, snapshot and `kubeview fit`): if at least minCount members fit,
  every member that fits is bound and the PodGroup gets `PodGroupInitiallyScheduled=True, Scheduled`;
  if not, none is bound: each member gets gang_fit's message for it (placed in the cycle, then held
  with the group: "pod group is unschedulable, minCount (N) cannot be satisfied: …"; fit nowhere: its
  own FitError text), and the PodGroup `PodGroupInitiallyScheduled=False, Unschedulable` with the
  group's message. A True condition is never taken back (updatePodGroupCondition).
- a basic-policy PodGroup's pods are scheduled one by one like any pod.
- a Job with `spec.scheduling` asking for a gang gets a Workload and PodGroup before its pods, whose
  `spec.schedulingGroup.podGroupName` names the group; events `WorkloadCreated`, `PodGroupCreated`.
  (With the WorkloadWithJob gate on, upstream also gives a Job without `spec.scheduling` a basic-policy
  group; the embedded cluster does not, so its other Jobs stay as they were.)
Deviation: no preemption, so no "pod group preemption: …" tail on the messages (the embedded
scheduler never preempts, for gangs or single pods).
"""

from __future__ import annotations

import builtins
import copy
from typing import TYPE_CHECKING

from kubeview.cluster.local import dra as dra
from kubeview.cluster.local import events as ev
from kubeview.cluster.local import gang_objects as go
from kubeview.cluster.local.controllers import controller_uid
from kubeview.cluster.local.scheduler import is_pending
from kubeview.cluster.source import ActionError
from kubeview.model.gangs.messages import CONDITION, REASON_SCHEDULED, REASON_UNSCHEDULABLE, member_held
from kubeview.model.gpus.dra import ClaimView
from kubeview.model.views import PodView
from kubeview.scheduling.evaluate import CLAIMS
from kubeview.scheduling.gang_fit import MemberFit, fit_gang

if TYPE_CHECKING:
    from kubeview.model.cluster import ClusterModel
    from kubeview.scheduling.config import PackingConfig

JOB_COMPONENT = "job-controller"


class GangCycle:
    """Workloads, PodGroups and the pod-group cycle of `LocalCluster`; see the module docstring."""

    model: ClusterModel
    packing: PackingConfig
    _objects: dict[str, dict[tuple[str, str], dict]]

    if TYPE_CHECKING:  # provided by LocalCluster
        def get(self, kind: str, namespace: str, name: str) -> dict | None: ...
        def list(self, kind: str) -> list[dict]: ...  # below, `list` names this method: builtins.list is the type
        def create(self, kind: str, o: dict) -> dict: ...
        def update(self, kind: str, o: dict) -> dict: ...
        def delete(self, kind: str, namespace: str, name: str) -> None: ...
        def created_seq(self, kind: str, namespace: str, name: str) -> int: ...
        def reconcile(self, rounds: int = 20) -> None: ...
        def event(self, kind: str, o: dict, type_: str, reason: str, message: str, component: str) -> None: ...
        def _bind(self, pod: dict, node: str) -> dict: ...
        def _refuse(self, pod: dict, message: str) -> None: ...
        def _pod_claims(self, pod: dict) -> builtins.list[ClaimView] | None: ...
        _dra: bool

    # --- the apiserver side --------------------------------------------------------------------------
    def create_gang_object(self, manifest: dict) -> dict:
        """Create a Workload or PodGroup (`kubectl create`); an existing one is refused."""
        kind = "Workload" if manifest.get("kind") == "Workload" else "PodGroup"
        try:
            made = go.workload_object(manifest) if kind == "Workload" else go.pod_group_object(manifest)
        except go.GangObjectError as exc:
            raise ActionError(str(exc)) from None
        meta = made["metadata"]
        if self.get(kind, meta["namespace"], meta["name"]) is not None:
            raise ActionError(f"{kind.lower()} {meta['namespace']}/{meta['name']} already exists")
        created = self.create(kind, made)
        self.reconcile()
        return created

    # --- the Job controller's part -------------------------------------------------------------------
    def ensure_job_group(self, job: dict) -> str | None:
        """The PodGroup a gang Job's pods name, made with its Workload the first time; None for other Jobs."""
        count = go.job_gang(job)
        if count is None:
            return None
        meta = job["metadata"]
        workload, group = go.job_objects(job, count)
        name = group["metadata"]["name"]
        current = self.get("PodGroup", meta["namespace"], name)
        if current is not None:
            self._sync_min_count(current, workload["metadata"]["name"], count)
            return name
        existing = self.get("Workload", meta["namespace"], workload["metadata"]["name"])
        if existing is None:
            existing = self.create("Workload", workload)
            self.event("Job", job, "Normal", "WorkloadCreated",
                       f"Created Workload {workload['metadata']['name']} for Job {meta['name']}", JOB_COMPONENT)
        for ref in group["metadata"]["ownerReferences"]:
            if ref["kind"] == "Workload":
                ref["uid"] = existing["metadata"]["uid"]
        self.create("PodGroup", group)
        self.event("Job", job, "Normal", "PodGroupCreated", f"Created PodGroup {name} for Job {meta['name']}",
                   JOB_COMPONENT)
        return name

    def _sync_min_count(self, group: dict, workload_name: str, count: int) -> None:
        """syncGangMinCount: a changed minCount (spec.scheduling's, or parallelism when it sets none)
        is written to the Workload's template and the PodGroup; nothing else of theirs may change."""
        if go.min_count(group) == count:
            return
        fresh = copy.deepcopy(group)
        fresh["spec"]["schedulingPolicy"]["gang"]["minCount"] = count
        self.update("PodGroup", fresh)
        workload = self.get("Workload", group["metadata"]["namespace"], workload_name)
        if workload is not None:
            fresh = copy.deepcopy(workload)
            fresh["spec"]["podGroupTemplates"][0]["schedulingPolicy"]["gang"]["minCount"] = count
            self.update("Workload", fresh)

    def collect_gang_garbage(self) -> None:
        """Workloads and PodGroups whose controlling Job is gone go with it (background cascade)."""
        jobs = {o["metadata"]["uid"] for o in self.list("Job")}
        for kind in ("PodGroup", "Workload"):
            for o in self.list(kind):
                owner = controller_uid(o)
                if owner is not None and owner not in jobs:
                    self.delete(kind, o["metadata"]["namespace"], o["metadata"]["name"])

    # --- kube-scheduler's pod-group cycle ------------------------------------------------------------
    def _group_members(self, namespace: str, name: str) -> builtins.list[dict]:
        """The group's live pods for this scheduler, in queue order (priority, then creation)."""
        pods = [p for p in self._objects["Pod"].values()
                if p["metadata"].get("namespace") == namespace and go.pod_group_of(p) == name
                and not p["metadata"].get("deletionTimestamp")
                and (p.get("status") or {}).get("phase") not in ("Succeeded", "Failed")
                and (p.get("spec") or {}).get("schedulerName", "default-scheduler") == "default-scheduler"]
        pods.sort(key=lambda p: (-int(p["spec"].get("priority") or 0),
                                 self.created_seq("Pod", namespace, p["metadata"]["name"])))
        return pods

    def schedule_group(self, namespace: str, name: str) -> bool | None:
        """One pod-group cycle for group `namespace/name`; True if it bound pods, None when the group is
        not a gang (its pods are scheduled one by one)."""
        group = self.get("PodGroup", namespace, name)
        if group is None:
            return False  # PreEnqueue: waiting for the pod group to appear; nothing written
        need = go.min_count(group)
        if need is None:
            return None
        members = self._group_members(namespace, name)
        queued = [p for p in members if is_pending(p)]
        if not queued or len(members) < need:
            return False  # nothing to do, or PreEnqueue: waiting for minCount pods to appear; nothing written
        claims = {id(p): self._pod_claims(p) for p in queued} if self._dra else {}
        if any(c is None for c in claims.values()):
            return False  # a member's claim its template has not made yet
        views = [PodView.from_api(p) for p in members]
        fit = fit_gang(self.model.allocation(), views, need, self.packing)
        by_view = {id(v): p for v, p in zip(views, members, strict=True)}
        if fit.fits and not self._claims_allocatable(fit.members, by_view, claims):
            for pod in queued:  # a member's own claims cannot be allocated where it was placed: none is bound
                self._refuse(pod, member_held(CLAIMS))
            self._set_group_condition(group, "False", REASON_UNSCHEDULABLE, CLAIMS)
            return False
        if fit.fits:
            for m in fit.members:
                pod = by_view[id(m.pod)]
                if m.node is not None and not m.bound:
                    self._bind(pod, m.node)
                elif m.message is not None and is_pending(pod):
                    self._refuse(pod, m.message)
            self._set_group_condition(group, "True", REASON_SCHEDULED, "")
            return True
        for m in fit.members:
            pod = by_view[id(m.pod)]
            if m.bound or not is_pending(pod) or m.message is None:
                continue
            self._refuse(pod, m.message)  # gang_fit's words: placed then held, never tried, or its own FitError
        self._set_group_condition(group, "False", REASON_UNSCHEDULABLE, fit.message or "")
        return False

    def _claims_allocatable(self, members: builtins.list[MemberFit], by_view: dict[int, dict],
                            claims: dict[int, builtins.list[ClaimView] | None]) -> bool:
        """Members' own ResourceClaims are not weighed by the placement (fit_gang evaluates resources,
        not DRA claims): before binding any member, the claims of all members placed on a node must be
        allocatable there together (a claim two members share counted once), so a gang is never bound
        in part. **Deviation**: kube-scheduler's DynamicResources filter runs per member inside the
        cycle; here a gang whose claims do not fit is refused whole, its words `cannot allocate all
        claims`."""
        per_node: dict[str, dict[tuple[str, str], ClaimView]] = {}
        for m in members:
            own = claims.get(id(by_view[id(m.pod)]))
            if own and m.node is not None and not m.bound:
                per_node.setdefault(m.node, {}).update(((c.namespace, c.name), c) for c in own)
        return all(dra.allocate_on(self.model.gpus, node, list(held.values())) is not None
                   for node, held in per_node.items())

    def _set_group_condition(self, group: dict, status: str, reason: str, message: str) -> None:
        conditions = (group.get("status") or {}).get("conditions") or []
        old = next((c for c in conditions if c.get("type") == CONDITION), None)
        if old is not None and (old.get("status") == "True" or
                                (old.get("status"), old.get("reason"), old.get("message")) == (status, reason, message)):
            return  # "initially scheduled" is never taken back; the same verdict is not written again
        fresh = copy.deepcopy(group)
        now = ev.stamp(None)
        cond = {"type": CONDITION, "status": status,
                "lastTransitionTime": old["lastTransitionTime"] if old and old["status"] == status else now,
                "reason": reason, "message": message}
        fresh.setdefault("status", {})["conditions"] = [c for c in conditions if c.get("type") != CONDITION] + [cond]
        self.update("PodGroup", fresh)
