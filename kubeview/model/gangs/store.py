"""Gangs: groups of pods that run together or not at all, across upstream Kubernetes and the batch
schedulers (KAI, Kueue, Volcano), with their members and counts computed from the pods.

`GangStore` (the model's `model.gangs`) takes the group objects' watch events, under the kinds in
`messages.GANG_KINDS` ("Workload", "PodGroup", "kai.PodGroup", "kueue.Workload",
"volcano.PodGroup"), and every Pod event. A pod belongs to a group by what it carries itself, so the
cost for other pods is a few dict lookups:
- upstream: `spec.schedulingGroup.podGroupName` (1.36+; nothing else links a pod to its group);
- KAI: annotation `pod-group-name` (what KAI's pod-grouper writes);
- Volcano: annotation `scheduling.k8s.io/group-name` (or `scheduling.volcano.sh/group-name`);
- Kueue: annotation `kueue.x-k8s.io/workload` (set on a Job's pod template once its Workload is
  admitted: before that the Job is suspended and has no pods), or for plain-pod groups the label
  `kueue.x-k8s.io/pod-group-name` (the Workload carries the group's name).
The group's counts are never read from its status (1.37's PodGroup has none; KAI's and Volcano's are
kept as `reported`, to compare). Each pending member keeps its own PodScheduled=False reason and
message. Pure; `gangs()` is cached per `version`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from operator import attrgetter

from kubeview.model.gangs.messages import (
    GANG_KINDS,
    KIND_KAI,
    KIND_KUEUE,
    KIND_POD_GROUP,
    KIND_VOLCANO,
    KIND_WORKLOAD,
)
from kubeview.model.gangs.objects import GroupHeader, header_from, workload_owner
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


class GangStore:
    """Group objects and their member pods; see the module doc."""

    def __init__(self) -> None:
        self._headers: dict[GroupKey, GroupHeader] = {}
        self._later: dict[GroupKey, dict] = {}  # objects not read yet (`headers` reads them)
        self._read: Callable[[GroupKey, dict], GroupHeader] | None = None
        self._owners: dict[tuple[str, str], str | None] = {}  # upstream Workload -> its controllerRef
        self._members: dict[GroupKey, dict[PodKey, GangMember]] = {}
        self._of_pod: dict[PodKey, tuple[GroupKey, ...]] = {}
        self.listed: set[str] = set()  # gang kinds listed at least once (the source serves them)
        self.version = 0
        self._cache: tuple[int, list[Gang]] | None = None

    # -- group objects ----------------------------------------------------------------------------
    def apply(self, kind: str, event_type: str, obj: dict) -> bool:
        """One watch event of a gang kind; True if anything changed."""
        meta = obj.get("metadata") or {}
        ns, name = meta.get("namespace", ""), meta.get("name", "")
        if kind == KIND_WORKLOAD:
            owner = None if event_type == "DELETED" else workload_owner(obj)
            if event_type == "DELETED":
                changed = self._owners.pop((ns, name), None) is not None
            else:
                changed = self._owners.get((ns, name), "") != owner
                self._owners[(ns, name)] = owner
            return self._changed(changed)
        key = (kind, ns, name)
        if event_type == "DELETED":
            gone = self._later.pop(key, None) is not None
            return self._changed(self._headers.pop(key, None) is not None or gone)
        header = header_from(kind, obj)
        old = self.headers.get(key) if key in self._later else self._headers.get(key)
        if old is not None and old.resource_version and old.resource_version == header.resource_version:
            return False
        self._headers[key] = header
        return self._changed(True)

    # -- objects read when first asked for (model/queues/workload.py: a Kueue Workload's row) ----------
    @property
    def headers(self) -> dict[GroupKey, GroupHeader]:
        """Every group object's header (the objects not read yet are read now, by `read_later`'s reader)."""
        if self._later and self._read is not None:
            later, read, self._later = self._later, self._read, {}
            for key, obj in later.items():
                self._headers[key] = read(key, obj)
        return self._headers

    def read_later(self, reader: Callable[[GroupKey, dict], GroupHeader]) -> None:
        """Objects given to `put_later`/`replace_later` are read by `reader` when first asked for."""
        self._read = reader

    def put_later(self, key: GroupKey, obj: dict) -> bool:
        """`put` of an object read when first asked for (its resourceVersion compared now)."""
        rv = (obj.get("metadata") or {}).get("resourceVersion", "")
        old, header = self._later.get(key), self._headers.get(key)
        old_rv = (old.get("metadata") or {}).get("resourceVersion", "") if old is not None else (
            header.resource_version if header is not None else "")
        if old_rv and old_rv == rv:  # as `apply`: the header's resourceVersion against the object's
            return False
        self._headers.pop(key, None)
        self._later[key] = obj
        return self._changed(True)

    def replace_later(self, kind: str, objects: dict[GroupKey, dict]) -> None:
        """`replace` with objects read when first asked for."""
        self.listed.add(kind)
        self._headers = {k: h for k, h in self._headers.items() if k[0] != kind}
        self._later = {k: o for k, o in self._later.items() if k[0] != kind} | objects
        self._changed(True)

    def put(self, kind: str, obj: dict) -> bool:
        """An object of `kind` added or modified (the model's table, model/kinds.py)."""
        return self.apply(kind, "MODIFIED", obj)

    def delete(self, kind: str, obj: dict) -> bool:
        return self.apply(kind, "DELETED", obj)

    def replace(self, kind: str, objects: Iterable[dict]) -> None:
        """A full list of one gang kind (an empty one when it is not served or not readable)."""
        self.listed.add(kind)
        if kind == KIND_WORKLOAD:
            self._owners = {((o.get("metadata") or {}).get("namespace", ""), (o.get("metadata") or {}).get("name", "")):
                            workload_owner(o) for o in objects}
        else:
            self._headers = {k: h for k, h in self._headers.items() if k[0] != kind}
            self._later = {k: o for k, o in self._later.items() if k[0] != kind}
            for obj in objects:
                header = header_from(kind, obj)
                self._headers[header.key] = header
        self._changed(True)

    # -- pods -------------------------------------------------------------------------------------
    def put_pod(self, obj: dict, keys: tuple[GroupKey, ...] | None = None) -> bool:
        """One pod's event (`keys`: its `group_keys`, when the caller has them)."""
        keys = group_keys(obj) if keys is None else keys
        meta = obj.get("metadata") or {}
        pod = (meta.get("namespace", ""), meta.get("name", ""))
        old_keys = self._of_pod.get(pod, ())
        if not keys and not old_keys:
            return False
        changed = self._drop(pod, [k for k in old_keys if k not in keys])
        if not keys:
            self._of_pod.pop(pod, None)
            return self._changed(changed)
        member = member_from(obj)
        for key in keys:
            members = self._members.setdefault(key, {})
            if members.get(pod) != member:
                members[pod] = member
                changed = True
        self._of_pod[pod] = keys
        return self._changed(changed)

    def delete_pod(self, obj: dict) -> bool:
        meta = obj.get("metadata") or {}
        pod = (meta.get("namespace", ""), meta.get("name", ""))
        keys = self._of_pod.pop(pod, ())
        return self._changed(self._drop(pod, keys))

    def relist_pods(self, objects: Iterable[dict]) -> None:
        self._members, self._of_pod = {}, {}
        for obj in objects:
            keys = group_keys(obj)
            if keys:
                self.put_pod(obj, keys)
        self._changed(True)

    def _drop(self, pod: PodKey, keys: Iterable[GroupKey]) -> bool:
        changed = False
        for key in keys:
            members = self._members.get(key)
            if members is not None and members.pop(pod, None) is not None:
                changed = True
                if not members:
                    del self._members[key]
        return changed

    def _changed(self, changed: bool) -> bool:
        if changed:
            self.version += 1
        return changed

    # -- reads ------------------------------------------------------------------------------------
    def gangs(self) -> list[Gang]:
        """Every group object with its members, by (namespace, name, kind)."""
        if self._cache is not None and self._cache[0] == self.version:
            return self._cache[1]
        out = [self._gang(h) for h in self.headers.values()]
        out.sort(key=attrgetter("namespace", "name", "kind"))
        self._cache = (self.version, out)
        return out

    def get(self, kind: str, namespace: str, name: str) -> Gang | None:
        header = self.headers.get((kind, namespace, name))
        return None if header is None else self._gang(header)

    def of_pod(self, namespace: str, name: str) -> list[Gang]:
        """The gangs a pod is a member of (with a group object)."""
        return [g for k in self._of_pod.get((namespace, name), ()) if (g := self.get(*k)) is not None]

    def orphans(self) -> dict[GroupKey, int]:
        """Groups pods name that have no object (yet): upstream's "waiting for pods's pod group"."""
        return {k: len(m) for k, m in self._members.items() if k not in self.headers}

    def _gang(self, h: GroupHeader) -> Gang:
        members = tuple(sorted((self._members.get(h.key) or {}).values(), key=_BY_NAME))
        c = h.condition
        owner = self._owners.get((h.namespace, h.workload)) if h.kind == KIND_POD_GROUP and h.workload else None
        return Gang(
            scheduler=h.scheduler, api_version=h.api_version, namespace=h.namespace, name=h.name,
            min_count=h.min_count, size=h.size, members=members,
            condition_type=c.type if c else None, condition_status=c.status if c else None,
            condition_reason=c.reason if c else None, condition_message=c.message if c else None,
            queue=h.queue, claims=h.claims, workload=h.workload, kind=h.kind, owner=owner, phase=h.phase,
            reported=h.reported, subgroups=h.subgroups, disruption_mode=h.disruption_mode, claim_refs=h.claim_refs,
            templates=h.templates)


__all__ = ["GANG_KINDS", "STATES", "Gang", "GangMember", "GangStore", "group_keys", "member_from"]
