"""The model's autoscaling store (`model.autoscaling`): the objects the autoscalers write, folded in.

Kinds (rows in `ClusterModel.kinds`, optional in every source: absent CRDs, a 403 or no ConfigMap are
one line in `model.unavailable`, never fatal):
- `KARPENTER_NODEPOOL` ("karpenter.NodePool", karpenter.sh/v1 NodePool): limits, status.resources,
  conditions;
- `KARPENTER_NODECLAIM` ("karpenter.NodeClaim", karpenter.sh/v1 NodeClaim): launched / registered /
  initialized conditions, capacity, the nodepool it belongs to;
- `CA_STATUS` ("ca.Status", the ConfigMap kube-system/cluster-autoscaler-status that Cluster
  Autoscaler writes: per node group health, min/max/target size, scale-up state, backoff, errors).
The autoscalers' Events (TriggeredScaleUp, NotTriggerScaleUp, Karpenter's Nominated and
FailedScheduling) come through the model's EventLog (kind "Event"); `pod_wait` reads them there.

The API the views read (`model.autoscaling`): `groups()` (list of `NodeGroup`, sorted by
(autoscaler, name), cached per `version`), `group(key)`, `nodes_of(key[, nodes])` (its node names),
`nodeclaims(pool)` / `nodeclaim(name)` / `claims()` (NodeClaimView, karpenter.py), `problems()` (a CA
status kubeview could not read, one line each), `listed`, `empty`; group words in words.py
(`group_state(group, now)`), a pod's wait in waits.py (`pod_wait`; `ClusterModel.pod_wait(key)` and
`ClusterModel.pod_waits()` wrap it with the model's own Events). Node events come here too
(`put_node`, `delete_node`, `relist_nodes`): a group's size, GPUs and template come from its nodes.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from kubeview.model.allocation import GPU
from kubeview.model.autoscaling.ca_status import STATUS_NAME, CaGroupStatus, CaStatus, status_of
from kubeview.model.autoscaling.groups import (
    CLUSTER_AUTOSCALER,
    EMBEDDED,
    KARPENTER,
    NODES,
    Limit,
    NodeGroup,
    ScaleUp,
)
from kubeview.model.autoscaling.karpenter import NodeClaimView, NodePoolView
from kubeview.model.autoscaling.members import GroupNode

KARPENTER_NODEPOOL = "karpenter.NodePool"
KARPENTER_NODECLAIM = "karpenter.NodeClaim"
CA_STATUS = "ca.Status"
AUTOSCALING_KINDS = (KARPENTER_NODEPOOL, KARPENTER_NODECLAIM, CA_STATUS)
# the embedded cluster's status ConfigMap says it is kubeview's (its groups are EMBEDDED, not CA's)
MANAGED_BY = ("app.kubernetes.io/managed-by", "kubeview")
GroupKey = tuple[str, str]


class AutoscalingStore:
    """NodePools, NodeClaims, CA's status and the nodes, folded into `groups()` (see the module docstring).

    A ManyKinds store (model/kinds.py) for AUTOSCALING_KINDS, plus `put_node` / `delete_node` /
    `relist_nodes` for the Node row (a group's size, GPUs and what one more node offers come from its
    nodes). `version` is bumped on every change; `groups()` is cached per version.
    """

    def __init__(self) -> None:
        self.version = 0
        self.listed: set[str] = set()  # kinds listed at least once (served, readable)
        self._pools: dict[str, NodePoolView] = {}
        self._claims: dict[str, NodeClaimView] = {}
        self._ca: dict[tuple[str, str], tuple[str, CaStatus]] = {}  # (ns, name) -> (autoscaler, status)
        self._nodes: dict[str, GroupNode] = {}
        self._nodes_listed = False
        self._groups: list[NodeGroup] = []
        self._members: dict[GroupKey, list[str]] = {}
        self._groups_version = -1

    # -- the kinds ---------------------------------------------------------------------------------
    def put(self, kind: str, obj: dict) -> bool:
        meta = obj.get("metadata") or {}
        if kind == KARPENTER_NODEPOOL:
            return self._set(self._pools, str(meta.get("name") or ""), NodePoolView.from_api(obj))
        if kind == KARPENTER_NODECLAIM:
            return self._set(self._claims, str(meta.get("name") or ""), NodeClaimView.from_api(obj))
        if kind == CA_STATUS:
            if meta.get("name") != STATUS_NAME:
                return False
            labels = meta.get("labels") or {}
            who = EMBEDDED if labels.get(MANAGED_BY[0]) == MANAGED_BY[1] else CLUSTER_AUTOSCALER
            key = (str(meta.get("namespace") or ""), STATUS_NAME)
            return self._set(self._ca, key, (who, status_of(obj)))
        return False

    def delete(self, kind: str, obj: dict) -> bool:
        meta = obj.get("metadata") or {}
        name = str(meta.get("name") or "")
        if kind not in AUTOSCALING_KINDS:
            return False
        key: object = name if kind != CA_STATUS else (str(meta.get("namespace") or ""), name)
        if self._table(kind).pop(key, None) is None:
            return False
        self.version += 1
        return True

    def replace(self, kind: str, objects: Iterable[dict]) -> object:
        if kind not in AUTOSCALING_KINDS:
            return None
        self.listed.add(kind)
        self._table(kind).clear()
        for obj in objects:
            self.put(kind, obj)
        self.version += 1
        return None

    def _table(self, kind: str) -> dict:
        if kind == KARPENTER_NODEPOOL:
            return self._pools
        return self._claims if kind == KARPENTER_NODECLAIM else self._ca

    def put_node(self, obj: dict) -> bool:
        return self._set(self._nodes, str((obj.get("metadata") or {}).get("name") or ""), GroupNode.from_api(obj))

    def delete_node(self, obj: dict) -> bool:
        if self._nodes.pop(str((obj.get("metadata") or {}).get("name") or ""), None) is None:
            return False
        self.version += 1
        return True

    def relist_nodes(self, objects: list[dict]) -> None:
        self._nodes = {n.name: n for n in map(GroupNode.from_api, objects)}
        self._nodes_listed = True
        self.version += 1

    def _set(self, table: dict, key: object, value: object) -> bool:
        if not key or table.get(key) == value:
            return False
        table[key] = value
        self.version += 1
        return True

    # -- reads -------------------------------------------------------------------------------------
    @property
    def empty(self) -> bool:
        """No autoscaler object at all (nothing to show, nothing a pod could wait on)."""
        return not (self._pools or self._ca)

    def groups(self) -> list[NodeGroup]:
        """Every node group, sorted by (autoscaler, name); cached per version."""
        if self._groups_version != self.version:
            self._groups, self._members = self._build()
            self._groups_version = self.version
        return self._groups

    def group(self, key: GroupKey) -> NodeGroup | None:
        return next((g for g in self.groups() if g.key == key), None)

    def nodes_of(self, key: GroupKey, nodes: Mapping[str, object] | None = None) -> list[str]:
        """The names of the group's nodes (only those in `nodes`, when given), sorted."""
        self.groups()
        names = self._members.get(key, [])
        return [n for n in names if n in nodes] if nodes is not None else list(names)

    def nodeclaims(self, pool: str) -> list[NodeClaimView]:
        """The NodePool's NodeClaims, by name."""
        return sorted((c for c in self._claims.values() if c.pool == pool), key=lambda c: c.name)

    def nodeclaim(self, name: str) -> NodeClaimView | None:
        return self._claims.get(name)

    def claims(self) -> Mapping[str, NodeClaimView] | None:
        """The NodeClaims by name, or None when kubeview does not read them (no Karpenter, or refused)."""
        return self._claims if (KARPENTER_NODECLAIM in self.listed or self._claims) else None

    def problems(self) -> list[str]:
        """What could not be read of what was listed (a CA status in neither format), one line each."""
        return [f"{ns}/{name}: {status.problem}" for (ns, name), (_, status) in sorted(self._ca.items())
                if status.problem]

    def _build(self) -> tuple[list[NodeGroup], dict[GroupKey, list[str]]]:
        by_pool: dict[str, list[GroupNode]] = {}
        ca_names = {g.name for _, status in self._ca.values() for g in status.groups}
        by_ca: dict[str, list[GroupNode]] = {}
        for node in sorted(self._nodes.values(), key=lambda n: n.name):
            if node.pool:
                by_pool.setdefault(node.pool, []).append(node)
            if ca_names:
                for name in node.ca_names() & ca_names:
                    by_ca.setdefault(name, []).append(node)
        claims: dict[str, list[NodeClaimView]] = {}
        for claim in self._claims.values():
            claims.setdefault(claim.pool, []).append(claim)
        known = self._nodes_listed or bool(self._nodes)
        groups = [pool_group(p, claims.get(p.name, []), by_pool.get(p.name, []), known,
                             KARPENTER_NODECLAIM in self.listed or bool(self._claims))
                  for p in self._pools.values()]
        for who, status in self._ca.values():
            groups.extend(ca_group(who, g, by_ca.get(g.name, [])) for g in status.groups)
        groups.sort(key=lambda g: g.key)
        members = {g.key: [n.name for n in (by_pool if g.autoscaler == KARPENTER else by_ca).get(g.name, [])]
                   for g in groups}
        return groups, members


def pool_group(pool: NodePoolView, claims: list[NodeClaimView], nodes: list[GroupNode], nodes_known: bool,
               claims_known: bool) -> NodeGroup:
    """A NodePool as a node group: its nodes, its limits against status.resources, its NodeClaims on their way."""
    size = len(nodes) if nodes_known else (pool.nodes if pool.nodes is not None else pool.resources.get(NODES, 0))
    live = sorted((c for c in claims if not c.deleting), key=lambda c: c.name)
    coming = [c for c in live if c.stage in ("launching", "registering")]
    scale_up = None
    if coming:
        since = min((c.created for c in coming if c.created is not None), default=None)
        scale_up = ScaleUp(size, size + len(coming), since)
    limits = tuple(Limit(res, pool.resources.get(res, size if res == NODES else 0), lim)
                   for res, lim in sorted(pool.limits.items()))
    failed = [(f.since or 0.0, c, f) for c in live if (f := c.failure) is not None]
    error = error_at = None
    if failed:
        _, claim, cond = max(failed, key=lambda t: (t[0], t[1].name))
        error, error_at = cond.message or cond.reason, cond.since
    registration = pool.conditions.get("NodeRegistrationHealthy")
    if error is None and registration is not None and registration.status == "False":
        error, error_at = registration.message or registration.reason, registration.since
    ready = pool.conditions.get("Ready")
    health = "" if ready is None else "Ready" if ready.status == "True" else (ready.reason or "NotReady")
    template = nodes[0].template() if nodes else next(
        (c.allocatable or c.capacity for c in live if c.allocatable or c.capacity), None)
    gpus = sum(n.gpus for n in nodes) if nodes_known else pool.resources.get(GPU, 0)
    return NodeGroup(autoscaler=KARPENTER, name=pool.name, size=size, max_size=pool.limits.get(NODES),
                     target=len(live) if claims_known else None, limits=limits, scale_up=scale_up,
                     error=error, error_at=error_at, health=health, gpus=gpus, node_labels=dict(pool.labels),
                     taints=pool.taints, template=template)


def ca_group(who: str, g: CaGroupStatus, nodes: list[GroupNode]) -> NodeGroup:
    """A node group of CA's status, with what its nodes (when kubeview can tell them) carry and offer."""
    target = g.target
    scale_up = None
    if g.scale_up == "InProgress" and target is not None:
        scale_up = ScaleUp(g.registered if target > g.registered else g.ready, target, g.scale_up_since)
    backoff = error = None
    if g.scale_up == "Backoff":
        error = g.error_message or g.error_code or None
        backoff = error or "backing off after a failed scale-up"
    limits = () if g.max_size is None else (Limit(NODES, max(g.registered, target or 0), g.max_size),)
    first = nodes[0] if nodes else None
    return NodeGroup(autoscaler=who, name=g.name, size=g.registered, min_size=g.min_size, max_size=g.max_size,
                     target=target, limits=limits, scale_up=scale_up, backoff=backoff, error=error,
                     error_at=g.scale_up_since if error else None, health=g.health,
                     gpus=sum(n.gpus for n in nodes), node_labels=first.group_labels() if first else {},
                     taints=first.taints if first else (), template=first.template() if first else None)
