"""API-shaped objects for the local cluster: Nodes, Pods, ReplicaSets, Deployments, as dicts.

Shapes follow what kube-apiserver v1.36 returns (see tests/fixtures/k8s): list items have no
kind/apiVersion, watch objects do; a bound pod has `spec.nodeName` and `PodScheduled=True`; a running
pod has containerStatuses with restartCount. Functions here build or transform objects and never
touch processes or threads; each returns a fresh dict, so an emitted object is never mutated later.
"""

from __future__ import annotations

import copy
import hashlib
import json
import random
import time
import uuid
from typing import Literal

from kubeview.cluster.local.config import NodeSpec, SystemWorkload
from kubeview.model.pod_status import restarts as pod_restarts

API_VERSIONS = {"Node": "v1", "Pod": "v1", "ReplicaSet": "apps/v1", "Deployment": "apps/v1", "Event": "v1",
                "Job": "batch/v1", "DeviceClass": "resource.k8s.io/v1", "ResourceSlice": "resource.k8s.io/v1",
                "ResourceClaim": "resource.k8s.io/v1", "Workload": "scheduling.k8s.io/v1beta1",
                "PodGroup": "scheduling.k8s.io/v1beta1", "ConfigMap": "v1", "ca.Status": "v1",
                "ResourceQuota": "v1"}
API_KINDS = {"ca.Status": "ConfigMap"}  # watch kinds that name one object of an API kind (model/autoscaling)
_ALPHANUMS = "bcdfghjklmnpqrstvwxz2456789"  # k8s utilrand: no vowels, no confusable digits
GPU = "nvidia.com/gpu"
KUBELET_VERSION = "v1.36.2"
Change = Literal["ADDED", "MODIFIED", "DELETED"]  # a write, named as its watch event names it


def timestamp(t: float | None = None) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() if t is None else t))


def suffix(rng: random.Random, n: int = 5) -> str:
    return "".join(rng.choice(_ALPHANUMS) for _ in range(n))


def template_hash(template: dict) -> str:
    """A stable pod-template-hash label value (the Deployment controller's role for it)."""
    digest = hashlib.sha256(json.dumps(template, sort_keys=True).encode()).hexdigest()
    return "".join(_ALPHANUMS[int(digest[i : i + 2], 16) % len(_ALPHANUMS)] for i in range(0, 20, 2))


def with_kind(kind: str, obj: dict) -> dict:
    """The object as a watch event carries it: kind and apiVersion first."""
    return {"kind": API_KINDS.get(kind, kind), "apiVersion": API_VERSIONS[kind], **obj}


def metadata(name: str, namespace: str | None = None, labels: dict | None = None,
             owner: dict | None = None, generate_name: str | None = None) -> dict:
    meta: dict = {"name": name}
    if generate_name:
        meta["generateName"] = generate_name
    if namespace is not None:
        meta["namespace"] = namespace
    meta.update({"uid": str(uuid.uuid4()), "resourceVersion": "0", "creationTimestamp": timestamp()})
    if labels:
        meta["labels"] = dict(labels)
    if owner:
        meta["ownerReferences"] = [{
            "apiVersion": API_VERSIONS.get(owner["kind"], "v1"), "kind": owner["kind"], "name": owner["name"],
            "uid": owner["uid"], "controller": True, "blockOwnerDeletion": True,
        }]
    return meta


def owner_ref(kind: str, obj: dict) -> dict:
    return {"kind": kind, "name": obj["metadata"]["name"], "uid": obj["metadata"]["uid"]}


# --- nodes -------------------------------------------------------------------------------------

def node_object(spec: NodeSpec, index: int) -> dict:
    now = timestamp()
    labels = {
        "beta.kubernetes.io/arch": "amd64", "beta.kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64",
        "kubernetes.io/hostname": spec.name, "kubernetes.io/os": "linux",
    }
    if spec.control_plane:
        labels["node-role.kubernetes.io/control-plane"] = ""
    labels.update(spec.labels)
    meta = metadata(spec.name, labels=labels)
    meta["annotations"] = {"node.alpha.kubernetes.io/ttl": "0"}

    def cond(kind: str, status: str, reason: str, message: str) -> dict:
        return {"type": kind, "status": status, "lastHeartbeatTime": now, "lastTransitionTime": now,
                "reason": reason, "message": message}

    return {
        "metadata": meta,
        "spec": {"taints": [dict(t) for t in spec.taints]} if spec.taints else {},
        "status": {
            "capacity": dict(spec.capacity),
            "allocatable": dict(spec.allocatable),
            "conditions": [
                cond("MemoryPressure", "False", "KubeletHasSufficientMemory", "kubelet has sufficient memory available"),
                cond("DiskPressure", "False", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
                cond("PIDPressure", "False", "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
                cond("Ready", "True", "KubeletReady", "kubelet is posting ready status (kubeview local cluster)"),
            ],
            "addresses": [{"type": "InternalIP", "address": f"192.0.2.{11 + index}"},
                          {"type": "Hostname", "address": spec.name}],
            "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
            "nodeInfo": {"kernelVersion": "", "osImage": "kubeview local cluster",
                         "containerRuntimeVersion": "kubeview-local://processes", "kubeletVersion": KUBELET_VERSION,
                         "operatingSystem": "linux", "architecture": "amd64"},
        },
    }


def node_ip(node: dict) -> str:
    for addr in node.get("status", {}).get("addresses", []):
        if addr.get("type") == "InternalIP":
            return addr["address"]
    return ""


# --- pods --------------------------------------------------------------------------------------

def container(name: str, image: str, requests: dict | None = None, limits: dict | None = None,
              command: list[str] | None = None) -> dict:
    c: dict = {"name": name, "image": image}
    if command:
        c["command"] = list(command)
    c["resources"] = {k: dict(v) for k, v in (("requests", requests), ("limits", limits)) if v}
    c.update({"terminationMessagePath": "/dev/termination-log", "terminationMessagePolicy": "File",
              "imagePullPolicy": "IfNotPresent"})
    return c


def pod_spec(containers: list[dict], **extra: object) -> dict:
    spec: dict = {"containers": containers, "restartPolicy": "Always", "terminationGracePeriodSeconds": 30,
                  "dnsPolicy": "ClusterFirst", "serviceAccountName": "default", "serviceAccount": "default",
                  "securityContext": {}, "schedulerName": "default-scheduler"}
    spec.update({k: v for k, v in extra.items() if v})
    return spec


def qos_class(spec: dict) -> str:
    containers = spec.get("containers") or []
    res = [c.get("resources") or {} for c in containers]
    if not any(r.get("requests") or r.get("limits") for r in res):
        return "BestEffort"
    guaranteed = all(
        (r.get("limits") or {}).get(k) and (r.get("requests") or {}).get(k, r["limits"][k]) == r["limits"][k]
        for r in res for k in ("cpu", "memory")
    )
    return "Guaranteed" if guaranteed else "Burstable"


def admit_pod(obj: dict, namespace: str | None = None) -> dict:
    """What apiserver admission does to a created pod: defaults, the ExtendedResourceToleration plugin,
    the default not-ready/unreachable tolerations, status Pending."""
    pod = copy.deepcopy(obj)
    pod.pop("kind", None)
    pod.pop("apiVersion", None)
    meta = pod.setdefault("metadata", {})
    meta["namespace"] = meta.get("namespace") or namespace or "default"
    meta.setdefault("uid", str(uuid.uuid4()))
    meta.setdefault("creationTimestamp", timestamp())
    spec = pod.setdefault("spec", {})
    for key, value in pod_spec([]).items():
        if key != "containers":
            spec.setdefault(key, value)
    for c in [*(spec.get("initContainers") or []), *(spec.get("containers") or [])]:
        resources = c.setdefault("resources", {})
        limits = resources.get("limits") or {}
        if limits:  # as the apiserver's defaulting: each limit without a request becomes the request
            resources["requests"] = {**limits, **(resources.get("requests") or {})}
    tolerations = list(spec.get("tolerations") or [])
    extended = sorted({name for c in spec.get("containers") or [] for name in
                       (c.get("resources", {}).get("requests") or {}) if "/" in name})
    for name in extended:
        tol = {"key": name, "operator": "Exists", "effect": "NoSchedule"}
        if tol not in tolerations:
            tolerations.append(tol)
    for key in ("node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable"):
        if not any(t.get("key") == key for t in tolerations):
            tolerations.append({"key": key, "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300})
    spec["tolerations"] = tolerations
    spec.setdefault("priority", 0)
    spec.setdefault("enableServiceLinks", True)
    spec.setdefault("preemptionPolicy", "PreemptLowerPriority")
    pod["status"] = {"phase": "Pending", "qosClass": qos_class(spec)}
    return pod


def _set_condition(status: dict, kind: str, value: str, now: str, reason: str | None = None,
                   message: str | None = None) -> None:
    conds = [c for c in status.get("conditions") or [] if c.get("type") != kind]
    old = next((c for c in status.get("conditions") or [] if c.get("type") == kind), None)
    cond = {"type": kind, "status": value, "lastProbeTime": None,
            "lastTransitionTime": old["lastTransitionTime"] if old and old["status"] == value else now}
    if reason:
        cond["reason"] = reason
    if message:
        cond["message"] = message
    conds.append(cond)
    order = ("PodReadyToStartContainers", "Initialized", "Ready", "ContainersReady", "PodScheduled")
    conds.sort(key=lambda c: order.index(c["type"]) if c["type"] in order else len(order))
    status["conditions"] = conds


def bound(pod: dict, node: str) -> dict:
    """The scheduler's Binding: spec.nodeName and PodScheduled=True."""
    out = copy.deepcopy(pod)
    out["spec"]["nodeName"] = node
    _set_condition(out["status"], "PodScheduled", "True", timestamp())
    return out


def unschedulable(pod: dict, message: str) -> dict:
    out = copy.deepcopy(pod)
    _set_condition(out["status"], "PodScheduled", "False", timestamp(), "Unschedulable", message)
    return out


def container_state(pod: dict, state: dict, ready: bool, restarts: int, last_state: dict | None = None,
                    host_ip: str = "", pod_ip: str = "", phase: str | None = None) -> dict:
    """The kubelet's status update: one state for every container (local pods run one process)."""
    out = copy.deepcopy(pod)
    status, now = out["status"], timestamp()
    running = "running" in state
    if phase:
        status["phase"] = phase
    elif running:
        status["phase"] = "Running"
    for kind in ("PodReadyToStartContainers", "Initialized"):
        _set_condition(status, kind, "True", now)
    for kind in ("Ready", "ContainersReady"):
        _set_condition(status, kind, "True" if ready else "False", now,
                       None if ready else ("PodCompleted" if status["phase"] in ("Succeeded", "Failed")
                                           else "ContainersNotReady"))
    if host_ip:
        status["hostIP"], status["hostIPs"] = host_ip, [{"ip": host_ip}]
    if pod_ip:
        status["podIP"], status["podIPs"] = pod_ip, [{"ip": pod_ip}]
    status.setdefault("startTime", now)
    old = {c["name"]: c for c in status.get("containerStatuses") or []}
    statuses = []
    for c in out["spec"].get("containers") or []:
        prev = old.get(c["name"], {})
        statuses.append({
            "name": c["name"], "state": copy.deepcopy(state),
            "lastState": copy.deepcopy(last_state if last_state is not None else prev.get("lastState", {})),
            "ready": ready, "restartCount": restarts, "image": c.get("image", ""), "imageID": "",
            "containerID": prev.get("containerID") or f"kubeview-local://{out['metadata']['uid']}",
            "started": running,
        })
    status["containerStatuses"] = statuses
    return out


def terminated_state(exit_code: int, started: str, reason: str | None = None) -> dict:
    return {"terminated": {"exitCode": exit_code, "reason": reason or ("Completed" if exit_code == 0 else "Error"),
                           "startedAt": started, "finishedAt": timestamp()}}


def deleting(pod: dict, grace: int) -> dict:
    out = copy.deepcopy(pod)
    out["metadata"]["deletionTimestamp"] = timestamp(time.time() + grace)
    out["metadata"]["deletionGracePeriodSeconds"] = grace
    return out


def pod_from_template(owner_kind: str, owner: dict, template: dict, rng: random.Random) -> dict:
    name = owner["metadata"]["name"]
    tmeta = template.get("metadata") or {}
    pod = {"metadata": metadata(f"{name}-{suffix(rng)}", owner["metadata"].get("namespace"),
                                labels=tmeta.get("labels"), owner=owner_ref(owner_kind, owner),
                                generate_name=f"{name}-"),
           "spec": copy.deepcopy(template.get("spec") or {})}
    if tmeta.get("annotations"):
        pod["metadata"]["annotations"] = dict(tmeta["annotations"])
    return admit_pod(pod)


# --- workloads ---------------------------------------------------------------------------------

def normalize_workload(kind: str, obj: dict) -> dict:
    """A user's ReplicaSet/Deployment manifest as the apiserver stores it (defaults, generation)."""
    out = copy.deepcopy(obj)
    out.pop("kind", None)
    out.pop("apiVersion", None)
    meta = out.setdefault("metadata", {})
    meta.setdefault("namespace", "default")
    meta.setdefault("uid", str(uuid.uuid4()))
    meta.setdefault("creationTimestamp", timestamp())
    meta["generation"] = int(meta.get("generation", 0)) + 1
    spec = out.setdefault("spec", {})
    spec.setdefault("replicas", 1)
    template = spec.setdefault("template", {})
    labels = (template.setdefault("metadata", {})).setdefault("labels", {"app": meta["name"]})
    spec.setdefault("selector", {"matchLabels": dict(labels)})
    tspec = template.setdefault("spec", {})
    for key, value in pod_spec([]).items():
        if key not in ("containers", "serviceAccountName", "serviceAccount"):
            tspec.setdefault(key, value)
    if kind == "Deployment":
        spec.setdefault("strategy", {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "25%",
                                                                                 "maxSurge": "25%"}})
        spec.setdefault("revisionHistoryLimit", 10)
        spec.setdefault("progressDeadlineSeconds", 600)
    out.setdefault("status", {})
    return out


def system_container(w: SystemWorkload) -> dict:
    return container(w.name, w.image, w.requests or None, w.limits or None)


def daemon_pod(w: SystemWorkload, node: str, owner: dict, rng: random.Random) -> dict:
    """A DaemonSet's pod, created bound to its node, as the DaemonSet controller creates it."""
    pod = {"metadata": metadata(f"{w.name}-{suffix(rng)}", w.namespace, labels={"k8s-app": w.name},
                                owner=owner, generate_name=f"{w.name}-"),
           "spec": pod_spec([system_container(w)], nodeName=node, nodeSelector=w.node_selector,
                            tolerations=list(w.tolerations), priorityClassName="system-node-critical",
                            priority=2000001000, affinity={"nodeAffinity": {
                                "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
                                    {"matchFields": [{"key": "metadata.name", "operator": "In",
                                                      "values": [node]}]}]}}})}
    return bound(admit_pod(pod), node)


def static_pod(w: SystemWorkload, node: dict) -> dict:
    """A control-plane static pod's mirror pod: named NAME-NODE, owned by the Node."""
    name = node["metadata"]["name"]
    pod = {"metadata": metadata(f"{w.name}-{name}", w.namespace, labels={"component": w.name, "tier": "control-plane"},
                                owner=owner_ref("Node", node)),
           "spec": pod_spec([system_container(w)], nodeName=name, priorityClassName="system-node-critical",
                            priority=2000001000, hostNetwork=True,
                            tolerations=[{"operator": "Exists", "effect": "NoExecute"}])}
    pod["metadata"]["annotations"] = {"kubernetes.io/config.source": "file", "kubernetes.io/config.mirror": "local"}
    return bound(admit_pod(pod), name)


def system_deployment(w: SystemWorkload) -> dict:
    labels = {"k8s-app": w.name}
    return normalize_workload("Deployment", {
        "metadata": {"name": w.name, "namespace": w.namespace, "labels": labels},
        "spec": {"replicas": w.replicas, "selector": {"matchLabels": labels},
                 "template": {"metadata": {"labels": labels},
                              "spec": pod_spec([system_container(w)], nodeSelector=w.node_selector,
                                               tolerations=list(w.tolerations),
                                               priorityClassName="system-cluster-critical", priority=2000000000)}},
    })


def disrupted(pod: dict, reason: str, message: str, exit_code: int = 137) -> dict:
    """A pod killed with its node: Failed, `DisruptionTarget=True` (as the kubelet's node-shutdown
    manager writes it: reason `TerminationByKubelet`), its container terminated."""
    out = container_state(pod, terminated_state(exit_code, started_at(pod)), False, pod_restarts(pod), phase="Failed")
    status, now = out["status"], timestamp()
    _set_condition(status, "DisruptionTarget", "True", now, reason, message)
    status["reason"], status["message"] = "Terminated", message
    return out


def started_at(pod: dict) -> str:
    """When the running container started (now, if none runs): the terminated state's `startedAt`."""
    for cs in (pod.get("status") or {}).get("containerStatuses") or []:
        running = (cs.get("state") or {}).get("running")
        if running:
            return running.get("startedAt", "")
    return timestamp()
