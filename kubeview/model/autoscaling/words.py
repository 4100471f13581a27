"""How a node group's state reads, in the words every view shares (the issue's: "node group gpu-pool
scaling 6 → 38 (in progress, 2 min)", "gpu-pool is at its maximum 6", "NodePool gpu at its limit
nvidia.com/gpu 48/48", "scale-up failed: <the cloud's words>"). Pure.
"""

from __future__ import annotations

from kubeview.model.autoscaling.groups import KARPENTER, NODES, Limit, NodeGroup

# NodeGroup states, one word each (snapshot's `state`, the Capacity screen's column)
SCALING, AT_MAX, AT_LIMIT, FAILED, BACKOFF, STEADY = "scaling", "at-max", "at-limit", "failed", "backoff", "steady"
GROUP_STATES = (SCALING, AT_MAX, AT_LIMIT, FAILED, BACKOFF, STEADY)


def age_words(seconds: float | None) -> str:
    """"40 s", "2 min", "1 h 5 min" ("" when unknown)."""
    if seconds is None:
        return ""
    s = max(0, int(seconds))
    if s < 60:
        return f"{s} s"
    if s < 3600:
        return f"{s // 60} min"
    hours, minutes = divmod(s // 60, 60)
    return f"{hours} h {minutes} min" if minutes and hours < 10 else f"{hours} h"


def quantity(resource: str, value: int) -> str:
    """An amount of `resource` as a person writes it in a limit: cpu in cores, bytes with a binary suffix."""
    if resource == "cpu":
        return f"{value / 1000:g}"
    if resource in ("memory", "ephemeral-storage") or resource.startswith("hugepages-"):
        for suffix, size in (("Ti", 2**40), ("Gi", 2**30), ("Mi", 2**20), ("Ki", 2**10)):
            if value >= size:
                return f"{value / size:.4g}{suffix}"
        return str(value)
    return str(value)


def limit_words(limit: Limit) -> str:
    """"nvidia.com/gpu 48/48"."""
    return f"{limit.resource} {quantity(limit.resource, limit.used)}/{quantity(limit.resource, limit.limit)}"


def what(group: NodeGroup) -> str:
    """"NodePool gpu" or "node group gpu-pool"."""
    return f"NodePool {group.name}" if group.autoscaler == KARPENTER else f"node group {group.name}"


def nearest_limit(group: NodeGroup) -> Limit | None:
    """The limit it has reached, else the one most used (what stops one more node first)."""
    reached = group.at_limit
    if reached is not None or not group.limits:
        return reached
    return max(group.limits, key=lambda lim: (lim.used / lim.limit if lim.limit else 1.0))


def group_state(group: NodeGroup, now: float) -> tuple[str, str]:
    """(one of GROUP_STATES, its words): a failure with the cloud's words first, then a scale-up under
    way, then a reached maximum or limit, then a backoff without words."""
    if group.error and (group.backoff or group.autoscaler == KARPENTER):
        return FAILED, f"scale-up failed: {group.error}"
    if group.scale_up is not None:
        up = group.scale_up
        age = age_words(None if up.since is None else now - up.since)
        return SCALING, f"{what(group)} scaling {up.from_size} → {up.to_size} (in progress{', ' + age if age else ''})"
    reached = group.at_limit
    if reached is not None:
        if reached.resource == NODES and group.autoscaler != KARPENTER:
            return AT_MAX, f"{group.name} is at its maximum {reached.limit}"
        return AT_LIMIT, f"{what(group)} at its limit {limit_words(reached)}"
    if group.backoff:
        return BACKOFF, f"{group.name} is backing off after a failed scale-up"
    return STEADY, f"{what(group)}: {group.size} node{'s' * (group.size != 1)}"


def nodes_it_can_add(group: NodeGroup) -> int | None:
    """Nodes it can still add: by its max size (CA's, or a NodePool's `nodes` limit), and by each other
    limit one more node of its template counts against (a NodePool's cpu, memory, GPUs; Karpenter
    drops an instance type that would pass one). None: nothing bounds it that kubeview knows."""
    bounds = []
    if group.max_size is not None:
        bounds.append(max(0, group.max_size - max(group.size, group.target or 0)))
    for lim in group.limits:
        if lim.resource == NODES:
            if group.max_size is None:
                bounds.append(max(0, lim.limit - lim.used))
            continue
        per = (group.template or {}).get(lim.resource, 0)
        if per > 0:
            bounds.append(max(0, (lim.limit - lim.used) // per))
    return min(bounds) if bounds else None
