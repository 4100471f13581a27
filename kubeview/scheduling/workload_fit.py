"""Would these manifests fit now: Pods, Deployments, ReplicaSets, StatefulSets, Jobs and gangs, without
applying them (`kubeview fit`). Pure: API-shaped dicts in, one `UnitFit` per unit out.

A manifest becomes units, each placed by `gang_fit.fit_gang` in order, every unit seeing the ones
before it placed (applying the manifest makes them all):
- a gang: pods naming a group (`spec.schedulingGroup.podGroupName`, or KAI's / Volcano's annotation,
  model/gangs/store.py `group_keys`), bare or from a Job's, Deployment's, ReplicaSet's or StatefulSet's pod
  template, with the group object from the manifest, else from the cluster; a Job with
  `spec.scheduling.schedulingPolicy.gang` (1.37 `WorkloadWithJob`: the Job controller makes its
  PodGroup) is a gang of its parallelism. All or nothing, as kube-scheduler.
- everything else: pods placed one by one (a Deployment's replicas, a Job's parallelism, a Pod); it
  fits when every pod does. Replicas of one template are placed through `replica_fit` (work bounded
  whatever the count).
Every object of the manifest is placed or named with the reason it was not (`Skipped`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from kubeview.model.allocation import Allocation
from kubeview.model.gangs.messages import KIND_KAI, KIND_POD_GROUP, KIND_VOLCANO, waiting_for_group
from kubeview.model.gangs.objects import header_from
from kubeview.model.gangs.store import GroupKey, group_keys
from kubeview.model.views import PodView
from kubeview.scheduling.config import PackingConfig
from kubeview.scheduling.evaluate import ExtraLoad
from kubeview.scheduling.gang_fit import GangFit, defaulted_pod, fit_gang
from kubeview.scheduling.replica_fit import MAX_TRIED, fit_identical_gang, fit_replicas, materialize

REPLICATED = ("Deployment", "ReplicaSet", "StatefulSet")
# (apiVersion group, kind) of the group objects a manifest may carry -> the model's kind
GROUP_KINDS = {("scheduling.k8s.io", "PodGroup"): KIND_POD_GROUP, ("scheduling.run.ai", "PodGroup"): KIND_KAI,
               ("scheduling.volcano.sh", "PodGroup"): KIND_VOLCANO}
# kinds that make no pods themselves -> why a fit leaves them out
NO_PODS = "makes no pods"
IGNORED = {"Workload": "kube-scheduler places its PodGroups' pods, not the Workload", "Namespace": NO_PODS,
           "Service": NO_PODS, "ConfigMap": NO_PODS, "Secret": NO_PODS, "ServiceAccount": NO_PODS,
           "ResourceClaim": "makes no pods (a pod's claims are named on the pod)",
           "ResourceClaimTemplate": "makes no pods (a pod's claims are named on the pod)", "PriorityClass": NO_PODS,
           "DaemonSet": "not placed: its controller puts one pod on each node it selects, not the scheduler's choice",
           "CronJob": "not placed: its Jobs start on a schedule (fit its jobTemplate as a Job to ask about one)"}


class ManifestError(ValueError):
    """The manifest is not something kubeview can place (one sentence)."""


@dataclass(slots=True)
class Unit:
    what: str  # "Job ml/train", "PodGroup gang/gang-a-workers"
    pods: list[PodView]  # a template gang's: the cluster's members (the template's copies are counted)
    min_count: int
    gang: bool
    missing_group: str | None = None  # pods name a group that exists nowhere: kube-scheduler holds them
    group: GroupKey | None = None  # the group object the pods name
    template: PodView | None = None  # `replicas` copies of this pod, too many (or not a gang) to make up front
    replicas: int = 0  # pods the unit's objects make (template units: the copies)
    made_by: tuple[str, ...] = ()  # a gang's objects that make its pods ("Job default/train"), bare Pods aside

    @property
    def size(self) -> int:
        return len(self.pods) + (self.replicas if self.template is not None else 0)


@dataclass(slots=True)
class Skipped:
    """An object of the manifest that places no pods, and why."""

    what: str  # "Workload default/big"
    why: str


@dataclass(slots=True)
class UnitFit:
    unit: Unit
    fit: GangFit
    notes: list[str] = field(default_factory=list)
    room: int | None = None  # of the unit's pods, how many fit (None: the fit's own room)
    untried: int = 0  # replicas not placed one by one (identical to the tried ones)
    untried_message: str | None = None  # what each of them carries when known

    @property
    def fits(self) -> bool:
        if self.unit.missing_group is not None:
            return False
        return self.fit.fits if self.room is None else self.room >= self.unit.min_count


def units_from(docs: list, namespace: str,
               admit: Callable[[dict], dict] | None = None) -> tuple[list[Unit], list[Skipped]]:
    """The units of a manifest's documents (None entries, as YAML's empty documents, skipped), and the
    objects that place no pods, each with why. `admit`: what the cluster's API server does to a created
    pod (the embedded cluster's admission); by default only the defaulting every API server does (a
    limit without a request is the request). Pods naming a group the manifest does not hold wait for it
    (`missing_group`) until `resolve_groups` finds it in the cluster."""
    admit = admit or defaulted_pod
    headers = {}
    skipped: list[Skipped] = []
    units: list[Unit] = []
    grouped: dict[GroupKey, list[Unit]] = {}  # the pods naming each group, per object
    for obj in flatten(docs):
        kind, group = obj.get("kind"), str(obj.get("apiVersion") or "").partition("/")[0]
        meta = obj.setdefault("metadata", {}) if isinstance(obj.get("metadata", {}), dict) else None
        if meta is None:
            raise ManifestError(f"{kind or 'an object'} has a metadata that is not a mapping")
        meta.setdefault("namespace", namespace)
        name = f"{meta.get('namespace')}/{meta.get('name', '?')}"
        if kind is not None and (group, kind) in GROUP_KINDS:
            header = header_from(GROUP_KINDS[(group, kind)], obj)
            headers[header.key] = header
        elif kind == "Pod":
            keys = group_keys(obj)
            unit = Unit(f"Pod {name}", [_pod(obj, meta, admit)], 1, False, replicas=1)
            (grouped.setdefault(keys[0], []) if keys else units).append(unit)
        elif kind in REPLICATED or kind == "Job":
            unit, keys = _template_unit(obj, meta, name, admit)
            (grouped.setdefault(keys[0], []) if keys else units).append(unit)
        elif kind in IGNORED:
            skipped.append(Skipped(f"{kind} {name}", IGNORED[kind]))
        elif kind == "List":
            skipped.append(Skipped(f"List {name}", "holds no items"))
        else:
            raise ManifestError(f"{kind or 'a document without a kind'} {name} is not a Pod, Deployment, ReplicaSet, "
                                "StatefulSet, Job or gang (PodGroup and its pods)")
    for key, parts in grouped.items():
        units.append(_gang_unit(key, parts, headers.get(key)))
    for key in headers:
        if key not in grouped:
            skipped.append(Skipped(f"{key[0]} {key[1]}/{key[2]}", "no pod of the manifest names this group"))
    if not units:
        raise ManifestError("it holds no pods to place (a Pod, Deployment, ReplicaSet, StatefulSet, Job or gang)")
    return units, skipped


def _template_unit(obj: dict, meta: dict, name: str, admit: Callable[[dict], dict]) -> tuple[Unit, tuple]:
    """A Deployment's, ReplicaSet's, StatefulSet's or Job's pods as one template unit, and the groups its
    pod template names (a Job with spec.scheduling's gang policy is a gang of its parallelism)."""
    kind, spec = obj.get("kind"), obj.get("spec") or {}
    if kind == "Job":
        count = _count(spec.get("parallelism", 1), f"Job {name} spec.parallelism")
        if spec.get("completions") is not None:
            count = min(count, _count(spec["completions"], f"Job {name} spec.completions"))
    else:
        count = _count(spec.get("replicas", 1), f"{kind} {name} spec.replicas")
    template = spec.get("template")
    if not isinstance(template, dict) or not isinstance(template.get("spec"), dict):
        raise ManifestError(f"{kind} {name} has no spec.template.spec")
    tmeta = {**(template.get("metadata") or {}), "name": f"{meta.get('name', 'pod')}-0",
             "namespace": meta.get("namespace")}
    pod = {"metadata": tmeta, "spec": dict(template["spec"]), "status": {"phase": "Pending"}}
    keys = group_keys(pod)
    unit = Unit(f"{kind} {name}", [], count, False, template=_pod(pod, tmeta, admit), replicas=count)
    gang = ((spec.get("scheduling") or {}).get("schedulingPolicy") or {}).get("gang") if kind == "Job" else None
    if gang is not None and not keys:
        unit.gang = True
        unit.min_count = _count(gang.get("minCount", count), f"Job {name} minCount")
        _make_up_front(unit)
    return unit, keys


def _make_up_front(unit: Unit) -> None:
    """A gang's pods are made before it is placed (kube-scheduler's messages count them all), unless
    there are more than kubeview fit places one by one: then they stay a template, counted."""
    if unit.template is not None and unit.replicas <= MAX_TRIED:
        unit.pods, unit.template = materialize(unit.template, unit.replicas), None


def _gang_unit(key: GroupKey, parts: list[Unit], header) -> Unit:
    """The gang of the pods naming `key`, from every object that makes them."""
    made = tuple(p.what for p in parts if not p.what.startswith("Pod "))
    what = f"{key[0]} {key[1]}/{key[2]}"
    size = sum(p.size for p in parts)
    missing = None if header is not None else waiting_for_group(key[2])
    min_count = header.min_count if header is not None else size
    if len(parts) == 1 and parts[0].template is not None and size > MAX_TRIED:
        return Unit(what, [], min_count, True, missing, key, parts[0].template, size, made)
    if size > MAX_TRIED:
        raise ManifestError(f"{what}: {size:,} pods from several objects in one gang, more than kubeview fit "
                            f"places one by one ({MAX_TRIED:,})")
    for p in parts:
        _make_up_front(p)
    return Unit(what, [pod for p in parts for pod in p.pods], min_count, True, missing, key, replicas=size,
                made_by=made)


def resolve_groups(units: list[Unit], known: Callable[[GroupKey], tuple[int, list[PodView]] | None]) -> None:
    """Gangs meet the cluster: `known(key)` is (minCount, member pods) of a group the cluster has, None
    when it has none. Its members join the unit (a manifest pod of the same name replaces its
    namespace's one: re-applying it); a group only the cluster has gives the unit its minCount, one
    nowhere leaves the pods waiting for it (`missing_group`)."""
    for unit in units:
        found = known(unit.group) if unit.group is not None else None
        if found is None:
            continue
        min_count, members = found
        mine = {p.key for p in unit.pods}
        unit.pods = [p for p in members if p.key not in mine] + unit.pods
        if unit.missing_group is not None:
            unit.min_count, unit.missing_group = min_count, None


def fit_units(alloc: Allocation, units: list[Unit], config: PackingConfig,
              claim_nodes: Callable[[Unit], tuple[str, ...] | None] | None = None) -> list[UnitFit]:
    """Each unit's fit, the units before it placed (a gang that does not fit places nothing). At most
    `MAX_TRIED` pods of template units are placed one by one; the rest are counted (`replica_fit`)."""
    rows: dict[int, np.ndarray] = {}
    row = {n: i for i, n in enumerate(alloc.nodes)}
    out: list[UnitFit] = []
    budget = MAX_TRIED
    for unit in units:
        assumed = None
        if rows:
            keys = np.fromiter(rows, dtype=np.intp, count=len(rows))
            assumed = ExtraLoad(keys, np.stack(list(rows.values())))
        load = None
        if unit.template is not None and not unit.gang:
            many = fit_replicas(alloc, unit.template, unit.replicas, config, assumed, budget)
            budget -= len(many.fit.members)
            done = UnitFit(unit, many.fit, [many.note] if many.note else [], many.room, many.untried,
                           many.untried_message)
            load = many.load
        elif unit.template is not None:
            bound = [p for p in unit.pods if p.node is not None]
            done = UnitFit(unit, fit_identical_gang(alloc, unit.template, unit.replicas, unit.min_count, len(bound),
                                                    config, assumed))
        else:
            done = UnitFit(unit, fit_gang(alloc, unit.pods, unit.min_count, config, assumed,
                                          claim_nodes(unit) if claim_nodes is not None else None, gang=unit.gang))
        out.append(done)
        if unit.missing_group is not None or not (done.fits or not unit.gang):
            continue
        if load is not None:
            for r, amounts in zip(load.rows.tolist(), load.amounts, strict=True):
                rows[r] = rows.get(r, 0) + amounts
            continue
        for m in done.fit.members:
            if m.node is not None and not m.bound:  # bound: in alloc
                rows[row[m.node]] = rows.get(row[m.node], 0) + alloc.vector(m.pod.requests)
    return out


def flatten(docs: list) -> list[dict]:
    out: list[dict] = []
    for doc in docs:
        if doc is None:
            continue
        if not isinstance(doc, dict):
            raise ManifestError(f"a document is a {type(doc).__name__}, not a Kubernetes object")
        if doc.get("kind") == "List" or (str(doc.get("kind", "")).endswith("List") and "items" in doc):
            out.extend(flatten(list(doc.get("items") or [])))
        else:
            out.append(doc)
    return out


def _count(value: object, what: str) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise ManifestError(f"{what} is {value!r}, not a count")
    return value


def _pod(obj: dict, meta: dict, admit: Callable[[dict], dict]) -> PodView:
    obj.setdefault("status", {"phase": "Pending"})
    if not meta.get("name"):
        raise ManifestError("a Pod has no metadata.name")
    if not isinstance(obj.get("spec"), dict):
        raise ManifestError(f"Pod {meta.get('namespace')}/{meta['name']} has no spec")
    _check_resources(obj["spec"])
    try:
        return PodView.from_api(admit(obj))
    except (ValueError, TypeError, AttributeError) as exc:
        raise ManifestError(f"Pod {meta.get('namespace')}/{meta['name']}: {exc}") from None


def _check_resources(spec: dict) -> None:
    for field_name in ("containers", "initContainers"):
        for c in spec.get(field_name) or []:
            if not isinstance(c, dict):
                raise ManifestError(f"a {field_name[:-1]} is not a mapping")
            resources = c.get("resources") or {}
            if not isinstance(resources, dict) or not all(isinstance(resources.get(k) or {}, dict)
                                                          for k in ("limits", "requests")):
                raise ManifestError(f"container {c.get('name')!r}: resources are not mappings")
