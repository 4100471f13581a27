"""Each scheduler's group object read into one shape (`GroupHeader`): what a gang asks and says.

Four APIs, one meaning ("these pods run together or not at all"):
- upstream `scheduling.k8s.io` PodGroup (1.37 v1beta1: `spec.workloadRef`, condition
  `PodGroupInitiallyScheduled`; 1.36 v1alpha2: `spec.podGroupTemplateRef.workload`, condition
  `PodGroupScheduled`); `gang.minCount`, a `basic` policy is a group of one; no pod counts in status;
  `schedulingConstraints.topology[0].key` (1.37, gate TopologyAwareWorkloadScheduling): one domain.
  The Workload (templates, `controllerRef` to a Job) is read only for the owner.
- KAI-Scheduler `scheduling.run.ai/v2alpha2` PodGroup: `minMember`, `queue`, `subGroups`, status
  counts, `schedulingConditions` with `reasons` (the newest is the group's condition).
- Kueue `kueue.x-k8s.io` Workload (v1beta1 and v1beta2 alike): `podSets[].count/minCount`,
  `queueName`, conditions (Finished, Evicted, Admitted, QuotaReserved: the first that holds, else
  QuotaReserved=False and its reason such as `TopologyPlacementFailed`).
- Volcano `scheduling.volcano.sh/v1beta1` PodGroup: `minMember`, `queue`, `status.phase`, conditions.
Pure: dicts in, dataclasses out.
"""

from __future__ import annotations

from dataclasses import dataclass

from kubeview.model.gangs.messages import (
    CONDITIONS,
    DISRUPTION_TARGET,
    KIND_KAI,
    KIND_KUEUE,
    KIND_POD_GROUP,
    KIND_VOLCANO,
)

SCHEDULER_OF = {KIND_POD_GROUP: "kubernetes", KIND_KAI: "kai", KIND_KUEUE: "kueue", KIND_VOLCANO: "volcano"}
DEFAULT_API = {KIND_POD_GROUP: "scheduling.k8s.io/v1beta1", KIND_KAI: "scheduling.run.ai/v2alpha2",
               KIND_KUEUE: "kueue.x-k8s.io/v1beta1", KIND_VOLCANO: "scheduling.volcano.sh/v1beta1"}


@dataclass(frozen=True, slots=True)
class Condition:
    type: str
    status: str
    reason: str | None
    message: str | None


@dataclass(frozen=True, slots=True)
class GroupHeader:
    """One group object, normalised; its members come from pods (see store.py)."""

    kind: str  # the watch kind: "PodGroup", "kai.PodGroup", "kueue.Workload", "volcano.PodGroup"
    api_version: str
    namespace: str
    name: str
    min_count: int
    size: int | None  # how many pods the object says the group has (Kueue's podSets counts), else None
    condition: Condition | None
    queue: str | None
    claims: tuple[str, ...]  # ResourceClaim objects the group shares (resolved names only)
    claim_refs: tuple[str, ...]  # the group's claim entries by name (a template's claim may not exist yet)
    workload: str | None  # upstream: the Workload; batch schedulers: the owning object, "Kind/name"
    phase: str | None = None  # Volcano/KAI status.phase
    reported: dict[str, int] | None = None  # the scheduler's own counts (KAI, Volcano status), to compare
    subgroups: tuple[tuple[str, int], ...] = ()  # KAI subGroups: (name, minMember)
    disruption_mode: str | None = None  # upstream: Single / All (1.37), Pod (1.36)
    templates: tuple[tuple[str, dict, int], ...] = ()  # Kueue: (pod set, its pod template, count)
    topology_key: str | None = None  # upstream: spec.schedulingConstraints.topology[0].key (one domain)
    resource_version: str = ""
    uid: str = ""

    @property
    def scheduler(self) -> str:
        return SCHEDULER_OF[self.kind]

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.kind, self.namespace, self.name)


def header_from(kind: str, obj: dict) -> GroupHeader:
    """The header of one group object of a kind in `SCHEDULER_OF`."""
    return _READERS[kind](obj)


def workload_owner(obj: dict) -> str | None:
    """An upstream Workload's `spec.controllerRef` as "Kind/name" (the Job that made it), else None."""
    ref = (obj.get("spec") or {}).get("controllerRef") or {}
    return f"{ref.get('kind', '')}/{ref['name']}" if ref.get("name") else None


def _meta(obj: dict) -> tuple[dict, dict, dict]:
    return obj.get("metadata") or {}, obj.get("spec") or {}, obj.get("status") or {}


def _common(kind: str, obj: dict, meta: dict) -> dict:
    return {"kind": kind, "api_version": obj.get("apiVersion") or DEFAULT_API[kind],
            "namespace": meta.get("namespace", ""), "name": meta.get("name", ""),
            "resource_version": meta.get("resourceVersion", ""), "uid": meta.get("uid", "")}


def _owner(meta: dict) -> str | None:
    refs = meta.get("ownerReferences") or []
    ref = next((r for r in refs if r.get("controller")), refs[0] if refs else None)
    return f"{ref.get('kind', '')}/{ref.get('name', '')}" if ref else None


def _cond(c: dict) -> Condition:
    return Condition(c.get("type", ""), c.get("status", ""), c.get("reason") or None, c.get("message") or None)


def _int(value: object, default: int) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else default


def _upstream(obj: dict) -> GroupHeader:
    meta, spec, status = _meta(obj)
    policy = spec.get("schedulingPolicy") or {}
    gang = policy.get("gang")
    min_count = _int((gang or {}).get("minCount"), 1)
    ref = spec.get("workloadRef") or {}  # v1beta1
    workload = ref.get("workloadName") or ((spec.get("podGroupTemplateRef") or {}).get("workload") or {}).get(
        "workloadName")  # v1alpha2
    conditions = status.get("conditions") or []
    disrupted = next((c for c in conditions if c.get("type") == DISRUPTION_TARGET and c.get("status") == "True"), None)
    scheduling = next((c for c in conditions if c.get("type") in CONDITIONS), None)
    chosen = disrupted or scheduling
    refs = tuple(c.get("name", "") for c in spec.get("resourceClaims") or ())
    names = {c.get("name"): c.get("resourceClaimName") for c in status.get("resourceClaimStatuses") or ()}
    claims = tuple(n for c in spec.get("resourceClaims") or ()
                   if (n := c.get("resourceClaimName") or names.get(c.get("name"))))
    mode = spec.get("disruptionMode")
    if isinstance(mode, dict):  # 1.37: {single: {}} or {all: {}}
        mode = next((k.capitalize() for k in mode), None)
    common = _common(KIND_POD_GROUP, obj, meta)
    if not obj.get("apiVersion") and "podGroupTemplateRef" in spec:  # a list's items carry no apiVersion
        common["api_version"] = "scheduling.k8s.io/v1alpha2"
    return GroupHeader(**common, min_count=min_count, size=None,
                       condition=_cond(chosen) if chosen else None, queue=None, claims=claims,
                       claim_refs=refs, workload=workload or None, disruption_mode=mode,
                       topology_key=topology_key(spec))


def topology_key(spec: dict) -> str | None:
    """A PodGroup's (or a Workload's PodGroupTemplate's, or a Job's `spec.scheduling`) topology constraint:
    `schedulingConstraints.topology[0].key` (1.37 v1beta1 and v1alpha3 alike; at most one; gate
    TopologyAwareWorkloadScheduling): every member inside one domain of that node label."""
    constraints = spec.get("schedulingConstraints") if isinstance(spec, dict) else None
    topology = (constraints or {}).get("topology") if isinstance(constraints, dict) else None
    first = topology[0] if isinstance(topology, list) and topology else None
    key = first.get("key") if isinstance(first, dict) else None
    return key if isinstance(key, str) and key else None


def _kai(obj: dict) -> GroupHeader:
    meta, spec, status = _meta(obj)
    condition = None
    scheduling = status.get("schedulingConditions") or []
    if scheduling:
        c = max(enumerate(scheduling), key=lambda ic: (ic[1].get("lastTransitionTime") or "", ic[0]))[1]
        reasons = c.get("reasons") or []
        reason = reasons[0].get("reason") if reasons else c.get("reason")
        message = "; ".join(r.get("message", "") for r in reasons if r.get("message")) or c.get("message")
        where = f" (node pool {c['nodePool']})" if c.get("nodePool") else ""
        condition = Condition(c.get("type", ""), c.get("status") or "True", reason or None,
                              (message + where) if message else None)
    elif status.get("conditions"):
        condition = _cond(status["conditions"][-1])
    subgroups = tuple((s.get("name", ""), _int(s.get("minMember"), 0)) for s in spec.get("subGroups") or ())
    return GroupHeader(**_common(KIND_KAI, obj, meta), min_count=_int(spec.get("minMember"), 1), size=None,
                       condition=condition, queue=spec.get("queue") or None, claims=(), claim_refs=(),
                       workload=_owner(meta), phase=status.get("phase") or None,
                       reported=_counts(status, ("pending", "running", "succeeded", "failed")), subgroups=subgroups)


_KUEUE_ORDER = ("Finished", "Evicted", "Admitted", "QuotaReserved")


def _kueue(obj: dict) -> GroupHeader:
    meta, spec, status = _meta(obj)
    pod_sets = spec.get("podSets") or []
    size = sum(_int(p.get("count"), 1) for p in pod_sets)
    min_count = sum(_int(p.get("minCount"), _int(p.get("count"), 1)) for p in pod_sets)
    conditions = {c.get("type"): c for c in status.get("conditions") or []}
    chosen = next((conditions[t] for t in _KUEUE_ORDER if conditions.get(t, {}).get("status") == "True"), None)
    chosen = chosen or conditions.get("QuotaReserved") or next(iter(conditions.values()), None)
    templates = tuple((p.get("name", ""), p.get("template") or {}, _int(p.get("count"), 1)) for p in pod_sets)
    return GroupHeader(**_common(KIND_KUEUE, obj, meta), min_count=min_count, size=size,
                       condition=_cond(chosen) if chosen else None, queue=spec.get("queueName") or None,
                       claims=(), claim_refs=(), workload=_owner(meta), templates=templates)


def _volcano(obj: dict) -> GroupHeader:
    meta, spec, status = _meta(obj)
    conditions = status.get("conditions") or []
    newest = max(enumerate(conditions), key=lambda ic: (ic[1].get("lastTransitionTime") or "", ic[0]))[1] \
        if conditions else None
    return GroupHeader(**_common(KIND_VOLCANO, obj, meta), min_count=_int(spec.get("minMember"), 1), size=None,
                       condition=_cond(newest) if newest else None, queue=spec.get("queue") or None,
                       claims=(), claim_refs=(), workload=_owner(meta), phase=status.get("phase") or None,
                       reported=_counts(status, ("running", "succeeded", "failed")))


def _counts(status: dict, fields: tuple[str, ...]) -> dict[str, int] | None:
    got = {f: status[f] for f in fields if isinstance(status.get(f), int)}
    return got or None


_READERS = {KIND_POD_GROUP: _upstream, KIND_KAI: _kai, KIND_KUEUE: _kueue, KIND_VOLCANO: _volcano}
