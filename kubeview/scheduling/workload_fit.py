"""Would these manifests fit now: Pods, Deployments, ReplicaSets, StatefulSets, Jobs and gangs, without
applying them (`kubeview fit`). Pure: API-shaped dicts in, one `UnitFit` per unit out.

A manifest becomes units, each placed by `gang_fit.fit_gang` in order, every unit seeing the ones
before it placed (applying the manifest makes them all):
- a gang: pods naming a group (`spec.schedulingGroup.podGroupName`, or KAI's / Volcano's annotation,
  model/gangs.py `group_keys`) with the group object from the manifest, else from the cluster; a Job
  with `spec.scheduling.schedulingPolicy.gang` (1.37 `WorkloadWithJob`: the Job controller makes its
  PodGroup) is a gang of its parallelism. All or nothing, as kube-scheduler.
- everything else: pods placed one by one (a Deployment's replicas, a Job's parallelism, a Pod); it
  fits when every pod does.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from kubeview.model.allocation import Allocation
from kubeview.model.gang_messages import KIND_KAI, KIND_POD_GROUP, KIND_VOLCANO, waiting_for_group
from kubeview.model.gang_objects import header_from
from kubeview.model.gangs import GroupKey, group_keys
from kubeview.model.views import PodView
from kubeview.scheduling.config import PackingConfig
from kubeview.scheduling.evaluate import ExtraLoad
from kubeview.scheduling.gang_fit import GangFit, defaulted_pod, fit_gang

REPLICATED = ("Deployment", "ReplicaSet", "StatefulSet")
# (apiVersion group, kind) of the group objects a manifest may carry -> the model's kind
GROUP_KINDS = {("scheduling.k8s.io", "PodGroup"): KIND_POD_GROUP, ("scheduling.run.ai", "PodGroup"): KIND_KAI,
               ("scheduling.volcano.sh", "PodGroup"): KIND_VOLCANO}
IGNORED = ("Workload", "Namespace", "Service", "ConfigMap", "Secret", "ServiceAccount", "ResourceClaim",
           "ResourceClaimTemplate", "PriorityClass")


class ManifestError(ValueError):
    """The manifest is not something kubeview can place (one sentence)."""


@dataclass(slots=True)
class Unit:
    what: str  # "Job ml/train", "PodGroup gang/gang-a-workers"
    pods: list[PodView]
    min_count: int
    gang: bool
    missing_group: str | None = None  # pods name a group that exists nowhere: kube-scheduler holds them
    group: GroupKey | None = None  # the group object the pods name


@dataclass(slots=True)
class UnitFit:
    unit: Unit
    fit: GangFit
    notes: list[str] = field(default_factory=list)

    @property
    def fits(self) -> bool:
        return self.unit.missing_group is None and self.fit.fits


def units_from(docs: list, namespace: str, admit: Callable[[dict], dict] | None = None) -> tuple[list[Unit], list[str]]:
    """The units of a manifest's documents (None entries, as YAML's empty documents, skipped), and what
    was skipped. `admit`: what the cluster's API server does to a created pod (the embedded cluster's
    admission); by default only the defaulting every API server does (a limit without a request is the
    request). Pods naming a group the manifest does not hold wait for it (`missing_group`) until
    `resolve_groups` finds it in the cluster."""
    admit = admit or defaulted_pod
    objects = _flatten(docs)
    headers = {}
    skipped: list[str] = []
    units: list[Unit] = []
    grouped: dict[GroupKey, list[PodView]] = {}
    for obj in objects:
        kind, group = obj.get("kind"), str(obj.get("apiVersion") or "").partition("/")[0]
        meta = obj.setdefault("metadata", {}) if isinstance(obj.get("metadata", {}), dict) else None
        if meta is None:
            raise ManifestError(f"{kind or 'an object'} has a metadata that is not a mapping")
        meta.setdefault("namespace", namespace)
        name = f"{meta.get('namespace')}/{meta.get('name', '?')}"
        if (group, kind) in GROUP_KINDS:
            header = header_from(GROUP_KINDS[(group, kind)], obj)
            headers[header.key] = header
        elif kind == "Pod":
            pod = _pod(obj, meta, admit)
            keys = group_keys(obj)
            if keys:
                grouped.setdefault(keys[0], []).append(pod)
            else:
                units.append(Unit(f"Pod {name}", [pod], 1, False))
        elif kind in REPLICATED:
            replicas = _count((obj.get("spec") or {}).get("replicas", 1), f"{kind} {name} spec.replicas")
            units.append(Unit(f"{kind} {name}", _template_pods(obj, meta, replicas, admit), replicas, False))
        elif kind == "Job":
            units.append(_job(obj, meta, name, admit))
        elif kind in IGNORED or kind == "List":
            skipped.append(f"{kind} {name}")
        else:
            raise ManifestError(f"{kind or 'a document without a kind'} {name} is not a Pod, Deployment, ReplicaSet, "
                                "StatefulSet, Job or gang (PodGroup and its pods)")
    for key, pods in grouped.items():
        header = headers.get(key)
        missing = None if header is not None else waiting_for_group(key[2])
        min_count = header.min_count if header is not None else len(pods)
        units.append(Unit(f"{key[0]} {key[1]}/{key[2]}", pods, min_count, True, missing, key))
    if not units:
        raise ManifestError("it holds no pods to place (a Pod, Deployment, ReplicaSet, StatefulSet, Job or gang)")
    return units, skipped


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
    """Each unit's fit, the units before it placed (a gang that does not fit places nothing)."""
    rows: dict[int, np.ndarray] = {}
    row = {n: i for i, n in enumerate(alloc.nodes)}
    out: list[UnitFit] = []
    for unit in units:
        assumed = None
        if rows:
            keys = np.fromiter(rows, dtype=np.intp, count=len(rows))
            assumed = ExtraLoad(keys, np.stack(list(rows.values())))
        fit = fit_gang(alloc, unit.pods, unit.min_count, config, assumed,
                       claim_nodes(unit) if claim_nodes is not None else None, gang=unit.gang)
        out.append(UnitFit(unit, fit))
        placed = [(m.pod, m.node) for m in fit.members if m.node is not None and not m.bound]  # bound: in alloc
        if unit.missing_group is None and (fit.fits or not unit.gang):
            for pod, node in placed:
                r = row[node]
                rows[r] = rows.get(r, 0) + alloc.vector(pod.requests)
    return out


def _flatten(docs: list) -> list[dict]:
    out: list[dict] = []
    for doc in docs:
        if doc is None:
            continue
        if not isinstance(doc, dict):
            raise ManifestError(f"a document is a {type(doc).__name__}, not a Kubernetes object")
        if doc.get("kind") == "List" or (str(doc.get("kind", "")).endswith("List") and "items" in doc):
            out.extend(_flatten(list(doc.get("items") or [])))
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


def _template_pods(obj: dict, meta: dict, count: int, admit: Callable[[dict], dict]) -> list[PodView]:
    template = (obj.get("spec") or {}).get("template")
    if not isinstance(template, dict) or not isinstance(template.get("spec"), dict):
        raise ManifestError(f"{obj.get('kind')} {meta.get('namespace')}/{meta.get('name')} has no spec.template.spec")
    pods = []
    for i in range(count):
        tmeta = dict(template.get("metadata") or {})
        tmeta.update(name=f"{meta.get('name', 'pod')}-{i}", namespace=meta.get("namespace"))
        pods.append(_pod({"metadata": tmeta, "spec": dict(template["spec"]), "status": {"phase": "Pending"}}, tmeta,
                         admit))
    return pods


def _job(obj: dict, meta: dict, name: str, admit: Callable[[dict], dict]) -> Unit:
    spec = obj.get("spec") or {}
    parallelism = _count(spec.get("parallelism", 1), f"Job {name} spec.parallelism")
    completions = spec.get("completions")
    if completions is not None:
        parallelism = min(parallelism, _count(completions, f"Job {name} spec.completions"))
    pods = _template_pods(obj, meta, parallelism, admit)
    gang = (((spec.get("scheduling") or {}).get("schedulingPolicy") or {}).get("gang"))
    if gang is None:
        return Unit(f"Job {name}", pods, len(pods), False)
    return Unit(f"Job {name} (gang)", pods, _count(gang.get("minCount", len(pods)), f"Job {name} minCount"), True)
