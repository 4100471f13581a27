"""Workload and PodGroup objects of the embedded cluster, as a 1.37 apiserver with `GenericWorkload` stores
them (scheduling.k8s.io/v1beta1), and what the Job controller makes for a Job with `spec.scheduling`.

Shapes follow k8s.io/api@v0.37.2 scheduling/v1beta1/types.go and the recordings of the real plane
(gangreal's tests/fixtures/k8s/gang137/README.md): a PodGroup gets the `podgroup-protection`
finalizer, `disruptionMode: {single: {}}` and `priority: 0` by default and no status until the
scheduler writes its `PodGroupInitiallyScheduled` condition; a Workload's templates keep their
explicit `schedulingConstraints: null`. The Job controller's names carry the same hashes as
upstream's (`pkg/controller/job/job_scheduling_manager.go`: FNV-32a, `rand.SafeEncodeString`), so
a Job's group has the name the real controller would give it. Pure: dicts in, dicts out.
"""

from __future__ import annotations

import copy

from kubeview.cluster.local import objects as obj

API_VERSION = "scheduling.k8s.io/v1beta1"
PROTECTION = "scheduling.k8s.io/podgroup-protection"
GANG_OBJECT_KINDS = ("Workload", "PodGroup")
_ALPHANUMS = "bcdfghjklmnpqrstvwxz2456789"  # k8s.io/apimachinery/pkg/util/rand


class GangObjectError(ValueError):
    """A Workload or PodGroup the apiserver would refuse; the message is one sentence."""


def pod_group_of(pod: dict) -> str | None:
    """The PodGroup a pod belongs to (`spec.schedulingGroup.podGroupName`), if any."""
    group = (pod.get("spec") or {}).get("schedulingGroup") or {}
    name = group.get("podGroupName")
    return name if isinstance(name, str) and name else None


def min_count(pod_group: dict) -> int | None:
    """The gang's minCount; None for a basic (non-gang) policy."""
    gang = (((pod_group.get("spec") or {}).get("schedulingPolicy") or {}).get("gang")) or None
    return int(gang["minCount"]) if gang is not None else None


def _policy(policy: object, where: str) -> dict:
    if not isinstance(policy, dict) or ("gang" in policy) == ("basic" in policy):
        raise GangObjectError(f"{where}.schedulingPolicy: exactly one of basic or gang is required")
    if "gang" in policy:
        count = (policy.get("gang") or {}).get("minCount")
        if isinstance(count, bool) or not isinstance(count, int) or count < 1:
            raise GangObjectError(f"{where}.schedulingPolicy.gang.minCount: must be a whole number >= 1, "
                                  f"not {count!r}")
        return {"gang": {"minCount": count}}
    return {"basic": {}}


def _unsupported(spec: dict, where: str) -> None:
    """Fields the embedded scheduler does not run are refused, never stored and ignored."""
    if spec.get("schedulingConstraints"):
        raise GangObjectError(f"{where}.schedulingConstraints: the local cluster places gangs without topology "
                              "constraints; leave it out")
    for field in ("compositePodGroupTemplates", "parentCompositePodGroupName"):
        if spec.get(field):
            raise GangObjectError(f"{where}.{field}: the local cluster runs no CompositePodGroups (alpha)")
    if spec.get("resourceClaims"):
        raise GangObjectError(f"{where}.resourceClaims: the local cluster does not allocate a group's shared "
                              "ResourceClaims (DRAWorkloadResourceClaims); give the members their own claims")


def _meta(manifest: dict, kind: str) -> dict:
    meta = manifest.get("metadata") or {}
    name = (meta.get("name") or "").strip() if isinstance(meta.get("name"), str) else ""
    if not name:
        raise GangObjectError(f"a {kind} needs metadata.name")
    made = obj.metadata(name, meta.get("namespace") or "default", labels=meta.get("labels"))
    if meta.get("ownerReferences"):
        made["ownerReferences"] = copy.deepcopy(meta["ownerReferences"])
    return made


def workload_object(manifest: dict) -> dict:
    """A Workload as stored: templates validated, `schedulingConstraints` kept (null when not given)."""
    spec = manifest.get("spec") or {}
    _unsupported(spec, "Workload spec")
    templates = spec.get("podGroupTemplates")
    if not isinstance(templates, list) or not templates:
        raise GangObjectError("Workload spec.podGroupTemplates: Required value")
    out_templates = []
    for i, t in enumerate(templates):
        if not isinstance(t, dict) or not t.get("name"):
            raise GangObjectError(f"Workload spec.podGroupTemplates[{i}].name: Required value")
        _unsupported(t, f"Workload spec.podGroupTemplates[{i}]")
        out_templates.append({"name": t["name"], "schedulingPolicy": _policy(t.get("schedulingPolicy"),
                                                                             f"spec.podGroupTemplates[{i}]"),
                              "schedulingConstraints": t.get("schedulingConstraints")})
    out_spec: dict = {}
    if spec.get("controllerRef"):
        out_spec["controllerRef"] = copy.deepcopy(spec["controllerRef"])
    out_spec["podGroupTemplates"] = out_templates
    return {"metadata": _meta(manifest, "Workload"), "spec": out_spec}


def pod_group_object(manifest: dict) -> dict:
    """A PodGroup as stored: defaults and the protection finalizer; no status yet."""
    spec = manifest.get("spec") or {}
    _unsupported(spec, "PodGroup spec")
    out_spec: dict = {}
    ref = spec.get("workloadRef")
    if ref:
        if not isinstance(ref, dict) or not ref.get("workloadName") or not ref.get("templateName"):
            raise GangObjectError("PodGroup spec.workloadRef needs workloadName and templateName")
        out_spec["workloadRef"] = {"workloadName": ref["workloadName"], "templateName": ref["templateName"]}
    out_spec["schedulingPolicy"] = _policy(spec.get("schedulingPolicy"), "spec")
    out_spec["disruptionMode"] = copy.deepcopy(spec.get("disruptionMode") or {"single": {}})
    if spec.get("priorityClassName"):
        out_spec["priorityClassName"] = spec["priorityClassName"]
    out_spec["priority"] = int(spec.get("priority") or 0)
    meta = _meta(manifest, "PodGroup")
    meta["finalizers"] = [PROTECTION]
    return {"metadata": meta, "spec": out_spec, "status": {}}


# --- the Job controller's objects (alpha WorkloadWithJob) ---------------------------------------------

def _fnv32a(data: bytes) -> int:
    h = 0x811C9DC5
    for byte in data:
        h = ((h ^ byte) * 0x01000193) & 0xFFFFFFFF
    return h


def _safe(number: int) -> str:
    return "".join(_ALPHANUMS[ord(c) % len(_ALPHANUMS)] for c in str(number))


def job_workload_name(job_name: str, job_uid: str) -> str:
    """computeWorkloadName: `<job>-<hash of the uid>` (DeepHashObject prints a types.UID as
    `(types.UID)<uid>`; checked against the recording: Job uid 8a7f1cb9-… → train-86948cbfff)."""
    digest = _safe(_fnv32a(f"(types.UID){job_uid}".encode()))
    return f"{job_name[:253 - len(digest) - 1]}-{digest}"


def job_template_name(job_name: str) -> str:
    return f"{job_name}-pgt-0"


def pod_group_name(workload: str, template: str) -> str:
    """computePodGroupName: `<workload>-<template>-<hash of both>` (names short enough not to be cut)."""
    return f"{workload}-{template}-{_safe(_fnv32a((workload + template).encode()))}"


def job_gang(job: dict) -> int | None:
    """minCount a Job's `spec.scheduling` asks for (defaulted to parallelism, at least 1); None when it
    asks for no gang (no `spec.scheduling`, a basic policy, or pods that name their own group).
    GangObjectError for what the local cluster does not run (topology constraints, group claims)."""
    spec = job.get("spec") or {}
    scheduling = spec.get("scheduling")
    if not isinstance(scheduling, dict) or ((spec.get("template") or {}).get("spec") or {}).get("schedulingGroup"):
        return None
    _unsupported(scheduling, "spec.scheduling")
    gang = (scheduling.get("schedulingPolicy") or {}).get("gang")
    if gang is None:
        return None
    count = gang.get("minCount")
    return int(count) if count is not None else max(1, int(spec.get("parallelism", 1)))


def job_objects(job: dict, count: int) -> tuple[dict, dict]:
    """(Workload, PodGroup) the Job controller creates for a gang Job, owned by the Job (the PodGroup
    also references the Workload), as recorded (workloads-with-job.json, podgroups-with-job.json)."""
    meta = job["metadata"]
    owner = {"apiVersion": "batch/v1", "kind": "Job", "name": meta["name"], "uid": meta["uid"],
             "controller": True, "blockOwnerDeletion": True}
    workload_name, template = job_workload_name(meta["name"], meta["uid"]), job_template_name(meta["name"])
    workload = workload_object({
        "metadata": {"name": workload_name, "namespace": meta["namespace"], "ownerReferences": [owner]},
        "spec": {"controllerRef": {"apiGroup": "batch", "kind": "Job", "name": meta["name"]},
                 "podGroupTemplates": [{"name": template, "schedulingPolicy": {"gang": {"minCount": count}},
                                        "schedulingConstraints": None}]}})
    group = pod_group_object({
        "metadata": {"name": pod_group_name(workload_name, template), "namespace": meta["namespace"],
                     "ownerReferences": [owner]},
        "spec": {"workloadRef": {"workloadName": workload_name, "templateName": template},
                 "schedulingPolicy": {"gang": {"minCount": count}}}})
    group["metadata"]["ownerReferences"].append({"apiVersion": API_VERSION, "kind": "Workload",
                                                 "name": workload_name, "uid": workload["metadata"]["uid"]})
    return workload, group
