"""A Kueue Workload read once for both stores that hold it: the gang store's `GroupHeader` and the queue
store's `QueuedWorkload` (the model's table row for `kueue.Workload`, `KueueWorkloads`).

`read_workload(obj)` gives exactly what `gangs.objects.header_from("kueue.Workload", obj)` and
`QueuedWorkload.from_api(obj)` give, in one pass over the object: the conditions are scanned once, the
owner references once, the pod sets once. Pieces many Workloads share by content are made once and shared
(frozen): the conditions as read (`Condition` of each store), and the parsed amounts of a ResourceList
(copied into each view). Anything outside the shape Kueue writes
(a field of another type, a condition that is not an object, more than one pod set, no admission and no
resourceRequests) goes through the two readers apart, so the answer never differs
(tests/model/test_queues_workload.py holds them equal).

At 20,000 Workloads (`kubeview bench model --quota`) the two readers apart took ~0.55 s of a ~1.6 s build.
"""

from __future__ import annotations

from collections.abc import Iterable

from kubeview.model.gangs.messages import KIND_KUEUE
from kubeview.model.gangs.objects import DEFAULT_API, GroupHeader, header_from
from kubeview.model.gangs.objects import Condition as GangCondition
from kubeview.model.gangs.store import GangStore
from kubeview.model.queues.objects import (
    ADMITTED,
    FINISHED,
    PENDING,
    RESERVED,
    Condition,
    QueuedWorkload,
    _units,
)
from kubeview.model.queues.store import QueueStore

_API = DEFAULT_API[KIND_KUEUE]
_GANG_ORDER = ("Finished", "Evicted", "Admitted", "QuotaReserved")
_Key = tuple[str, str, str | None, str | None]
_OPT_STR = (str, type(None))
# shared pieces, by content (bounded: cleared when full, so a long watch cannot grow them without end)
_LIMIT = 65_536
_conditions: dict[_Key, tuple[Condition, GangCondition]] = {}
_amounts: dict[tuple, dict[str, int]] = {}


def _keep(cache: dict, key: object, value: object) -> None:
    if len(cache) >= _LIMIT:
        cache.clear()
    cache[key] = value


def _condition(c: dict) -> tuple[Condition, GangCondition] | None:
    """Both stores' reading of one condition, shared by content; None: not the shape Kueue writes."""
    kind, status, reason, message = c.get("type"), c.get("status"), c.get("reason"), c.get("message")
    if type(kind) is not str or type(status) is not str or type(reason) not in _OPT_STR \
            or type(message) not in _OPT_STR:
        return None
    key: _Key = (kind, status, reason, message)
    got = _conditions.get(key)
    if got is None:
        got = (Condition(kind, status, reason or "", message or ""),
               GangCondition(kind, status, reason or None, message or None))
        _keep(_conditions, key, got)
    return got


def _strings(raw: dict) -> tuple | None:
    """A dict of strings as a key (None: another value in it)."""
    key = tuple(raw.items())
    for k, v in key:
        if type(k) is not str or type(v) is not str:
            return None
    return key


def _amounts_of(resources: object) -> dict[str, int] | None:
    """A ResourceList Kueue wrote, in model units (only the quantities that parse), shared by content."""
    if type(resources) is not dict:
        return None
    key = _strings(resources)
    if key is None:
        return None
    got = _amounts.get(key)
    if got is None:
        got = {k: a for k, v in key if (a := _units(k, v)) is not None}
        _keep(_amounts, key, got)
    return dict(got)


def read_workload(obj: dict) -> tuple[GroupHeader, QueuedWorkload]:
    """One Kueue Workload as the gang store and the queue store read it (see the module doc)."""
    fast = _fast(obj)
    return fast if fast is not None else (header_from(KIND_KUEUE, obj), QueuedWorkload.from_api(obj))


def _fast(obj: dict) -> tuple[GroupHeader, QueuedWorkload] | None:  # noqa: C901 (one pass, on purpose)
    meta, spec, status = obj.get("metadata"), obj.get("spec"), obj.get("status") or {}
    if type(meta) is not dict or type(spec) is not dict or type(status) is not dict:
        return None
    namespace, name, rv = meta.get("namespace", ""), meta.get("name", ""), meta.get("resourceVersion", "")
    uid, created, queue, priority = meta.get("uid", ""), meta.get("creationTimestamp"), spec.get("queueName"), spec.get("priority", 0)
    if not (type(namespace) is str and type(name) is str and type(rv) is str and type(uid) is str
            and type(created) in (str, type(None)) and type(queue) in (str, type(None)) and type(priority) is int):
        return None
    pod_sets = spec.get("podSets")
    if type(pod_sets) is not list or len(pod_sets) != 1 or type(pod_sets[0]) is not dict:
        return None
    pod_set = pod_sets[0]
    count, min_count, template = pod_set.get("count"), pod_set.get("minCount"), pod_set.get("template") or {}
    if type(count) is not int or type(min_count) not in (int, type(None)) or type(pod_set.get("name", "")) is not str:
        return None
    # conditions: each store's reading, each type's last
    by_type: dict[str, tuple[Condition, GangCondition]] = {}
    raw_conditions = status.get("conditions") or []
    if type(raw_conditions) is not list:
        return None
    for c in raw_conditions:
        if type(c) is not dict:
            return None
        read = _condition(c)
        if read is None:
            return None
        by_type[read[0].type] = read
    # the queue's state and deciding condition (objects.QueuedWorkload.from_api)
    finished, evicted_c = by_type.get("Finished"), by_type.get("Evicted")
    admitted_c, reserved_c = by_type.get("Admitted"), by_type.get("QuotaReserved")
    deciding: tuple[Condition, GangCondition] | None
    if finished is not None and finished[0].status == "True":
        state, deciding = FINISHED, finished
    elif admitted_c is not None and admitted_c[0].status == "True":
        state, deciding = ADMITTED, admitted_c
    elif reserved_c is not None and reserved_c[0].status == "True":
        state, deciding = RESERVED, reserved_c
    else:
        state, deciding = PENDING, reserved_c
    # the gang's condition (gangs.objects._kueue): the first of its order that holds, else QuotaReserved, else the first
    chosen = next((p for p in (finished, evicted_c, admitted_c, reserved_c) if p is not None and p[0].status == "True"),
                  None) or reserved_c or next(iter(by_type.values()), None)
    # owners: the queue's is the controller's only; the gang's the controller's, else the first
    refs = meta.get("ownerReferences") or []
    if type(refs) is not list or not all(type(r) is dict for r in refs):
        return None
    controller = next((r for r in refs if r.get("controller")), None)
    owner = f"{controller.get('kind')}/{controller.get('name')}" if controller is not None else None
    first = controller if controller is not None else (refs[0] if refs else None)
    gang_owner = f"{first.get('kind', '')}/{first.get('name', '')}" if first else None
    # requests and flavors: admission's assignment, else status.resourceRequests
    admission = status.get("admission") or {}
    if type(admission) is not dict:
        return None
    assignments = admission.get("podSetAssignments")
    requests: dict[str, int] | None = {}
    flavors: dict[str, str] = {}
    if assignments:
        if type(assignments) is not list or len(assignments) != 1 or type(assignments[0]) is not dict:
            return None
        assignment = assignments[0]
        requests = _amounts_of(assignment.get("resourceUsage") or {})
        raw_flavors = assignment.get("flavors") or {}
        if requests is None or type(raw_flavors) is not dict:
            return None
        key = _strings(raw_flavors)
        if key is None:
            return None
        flavors = dict(key)
    if not requests:
        asked = status.get("resourceRequests")
        if asked:
            if type(asked) is not list or len(asked) != 1 or type(asked[0]) is not dict:
                return None
            requests = _amounts_of(asked[0].get("resources") or {})
    if requests is None or not requests:
        return None  # from the pod template (or nothing parses): the reader apart says
    cluster_queue = admission.get("clusterQueue") or None
    if type(cluster_queue) not in (str, type(None)):
        return None
    api = obj.get("apiVersion") or _API
    gang_condition = chosen[1] if chosen is not None else None
    header = GroupHeader(KIND_KUEUE, api, namespace, name, min_count if min_count is not None else count, count,
                         gang_condition, queue or None, (), (), gang_owner,
                         templates=((pod_set.get("name", ""), template, count),), resource_version=rv, uid=uid)
    view = QueuedWorkload(namespace, name, queue or "", cluster_queue, state,
                          deciding[0].reason if deciding is not None else "",
                          deciding[0].message if deciding is not None else "",
                          evicted_c[0] if evicted_c is not None and evicted_c[0].status == "True" else None,
                          requests, count, flavors, priority, spec.get("active") is not False, created or "", owner, rv)
    return header, view


class KueueWorkloads:
    """The model's table row for `kueue.Workload`: the gang store's header and the queue store's place in
    the queues, each read when a store is first asked for it, both in one `read_workload` (the first store
    to ask keeps the other's half until it asks for the same object: `_halves`). A list or a watch event
    costs a dict entry per store; `queues.held()` (the header, every refresh) reads only the Workloads whose
    conditions may say pending (model/queues/store.py)."""

    def __init__(self, gangs: GangStore, queues: QueueStore) -> None:
        self.gangs, self.queues = gangs, queues
        self._halves: dict[tuple[str, str], tuple[dict, tuple[GroupHeader, QueuedWorkload]]] = {}
        gangs.read_later(lambda key, obj: self._read((key[1], key[2]), obj)[0])
        queues.read_later(lambda key, obj: self._read(key, obj)[1])

    def _read(self, key: tuple[str, str], obj: dict) -> tuple[GroupHeader, QueuedWorkload]:
        kept = self._halves.pop(key, None)
        if kept is not None and kept[0] is obj:
            return kept[1]  # the other store read this very object: its half is here
        pair = read_workload(obj)
        self._halves[key] = (obj, pair)
        return pair

    @staticmethod
    def _key(obj: dict) -> tuple[str, str]:
        meta = obj.get("metadata") or {}
        return (meta.get("namespace", ""), meta.get("name", ""))

    def put(self, obj: dict) -> bool:
        key = self._key(obj)
        return self.gangs.put_later((KIND_KUEUE, *key), obj) | self.queues.put_later(obj)

    def delete(self, obj: dict) -> bool:
        self._halves.pop(self._key(obj), None)
        return self.gangs.delete(KIND_KUEUE, obj) | self.queues.delete(KIND_KUEUE, obj)

    def replace(self, objects: Iterable[dict]) -> None:
        keyed = {self._key(obj): obj for obj in objects}  # each key made once for both stores
        self._halves.clear()
        self.gangs.replace_later(KIND_KUEUE, {(KIND_KUEUE, ns, name): obj for (ns, name), obj in keyed.items()})
        self.queues.replace_later(keyed)
