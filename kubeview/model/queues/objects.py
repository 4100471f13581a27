"""Kueue objects read into views: ClusterQueue, LocalQueue, ResourceFlavor and a Workload's place in them.

Field names are sigs.k8s.io/kueue v0.17.0's (apis/kueue/v1beta2/*_types.go; v1beta1 differs in
`spec.cohort` for v1beta2's `spec.cohortName` and in its deprecated `status.pendingWorkloadsStatus`).
Amounts are model units (millicores for `cpu`, the rest plain integers rounded up: model/quantity.py),
the object's own strings kept for display. A Workload's state is Kueue's conditions in its own order:
Finished, Admitted, QuotaReserved; one not holding quota is pending with QuotaReserved=False's reason and
message as Kueue wrote them (reason `Pending`, "couldn't assign flavors to pod set main: insufficient
unused quota for nvidia.com/gpu in flavor default, 1 more needed": pkg/scheduler/scheduler.go and
pkg/scheduler/flavorassigner/flavorassigner.go; `Inadmissible`, "LocalQueue q doesn't exist":
pkg/controller/core/workload_controller.go).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from kubeview.model.quantity import QuantityError, to_units
from kubeview.model.requests import effective

KIND_CLUSTER_QUEUE = "kueue.ClusterQueue"
KIND_LOCAL_QUEUE = "kueue.LocalQueue"
KIND_FLAVOR = "kueue.ResourceFlavor"
QUEUE_KINDS = (KIND_CLUSTER_QUEUE, KIND_LOCAL_QUEUE, KIND_FLAVOR)
QUEUE_LABEL = "kueue.x-k8s.io/queue-name"  # on a Job (or pod): the LocalQueue it is submitted to

# A Workload's state, one word: Kueue's conditions read in its order.
FINISHED, ADMITTED, RESERVED, PENDING = "finished", "admitted", "quota reserved", "pending"


def _units(resource: str, text: object) -> int | None:
    try:
        return to_units(resource, str(text))
    except (QuantityError, ValueError):
        return None


def _int(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


@dataclass(frozen=True, slots=True)
class Condition:
    """One metav1.Condition as written."""

    type: str
    status: str
    reason: str
    message: str


def _conditions(status: dict) -> dict[str, Condition]:
    return {str(c.get("type", "")): Condition(str(c.get("type", "")), str(c.get("status", "")),
                                              str(c.get("reason") or ""), str(c.get("message") or ""))
            for c in status.get("conditions") or () if isinstance(c, dict)}


@dataclass(frozen=True, slots=True)
class FlavorResource:
    """One (flavor, resource) of a ClusterQueue: spec's nominal quota and limits, status's usage.

    `used`/`borrowed` are status.flavorsUsage (admitted workloads), `reserved`/`reserved_borrowed`
    status.flavorsReservation (quota reserved, admitted or not: what Kueue's scheduler counts);
    `nominal` is 0 for a flavor only status names; None limits are unset (no limit)."""

    flavor: str
    resource: str
    nominal: int
    borrowing_limit: int | None
    lending_limit: int | None
    used: int
    borrowed: int
    reserved: int
    reserved_borrowed: int
    nominal_text: str = "0"

    @property
    def free(self) -> int:
        """Nominal quota not reserved (negative while borrowing)."""
        return self.nominal - self.reserved


def _usage(entries: object) -> dict[tuple[str, str], tuple[int, int]]:
    out: dict[tuple[str, str], tuple[int, int]] = {}
    for flavor in entries if isinstance(entries, list) else ():
        for res in flavor.get("resources") or ():
            name = str(res.get("name", ""))
            total, borrowed = _units(name, res.get("total", 0)), _units(name, res.get("borrowed", 0))
            out[(str(flavor.get("name", "")), name)] = (total or 0, borrowed or 0)
    return out


@dataclass(frozen=True, slots=True)
class ClusterQueueView:
    """One ClusterQueue (cluster-scoped): its quota per flavor and resource, its usage, its counts."""

    name: str
    uid: str
    api_version: str
    cohort: str | None
    resources: tuple[FlavorResource, ...]  # spec order (resource groups, flavors, resources), then status-only
    pending: int  # status.pendingWorkloads
    reserving: int  # status.reservingWorkloads
    admitted: int  # status.admittedWorkloads
    active: Condition | None  # the Active condition (reason Ready, FlavorNotFound, Stopped, ...)
    pending_head: tuple[tuple[str, str], ...] = ()  # v1beta1 pendingWorkloadsStatus: (namespace, name) in order
    resource_version: str = ""

    @classmethod
    def from_api(cls, obj: dict) -> ClusterQueueView:
        meta, spec, status = obj.get("metadata") or {}, obj.get("spec") or {}, obj.get("status") or {}
        usage, reservation = _usage(status.get("flavorsUsage")), _usage(status.get("flavorsReservation"))
        rows: list[FlavorResource] = []
        seen: set[tuple[str, str]] = set()
        for group in spec.get("resourceGroups") or ():
            for flavor in group.get("flavors") or ():
                for res in flavor.get("resources") or ():
                    key = (str(flavor.get("name", "")), str(res.get("name", "")))
                    seen.add(key)
                    rows.append(_row(key, res, usage, reservation))
        for key in list(usage) + list(reservation):
            if key not in seen:
                seen.add(key)
                rows.append(_row(key, {}, usage, reservation))
        head = (status.get("pendingWorkloadsStatus") or {}).get("clusterQueuePendingWorkload") or ()
        return cls(
            name=meta.get("name", ""), uid=meta.get("uid", ""), api_version=obj.get("apiVersion", ""),
            cohort=spec.get("cohortName") or spec.get("cohort") or None,
            resources=tuple(rows), pending=_int(status.get("pendingWorkloads")),
            reserving=_int(status.get("reservingWorkloads")), admitted=_int(status.get("admittedWorkloads")),
            active=_conditions(status).get("Active"),
            pending_head=tuple((str(w.get("namespace", "")), str(w.get("name", ""))) for w in head),
            resource_version=meta.get("resourceVersion", ""))

    def of(self, resource: str) -> list[FlavorResource]:
        """The flavors covering `resource`, in the queue's order (the order Kueue tries them)."""
        return [r for r in self.resources if r.resource == resource]

    def total(self, resource: str) -> tuple[int, int]:
        """(reserved, nominal) of `resource` over its flavors."""
        rows = self.of(resource)
        return sum(r.reserved for r in rows), sum(r.nominal for r in rows)

    def borrowing(self) -> list[FlavorResource]:
        """The (flavor, resource) rows borrowing from the cohort now."""
        return [r for r in self.resources if r.reserved_borrowed or r.borrowed]


def _row(key: tuple[str, str], res: dict, usage: dict, reservation: dict) -> FlavorResource:
    flavor, name = key
    nominal_text = str(res.get("nominalQuota", 0))

    def limit(field: str) -> int | None:
        return _units(name, res[field]) if res.get(field) is not None else None

    used, borrowed = usage.get(key, (0, 0))
    reserved, reserved_borrowed = reservation.get(key, usage.get(key, (0, 0)))
    return FlavorResource(flavor, name, _units(name, nominal_text) or 0, limit("borrowingLimit"),
                          limit("lendingLimit"), used, borrowed, reserved, reserved_borrowed, nominal_text)


@dataclass(frozen=True, slots=True)
class LocalQueueView:
    """One LocalQueue: the namespace's door to a ClusterQueue, and its own counts."""

    namespace: str
    name: str
    cluster_queue: str
    pending: int
    reserving: int
    admitted: int
    active: Condition | None
    usage: dict[tuple[str, str], int]  # (flavor, resource) -> status.flavorsUsage total
    resource_version: str = ""

    @classmethod
    def from_api(cls, obj: dict) -> LocalQueueView:
        meta, spec, status = obj.get("metadata") or {}, obj.get("spec") or {}, obj.get("status") or {}
        return cls(namespace=meta.get("namespace", ""), name=meta.get("name", ""),
                   cluster_queue=str(spec.get("clusterQueue", "")), pending=_int(status.get("pendingWorkloads")),
                   reserving=_int(status.get("reservingWorkloads")), admitted=_int(status.get("admittedWorkloads")),
                   active=_conditions(status).get("Active"),
                   usage={k: v[0] for k, v in _usage(status.get("flavorsUsage")).items()},
                   resource_version=meta.get("resourceVersion", ""))

    @property
    def key(self) -> tuple[str, str]:
        return (self.namespace, self.name)


@dataclass(frozen=True, slots=True)
class FlavorView:
    """One ResourceFlavor: the node labels and taints that say which nodes it stands for."""

    name: str
    node_labels: dict[str, str]
    node_taints: tuple[str, ...]  # "key=value:Effect"
    resource_version: str = ""

    @classmethod
    def from_api(cls, obj: dict) -> FlavorView:
        meta, spec = obj.get("metadata") or {}, obj.get("spec") or {}
        taints = tuple(f"{t.get('key', '')}{'=' + t['value'] if t.get('value') else ''}:{t.get('effect', '')}"
                       for t in spec.get("nodeTaints") or ())
        return cls(name=meta.get("name", ""), node_labels={str(k): str(v) for k, v in
                                                            (spec.get("nodeLabels") or {}).items()},
                   node_taints=taints, resource_version=meta.get("resourceVersion", ""))


@dataclass(frozen=True, slots=True)
class QueuedWorkload:
    """A Kueue Workload's place in its queues: which LocalQueue and ClusterQueue, its state and why.

    `reason`/`message` are the condition that decides the state, as Kueue wrote it (pending: QuotaReserved
    False, e.g. `Pending` "couldn't assign flavors ..."; none yet: both empty); `requests` the pod sets'
    total requests as Kueue counts them (admission's resourceUsage, else status.resourceRequests, else
    count × each pod's effective requests from spec.podSets); `flavors` resource -> flavor once assigned."""

    namespace: str
    name: str
    queue: str  # spec.queueName (the LocalQueue)
    cluster_queue: str | None  # status.admission.clusterQueue (set with the quota reservation)
    state: str  # FINISHED, ADMITTED, RESERVED or PENDING
    reason: str
    message: str
    evicted: Condition | None  # Evicted True: why it lost its reservation (it is pending again)
    requests: dict[str, int]
    pods: int  # the pod sets' counts: the pods it would have once admitted
    flavors: dict[str, str]
    priority: int
    active: bool  # spec.active (False: deactivated)
    created: str  # metadata.creationTimestamp
    owner: str | None  # "Job/train" (the controller owner)
    resource_version: str = ""

    @classmethod
    def from_api(cls, obj: dict) -> QueuedWorkload:
        meta, spec, status = obj.get("metadata") or {}, obj.get("spec") or {}, obj.get("status") or {}
        conds = _conditions(status)

        def holds(kind: str) -> bool:
            return kind in conds and conds[kind].status == "True"

        state = next((s for s, t in ((FINISHED, "Finished"), (ADMITTED, "Admitted"), (RESERVED, "QuotaReserved"))
                      if holds(t)), PENDING)
        deciding = conds.get({FINISHED: "Finished", ADMITTED: "Admitted"}.get(state, "QuotaReserved"))
        admission = status.get("admission") or {}
        requests = _kueue_totals(admission.get("podSetAssignments"), "resourceUsage") \
            or _kueue_totals(status.get("resourceRequests"), "resources") or _template_totals(spec)
        flavors = {str(r): str(f) for a in admission.get("podSetAssignments") or ()
                   for r, f in (a.get("flavors") or {}).items()}
        owner = controller_owner(meta.get("ownerReferences") or ())
        return cls(namespace=meta.get("namespace", ""), name=meta.get("name", ""),
                   queue=str(spec.get("queueName") or ""), cluster_queue=admission.get("clusterQueue") or None,
                   state=state, reason=deciding.reason if deciding else "",
                   message=deciding.message if deciding else "",
                   evicted=conds["Evicted"] if holds("Evicted") else None, requests=requests,
                   pods=pod_count(spec.get("podSets") or ()), flavors=flavors,
                   priority=_int(spec.get("priority")), active=spec.get("active") is not False,
                   created=str(meta.get("creationTimestamp") or ""), owner=owner,
                   resource_version=meta.get("resourceVersion", ""))

    @property
    def key(self) -> tuple[str, str]:
        return (self.namespace, self.name)

    def words(self) -> str:
        """`held by queue team-q: Pending` (the LocalQueue and Kueue's reason), the Job's row says it."""
        return f"held by queue {self.queue or '?'}: {self.reason or 'no condition from Kueue yet'}"

    def origin(self) -> str:
        return f"from Kueue's Workload {self.namespace}/{self.name} (its QuotaReserved condition)"

    @property
    def waiting(self) -> bool:
        """Not holding quota and not finished: Kueue holds it back (its Job stays suspended)."""
        return self.state == PENDING


def controller_owner(refs: Iterable[dict]) -> str | None:
    """The controller owner reference as "Kind/name" (`Job/train`), None without one."""
    return next((f"{o.get('kind')}/{o.get('name')}" for o in refs if o.get("controller")), None)


def pod_count(pod_sets: Iterable[dict]) -> int:
    """The pods a Workload's pod sets make once admitted (a pod set without a count is one pod)."""
    return sum(_count(p) for p in pod_sets)


def _kueue_totals(entries: object, field: str) -> dict[str, int]:
    """Per resource, the sum over pod sets of a ResourceList Kueue wrote (totals for the pod set)."""
    out: dict[str, int] = {}
    for entry in entries if isinstance(entries, list) else ():
        for name, text in (entry.get(field) or {}).items():
            amount = _units(str(name), text)
            if amount is not None:
                out[str(name)] = out.get(str(name), 0) + amount
    return out


def _count(pod_set: dict) -> int:
    return _int(pod_set.get("count")) if pod_set.get("count") is not None else 1


def _template_totals(spec: dict) -> dict[str, int]:
    out: dict[str, int] = {}
    for pod_set in spec.get("podSets") or ():
        count = _count(pod_set)
        try:
            each = effective((pod_set.get("template") or {}).get("spec") or {})
        except (QuantityError, ValueError):
            each = {}
        for name, amount in each.items():
            if name != "pods":
                out[name] = out.get(name, 0) + amount * count
    return out
