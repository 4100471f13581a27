"""The vocabulary every view shares: a node group (CA node group or Karpenter NodePool) and a pod's wait.

Amounts are in model units (model/quantity.py: millicores for cpu, plain units otherwise); "nodes"
is the resource name of a node-count limit (a CA group's max size).
"""

from __future__ import annotations

from dataclasses import dataclass, field

KARPENTER = "karpenter"
CLUSTER_AUTOSCALER = "cluster-autoscaler"
EMBEDDED = "embedded"  # the local cluster's own node groups (they write in CA's formats)
NODES = "nodes"

# PodWait.state: what a Pending pod waits for
WAIT_ROOM = "room"  # room on nodes that exist (or no autoscaler says anything about it)
WAIT_NODES = "nodes"  # a node an autoscaler is adding for it (scale-up in progress, NodeClaim launched)
WAIT_NEVER = "never"  # nothing that will come: its group at max / at a limit / failing, or no group fits
WAIT_STATES = (WAIT_ROOM, WAIT_NODES, WAIT_NEVER)


@dataclass(frozen=True, slots=True)
class Limit:
    resource: str  # "cpu", "memory", "nvidia.com/gpu", ... or NODES
    used: int
    limit: int

    @property
    def reached(self) -> bool:
        return self.used >= self.limit


@dataclass(frozen=True, slots=True)
class ScaleUp:
    from_size: int
    to_size: int
    since: float | None  # epoch seconds; None when the autoscaler did not say


@dataclass(frozen=True, slots=True)
class NodeGroup:
    autoscaler: str  # KARPENTER, CLUSTER_AUTOSCALER or EMBEDDED
    name: str
    size: int  # nodes it has now (registered)
    min_size: int | None = None
    max_size: int | None = None
    target: int | None = None  # the size it is moving to (CA's target; Karpenter: NodeClaims)
    limits: tuple[Limit, ...] = ()  # NodePool limits, or a CA group's max size as Limit(NODES, ...)
    scale_up: ScaleUp | None = None
    backoff: str | None = None  # the autoscaler's words while it backs off; None when it does not
    error: str | None = None  # the last error, in the autoscaler's (or the cloud's) words
    error_at: float | None = None
    health: str = ""  # as the autoscaler says: "Healthy", "Unhealthy", "Ready", ...
    gpus: int = 0  # GPUs on its nodes now
    node_labels: dict[str, str] = field(default_factory=dict)  # labels its nodes carry
    taints: tuple[dict, ...] = ()  # taints its nodes carry (a member node's, or the NodePool template's)
    template: dict[str, int] | None = None  # what one more node would offer (None: unknown)

    @property
    def key(self) -> tuple[str, str]:
        return (self.autoscaler, self.name)

    @property
    def at_limit(self) -> Limit | None:
        """The first limit it has reached (a group at its max size included), or None."""
        for limit in self.limits:
            if limit.reached:
                return limit
        return None

    @property
    def can_add(self) -> int | None:
        """Nodes it can still add by its max size (None: no max size known)."""
        if self.max_size is None:
            return None
        return max(0, self.max_size - max(self.size, self.target or 0))


@dataclass(frozen=True, slots=True)
class PodWait:
    state: str  # one of WAIT_STATES
    words: str  # one line, as the Pods table's reason shows it
    group: tuple[str, str] | None = None  # the NodeGroup.key it waits on
    detail: str | None = None  # the autoscaler's own words (event message, status line), uncut
    since: float | None = None
