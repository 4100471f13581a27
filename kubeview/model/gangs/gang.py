"""A gang as the views read it (`Gang`, its `GangMember`s) and what a Pod says of the groups it is in
(`group_keys`, `member_from`); the store that keeps them is store.py (its module doc says how a pod is a
member of each scheduler's group).
"""

from __future__ import annotations

from dataclasses import dataclass
from operator import attrgetter

from kubeview.model.gangs.messages import KIND_KAI, KIND_KUEUE, KIND_POD_GROUP, KIND_VOLCANO
from kubeview.model.views import TERMINAL_PHASES

GroupKey = tuple[str, str, str]  # (kind, namespace, name)
PodKey = tuple[str, str]
KAI_ANNOTATION = "pod-group-name"
VOLCANO_ANNOTATIONS = ("scheduling.k8s.io/group-name", "scheduling.volcano.sh/group-name")
KUEUE_ANNOTATION = "kueue.x-k8s.io/workload"
KUEUE_POD_GROUP_LABEL = "kueue.x-k8s.io/pod-group-name"
KAI_SUBGROUP_LABEL = "kai.scheduler/subgroup-name"  # KAI's podgrouper: the member's subGroup
STATES = ("placed", "running", "pending", "finished")
_BY_NAME = attrgetter("name")
BAD_WHEN_TRUE = ("Unschedulable", "Evicted", "Preempted", "DisruptionTarget")  # condition types (prefixes)


@dataclass(frozen=True, slots=True)
class GangMember:
    namespace: str
    name: str
    node: str | None
    state: str  # placed (bound, not running yet) | running | pending (no node) | finished
    reason: str | None  # PodScheduled=False reason (Unschedulable, SchedulingGated, ...) of a pending member
    message: str | None  # and its message: the scheduler's words for this member
    subgroup: str | None = None  # KAI: the subGroup it belongs to (label kai.scheduler/subgroup-name)

    @property
    def key(self) -> PodKey:
        return (self.namespace, self.name)


@dataclass(frozen=True, slots=True)
class Gang:
    scheduler: str  # kubernetes | kai | kueue | volcano
    api_version: str
    namespace: str
    name: str
    min_count: int
    size: int | None  # pods the object says the group has (Kueue's podSets), else None
    members: tuple[GangMember, ...]  # by name
    condition_type: str | None
    condition_status: str | None
    condition_reason: str | None
    condition_message: str | None
    queue: str | None
    claims: tuple[str, ...]  # the group's shared ResourceClaims (names in its namespace)
    workload: str | None  # upstream: its Workload; batch schedulers: the owning object "Kind/name"
    kind: str = KIND_POD_GROUP  # the watch kind the group came as
    owner: str | None = None  # upstream: the Workload's controllerRef "Kind/name" (a Job with spec.scheduling)
    phase: str | None = None  # KAI/Volcano status.phase
    reported: dict[str, int] | None = None  # the scheduler's own counts (KAI, Volcano), as it wrote them
    subgroups: tuple[tuple[str, int], ...] = ()  # KAI: (name, minMember)
    disruption_mode: str | None = None
    claim_refs: tuple[str, ...] = ()  # the group's claim entries (a template's claim may not exist yet)
    templates: tuple[tuple[str, dict, int], ...] = ()  # Kueue: (pod set, pod template, count), what admission would create
    topology_key: str | None = None  # upstream: every member inside one domain of this node label (1.37 TAS)

    @property
    def condition_ok(self) -> bool:
        """The group's condition says all is well: a positive condition True (PodGroupInitiallyScheduled,
        Kueue's Admitted), not a negative one True (KAI's UnschedulableOnNodePool, Volcano's
        Unschedulable, Kueue's Evicted) nor a positive one False (QuotaReserved=False)."""
        if self.condition_type is None:
            return True
        return self.condition_status == "True" and not self.condition_type.startswith(BAD_WHEN_TRUE)

    @property
    def key(self) -> GroupKey:
        return (self.kind, self.namespace, self.name)

    def _count(self, state: str) -> int:
        return sum(1 for m in self.members if m.state == state)

    def counts(self) -> dict[str, int]:
        """placed, running, pending, finished: the four counts in one pass over the members."""
        out = dict.fromkeys(STATES, 0)
        for m in self.members:
            if m.state in out:
                out[m.state] += 1
        return out

    @property
    def placed(self) -> int:
        """Bound to a node, not running yet."""
        return self._count("placed")

    @property
    def running(self) -> int:
        return self._count("running")

    @property
    def pending(self) -> int:
        return self._count("pending")

    @property
    def finished(self) -> int:
        return self._count("finished")

    @property
    def bound(self) -> int:
        """On a node now (placed or running)."""
        return self.placed + self.running

    @property
    def state(self) -> str:
        """One word: `empty` (no member pod), `finished`, `running` (minCount members run), `scheduled`
        (minCount members on nodes), `incomplete` (fewer members than minCount exist: kube-scheduler
        holds them and writes nothing, so only this count says why), `waiting` (the rest)."""
        if not self.members:
            return "empty"
        c = self.counts()
        if c["finished"] == len(self.members):
            return "finished"
        if c["running"] >= self.min_count:
            return "running"
        if c["placed"] + c["running"] >= self.min_count:
            return "scheduled"
        if len(self.members) - c["finished"] < self.min_count:
            return "incomplete"
        return "waiting"

    def subgroup_counts(self) -> list[tuple[str, int, int, int]]:
        """KAI: per subGroup (name, minMember, members, members on nodes), in the object's order."""
        return [(name, minimum, sum(1 for m in self.members if m.subgroup == name),
                 sum(1 for m in self.members if m.subgroup == name and m.state in ("placed", "running")))
                for name, minimum in self.subgroups]

    def waiting_reasons(self) -> dict[str, int]:
        """The pending members' messages (or reasons), with how many members carry each, most first."""
        counts: dict[str, int] = {}
        for m in self.members:
            if m.state == "pending":
                text = m.message or m.reason or "not scheduled yet"
                counts[text] = counts.get(text, 0) + 1
        return dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))


def group_keys(obj: dict) -> tuple[GroupKey, ...]:
    """The groups a Pod object names itself a member of (see the module doc)."""
    meta = obj.get("metadata") or {}
    group = (obj.get("spec") or {}).get("schedulingGroup")
    annotations = meta.get("annotations")
    labels = meta.get("labels")
    if not group and not annotations and not (labels and KUEUE_POD_GROUP_LABEL in labels):
        return ()  # the common case, on every pod event of a big cluster
    ns = meta.get("namespace", "")
    keys: list[GroupKey] = []
    if group and group.get("podGroupName"):
        keys.append((KIND_POD_GROUP, ns, group["podGroupName"]))
    if annotations:
        if annotations.get(KAI_ANNOTATION):
            keys.append((KIND_KAI, ns, annotations[KAI_ANNOTATION]))
        volcano = annotations.get(VOLCANO_ANNOTATIONS[0]) or annotations.get(VOLCANO_ANNOTATIONS[1])
        if volcano:
            keys.append((KIND_VOLCANO, ns, volcano))
        if annotations.get(KUEUE_ANNOTATION):
            keys.append((KIND_KUEUE, ns, annotations[KUEUE_ANNOTATION]))
    if labels and labels.get(KUEUE_POD_GROUP_LABEL) and (KIND_KUEUE, ns, labels[KUEUE_POD_GROUP_LABEL]) not in keys:
        keys.append((KIND_KUEUE, ns, labels[KUEUE_POD_GROUP_LABEL]))
    return tuple(keys)


def member_from(obj: dict) -> GangMember:
    meta, spec, status = obj.get("metadata") or {}, obj.get("spec") or {}, obj.get("status") or {}
    node = spec.get("nodeName") or None
    phase = status.get("phase") or "Pending"
    reason = message = None
    if phase in TERMINAL_PHASES:
        state = "finished"
    elif node is None:
        state = "pending"
        for c in status.get("conditions") or ():
            if c.get("type") == "PodScheduled" and c.get("status") == "False":
                reason, message = c.get("reason") or None, c.get("message") or None
    else:
        state = "running" if phase == "Running" else "placed"
    subgroup = (meta.get("labels") or {}).get(KAI_SUBGROUP_LABEL) or None
    return GangMember(meta.get("namespace", ""), meta.get("name", ""), node, state, reason, message, subgroup)
