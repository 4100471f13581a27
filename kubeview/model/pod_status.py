"""What a Pod's status says about its containers, read the one way everything reads it (PURE).

`restarts`: the sum of `containerStatuses[].restartCount`, what `kubectl get pods` shows as RESTARTS
(the model's PodView, the render jobs' consumer counts, the local controllers' deletion order and
the local kubelet's next restart all count it here).
"""

from __future__ import annotations


def restarts(pod: dict) -> int:
    """The pod's container restarts (0 without a status; a missing or null count is 0)."""
    total = 0
    for cs in (pod.get("status") or {}).get("containerStatuses") or ():
        total += int(cs.get("restartCount") or 0)
    return total
