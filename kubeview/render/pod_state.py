"""The state of a render's pods and workloads, read from their API objects (pure: no I/O).

Which component a pod is, whether it is running or Ready, how often it restarted, and why it cannot
start, as the cluster says it; `KubeRenderJob` (render/kube.py) reads its pods through these.
"""

from __future__ import annotations

from kubeview.model.pod_status import restarts

# Waiting reasons that do not go away without someone changing something.
STUCK = {"ImagePullBackOff", "ErrImagePull", "InvalidImageName", "CreateContainerConfigError",
         "CreateContainerError", "CrashLoopBackOff", "RunContainerError"}
FATAL_FOR_PRODUCER = STUCK - {"ErrImagePull"}  # ErrImagePull turns into ImagePullBackOff if it persists


def pod_component(pod: dict) -> str:
    return ((pod.get("metadata") or {}).get("labels") or {}).get("app.kubernetes.io/component", "")


def pod_phase(pod: dict) -> str:
    return (pod.get("status") or {}).get("phase", "Pending")


def pod_ready(pod: dict) -> bool:
    return any(c.get("type") == "Ready" and c.get("status") == "True"
               for c in (pod.get("status") or {}).get("conditions") or [])


def pod_running(pod: dict) -> bool:
    statuses = (pod.get("status") or {}).get("containerStatuses") or []
    return pod_phase(pod) == "Running" and any("running" in (c.get("state") or {}) for c in statuses)


def pod_restarts(pod: dict) -> int:
    return restarts(pod)  # one count of restarts for every reader (model/pod_status.py)


def pod_problem(pod: dict) -> str | None:
    """Why a pod is not running, as the cluster says it: the scheduler's message for an unschedulable
    pod, or `Reason: message` of a container stuck waiting (image pulls, crash loops, bad config)."""
    status = pod.get("status") or {}
    for c in status.get("conditions") or []:
        if c.get("type") == "PodScheduled" and c.get("status") == "False":
            return f"{c.get('reason') or 'Unschedulable'}: {c.get('message') or 'no node fits'}"
    for c in (status.get("initContainerStatuses") or []) + (status.get("containerStatuses") or []):
        waiting = (c.get("state") or {}).get("waiting") or {}
        reason = waiting.get("reason")
        if reason in STUCK:
            message = waiting.get("message") or ""
            return f"{reason}: {message}" if message else str(reason)
    return None


def workload_problem(obj: dict) -> str | None:
    """Why a Deployment or ReplicaSet has fewer pods than asked: its `ReplicaFailure` condition (a
    ResourceQuota or LimitRange refusing the pods, a missing ServiceAccount...). Pods that were never
    created cannot say it themselves."""
    for c in (obj.get("status") or {}).get("conditions") or []:
        if c.get("type") == "ReplicaFailure" and c.get("status") == "True":
            return f"{c.get('reason') or 'FailedCreate'}: {c.get('message') or 'pods cannot be created'}"
    return None


def stuck_reason(problem: str | None) -> str | None:
    return problem.split(":", 1)[0] if problem else None



def pod_terminating(pod: dict) -> bool:
    return bool((pod.get("metadata") or {}).get("deletionTimestamp"))
