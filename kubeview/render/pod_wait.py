"""Why a render pod is not running yet, in the cluster's own words (pure).

On a live control plane a render's pods were bound but never started and kubeview said nothing,
forever. Each reason here comes from the pod object: the scheduler's condition, a container's
waiting reason, or, when the kubelet has not reported at all, how long ago the pod was bound; and
the pod's latest Warning Event is added when it says more (a FailedMount, an image pull failure,
a FailedCreatePodSandBox the pod's status does not show).
"""

from __future__ import annotations

import re
from datetime import datetime

from kubeview.model.kube_events import EventView, human_duration

_AGE = re.compile(r"\d+ s ago|\(x\d+ over [0-9a-z]+\)")  # ages that move while the reason stands


def _seconds_since(stamp: str | None, now: float) -> int | None:
    if not stamp:
        return None
    try:
        return max(0, int(now - datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()))
    except ValueError:
        return None


def pod_waiting(pod: dict, now: float) -> str | None:
    """None if the pod's containers run; else one phrase (`now` is time.time())."""
    status = pod.get("status") or {}
    spec = pod.get("spec") or {}
    containers = (status.get("initContainerStatuses") or []) + (status.get("containerStatuses") or [])
    if status.get("phase") == "Running" and any("running" in (c.get("state") or {}) for c in containers):
        return None
    if status.get("phase") in ("Succeeded", "Failed"):
        return f"{status['phase']}"
    scheduled = next((c for c in status.get("conditions") or [] if c.get("type") == "PodScheduled"), None)
    node = spec.get("nodeName")
    if not node:
        if scheduled is not None and scheduled.get("status") == "False":
            return f"{scheduled.get('reason') or 'Unschedulable'}: {scheduled.get('message') or 'no node fits'}"
        return "not scheduled yet"
    for c in containers:
        waiting = (c.get("state") or {}).get("waiting")
        if waiting is not None:
            reason, message = waiting.get("reason") or "Waiting", waiting.get("message")
            return f"{reason}: {message}" if message else str(reason)
    if not containers:  # bound, but the node's kubelet never wrote a status
        since = (scheduled or {}).get("lastTransitionTime") or (pod.get("metadata") or {}).get("creationTimestamp")
        age = _seconds_since(since, now)
        ago = f" {age} s ago" if age is not None else ""
        return f"bound to {node}{ago}, no status from its kubelet"
    return f"{status.get('phase') or 'Pending'} on {node}"


def same_reason(a: str, b: str) -> bool:
    """Equal but for the ages in "bound to N 12 s ago" and "(x3 over 2m)" (headless prints a reason again
    only if it changed)."""
    return _AGE.sub("", a) == _AGE.sub("", b)


def with_event(reason: str, warning: EventView | None, now: float) -> str:
    """`reason`, and the latest Warning Event when its message is not already in it:
    `bound to n1 40 s ago, no status from its kubelet; FailedMount (x3 over 2m): MountVolume...`."""
    if warning is None or not warning.message or warning.message in reason:
        return reason
    seen = f" (x{warning.count} over {human_duration(now - warning.first)})" if warning.count > 1 and warning.first \
        else ""
    return f"{reason}; {warning.reason}{seen}: {warning.message}"
