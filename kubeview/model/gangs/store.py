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
message. Pure; `gangs()` is cached per `version`. Kueue Workloads come from the model's row for them
(model/queues/workload.py) unread (`put_later`, `replace_later`) and are read when `headers` is first read.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from operator import itemgetter

from kubeview.model.gangs.gang import (
    _BY_NAME,
    BAD_WHEN_TRUE,
    KAI_ANNOTATION,
    KAI_SUBGROUP_LABEL,
    KUEUE_ANNOTATION,
    KUEUE_POD_GROUP_LABEL,
    STATES,
    VOLCANO_ANNOTATIONS,
    Gang,
    GangMember,
    GroupKey,
    PodKey,
    group_keys,
    member_from,
)
from kubeview.model.gangs.messages import (
    GANG_KINDS,
    KIND_POD_GROUP,
    KIND_WORKLOAD,
)
from kubeview.model.gangs.objects import GroupHeader, header_from, workload_owner
from kubeview.model.staged import NOT_BUILT, Staged


def _reading(obj: dict) -> tuple[tuple[GroupKey, ...], GangMember | None]:
    """What a relist reads of a pod: its groups, and its member entry when it has any (a list's page is
    read as it arrives, and then kept as its identity alone: model/staged.py)."""
    keys = group_keys(obj)
    return keys, member_from(obj) if keys else None


_BY_PLACE = itemgetter(1, 2, 0)  # a GroupKey (kind, namespace, name) as gangs() sort: namespace, name, kind


class GangStore:
    """Group objects and their member pods; see the module doc."""

    def __init__(self) -> None:
        self._headers: dict[GroupKey, GroupHeader] = {}
        self._later: dict[GroupKey, dict] = {}  # objects not read yet (`headers` reads them)
        self._read: Callable[[GroupKey, dict], GroupHeader] | None = None
        self._owners: dict[tuple[str, str], str | None] = {}  # upstream Workload -> its controllerRef
        self._members: dict[GroupKey, dict[PodKey, GangMember]] = {}
        self._of_pod: dict[PodKey, tuple[GroupKey, ...]] = {}
        self._staged = Staged(_reading)  # a pod list in progress, its pods' groups and members read per page
        self.prepare_pods = self._staged.add  # `Calls.prepare`
        self.listed: set[str] = set()  # gang kinds listed at least once (the source serves them)
        self.version = 0
        self._cache: tuple[int, list[Gang]] | None = None
        # the gangs built, kept while their header, members and owner stay: only those touched are built again
        self._built: dict[GroupKey, Gang] = {}
        self._dirty: set[GroupKey] | None = None  # None: every one
        self._order: list[GroupKey] | None = None  # the built gangs' keys in `gangs()` order (None: to sort again)
        self._place: dict[GroupKey, int] = {}  # each one's place in it

    def _touch(self, *keys: GroupKey) -> None:
        """These gangs (none given: every one) are to be built again."""
        if not keys:
            self._dirty = None
        elif self._dirty is not None:
            self._dirty.update(keys)

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
            if changed:
                self._touch()
            return self._changed(changed)
        key = (kind, ns, name)
        self._touch(key)
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
        self._touch(key)
        return self._changed(True)

    def replace_later(self, kind: str, objects: dict[GroupKey, dict]) -> None:
        """`replace` with objects read when first asked for."""
        self.listed.add(kind)
        self._headers = {k: h for k, h in self._headers.items() if k[0] != kind}
        self._later = {k: o for k, o in self._later.items() if k[0] != kind} | objects
        self._touch()
        self._changed(True)

    def put(self, kind: str, obj: dict) -> bool:
        """An object of `kind` added or modified (the model's table, model/kinds.py)."""
        return self.apply(kind, "MODIFIED", obj)

    def delete(self, kind: str, obj: dict) -> bool:
        return self.apply(kind, "DELETED", obj)

    def replace(self, kind: str, objects: Iterable[dict]) -> None:
        """A full list of one gang kind (an empty one when it is not served or not readable)."""
        self.listed.add(kind)
        self._touch()
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
    def put_pod(self, obj: dict, keys: tuple[GroupKey, ...] | None = None, member: GangMember | None = None) -> bool:
        """One pod's event (`keys`, `member`: its `group_keys` and `member_from`, when the caller has them)."""
        keys = group_keys(obj) if keys is None else keys
        meta = obj.get("metadata") or {}
        pod = (meta.get("namespace", ""), meta.get("name", ""))
        old_keys = self._of_pod.get(pod, ())
        if not keys and not old_keys:
            return False
        self._touch(*keys, *old_keys)
        changed = self._drop(pod, [k for k in old_keys if k not in keys])
        if not keys:
            self._of_pod.pop(pod, None)
            return self._changed(changed)
        member = member_from(obj) if member is None else member
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
        if keys:
            self._touch(*keys)
        return self._changed(self._drop(pod, keys))

    def relist_pods(self, objects: Sequence[dict]) -> None:
        self._touch()
        self._members, self._of_pod = {}, {}
        for obj, pre in zip(objects, self._staged.take(objects), strict=True):
            keys, member = _reading(obj) if pre is NOT_BUILT else pre  # staged: read of this obj
            if keys:
                self.put_pod(obj, keys, member)
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
        headers, built, rebuilt = self.headers, self._built, []
        if self._dirty is None:
            self._built = built = {k: self._gang(h) for k, h in headers.items()}
            self._order = None
        else:
            for k in self._dirty:
                h = headers.get(k)
                if h is None:
                    if built.pop(k, None) is not None:
                        self._order = None
                else:
                    if k not in built:
                        self._order = None
                    built[k] = self._gang(h)
                    rebuilt.append(k)
        self._dirty = set()
        if self._order is None or self._cache is None:  # sorted again only when a gang comes or goes
            self._order = sorted(built, key=_BY_PLACE)
            self._place = {k: i for i, k in enumerate(self._order)}
            out = [built[k] for k in self._order]
        else:  # the same gangs: the last list with the ones built again put in their place
            out, place = list(self._cache[1]), self._place
            for k in rebuilt:
                out[place[k]] = built[k]
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
            templates=h.templates, topology_key=h.topology_key)


__all__ = ["BAD_WHEN_TRUE", "GANG_KINDS", "KAI_ANNOTATION", "KAI_SUBGROUP_LABEL", "KUEUE_ANNOTATION",
           "KUEUE_POD_GROUP_LABEL", "STATES", "VOLCANO_ANNOTATIONS", "Gang", "GangMember", "GangStore", "GroupKey",
           "PodKey", "group_keys", "member_from"]
