"""Can a gang be placed now, all or nothing, as kube-scheduler 1.37 places it; and if not, what blocks it.

kube-scheduler's pod-group cycle (`schedule_one_podgroup.go`, `podGroupSchedulingDefaultAlgorithm`)
takes the group's queued pods in order, runs the ordinary filters and scores for each on the snapshot
with the members before it assumed there, skips a member that fits nowhere and goes on, and binds
only if at least minCount members are scheduled (members already bound count); otherwise it binds
none. `fit_gang` does the same with `evaluate` (the one implementation of filters and scores), in the
order the caller gives (kube-scheduler's: priority, then age, then name).

What greedy placement guarantees (tests/scheduling/test_gang_fit_brute.py checks it on seeded random
clusters against a search over every placement):
- every placement it returns is valid (no node over its allocatable, filters respected);
- for members with equal requests and constraints it places as many as any placement could: each
  node takes floor(free / request) of them whatever the order, so `room` and `fits` are exact;
- for unequal members it can miss a placement a search would find (two 2-GPU nodes, members of 1, 1
  and 2 GPUs under `spread`: the 1s go to different nodes and the 2 fits nowhere) — kube-scheduler
  misses it too, so the answer is "would kube-scheduler place it now", not "could any placement".
  Its `room` is never more than the best placement's.

Pure: arrays in, a result out.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Sequence

import numpy as np

from kubeview.model.allocation import GPU, Allocation
from kubeview.model.cluster import ClusterModel
from kubeview.model.gangs.messages import WAITING_APPEAR, member_held, min_count_unsatisfiable
from kubeview.model.gangs.store import Gang
from kubeview.model.views import TERMINAL_PHASES, PodView
from kubeview.scheduling.config import PackingConfig
from kubeview.scheduling.evaluate import CLAIMS, ExtraLoad, Placement, evaluate, fail_where
from kubeview.scheduling.gang_domain import fit_gang_within
from kubeview.scheduling.gang_types import GangFit, MemberFit, amount_text, describe, sizes
from kubeview.scheduling.node_index import index_for

CLAIM_ELSEWHERE = "resourceclaim not available on the node"  # DynamicResources, an allocated claim elsewhere
_DEFAULT, _SHOWN_NODES = PackingConfig(), 6


def fit_gang(alloc: Allocation, members: Sequence[PodView], min_count: int, config: PackingConfig = _DEFAULT,
             assumed: ExtraLoad | None = None, claim_nodes: Collection[str] | None = None, *,
             gang: bool = True) -> GangFit:
    """Place `members` one by one as kube-scheduler's pod-group cycle does; see the module doc.

    Members already bound count as scheduled and stay where they are (their requests are in `alloc`).
    `assumed` is load on top of `alloc` (as for `evaluate`). `claim_nodes`: the group shares
    ResourceClaims (PodGroup `spec.resourceClaims`); None when it does not, else the nodes their
    allocated devices are on (members may go only there), or empty when none is allocated yet (the
    first member's node then holds the devices for all). `gang=False`: pods placed one by one, each
    binding where it fits (a Deployment's replicas): `fits` when min_count of them do, and each
    member's message is its own (no group words)."""
    index = index_for(alloc)
    live = [m for m in members if m.phase not in TERMINAL_PHASES and not m.deleting]
    bound = [m for m in live if m.node is not None]
    queue = [m for m in live if m.node is None]
    extra = _Load(alloc, assumed)
    took: Counter[str] = Counter()
    placed: dict[int, str] = {}  # queue position -> node
    evaluated: dict[int, Placement] = {}
    notes: list[str] = []
    pinned = set(claim_nodes) if claim_nodes else None
    for i, pod in enumerate(queue):
        placement = evaluate(alloc, pod, config, assumed=extra.load(), index=index)
        if claim_nodes is not None and (pinned or placed):
            where = pinned if pinned else set(placed.values())
            placement = fail_where(placement, np.isin(np.asarray(alloc.nodes), list(where)), CLAIM_ELSEWHERE)
        notes.extend(n for n in placement.notes if n not in notes)
        evaluated[i] = placement
        node = placement.best
        if node is not None:
            placed[i] = node
            took[node] += 1
            extra.add(index.row[node], alloc.vector(pod.requests))
    if any((m.affinity or {}).get("podAffinity") or (m.affinity or {}).get("podAntiAffinity") for m in queue):
        notes.append("inter-pod affinity and anti-affinity are not evaluated: members are placed by the node "
                     "filters and scores only")
    if claim_nodes is not None and not claim_nodes:
        notes.append("the group's ResourceClaims are not allocated yet: their devices are not evaluated (CEL); "
                     "members are kept on the node the first one goes to, where the devices would be")
    room = len(bound) + len(placed)
    fits = len(live) > 0 and room >= min_count
    result = GangFit(fits=fits, placement=[], room=room, min_count=min_count, size=len(live), summary="",
                     message=None, notes=tuple(notes))
    stop, message = (len(queue), None) if fits or not gang else _cycle_end(len(bound), queue, placed, min_count)
    result.message = message
    result.members = _members(members, queue, placed, evaluated, message, stop)
    if fits:
        alive = {id(m) for m in live}
        result.placement = [(m.pod, m.node) for m in result.members if m.node is not None and id(m.pod) in alive]
    else:
        _blockers(result, alloc, placed, evaluated, took)
    result.summary = _summary(result, alloc, queue, evaluated, assumed)
    return result


class _Load:
    """The caller's assumed load plus the members placed so far, as one ExtraLoad."""

    def __init__(self, alloc: Allocation, assumed: ExtraLoad | None) -> None:
        self.rows: dict[int, np.ndarray] = {}
        if assumed is not None:
            for r, amounts in zip(assumed.rows.tolist(), assumed.amounts, strict=True):
                self.rows[r] = amounts.astype(np.int64).copy()
        self._cached: ExtraLoad | None = None
        self._dirty = True

    def add(self, row: int, amounts: np.ndarray) -> None:
        self.rows[row] = self.rows[row] + amounts if row in self.rows else amounts.astype(np.int64)
        self._dirty = True

    def load(self) -> ExtraLoad | None:
        if not self.rows:
            return None
        if self._dirty:
            rows = np.fromiter(self.rows, dtype=np.intp, count=len(self.rows))
            self._cached = ExtraLoad(rows, np.stack(list(self.rows.values())))
            self._dirty = False
        return self._cached


def _cycle_end(scheduled: int, queue: list[PodView], placed: dict[int, str], min_count: int) -> tuple[int, str]:
    """Where kube-scheduler's cycle gives up and the group status it ends with: PlacementFeasible stops
    at the member after which minCount is out of reach (scheduled + remaining < minCount)."""
    if scheduled + len(queue) < min_count:
        return -1, WAITING_APPEAR  # PreEnqueue holds every member: too few exist
    done, remaining, stop = scheduled, len(queue), len(queue) - 1
    for i in range(len(queue)):
        remaining -= 1
        done += i in placed
        if remaining + done < min_count:
            stop = i
            break
    return stop, min_count_unsatisfiable(min_count, done, remaining)


def _members(members: Sequence[PodView], queue: list[PodView], placed: dict[int, str],
             evaluated: dict[int, Placement], group: str | None, stop: int) -> list[MemberFit]:
    """Each member's node or message; `group` is None when the gang fits."""
    position = {id(p): i for i, p in enumerate(queue)}
    out: list[MemberFit] = []
    for m in members:
        i = position.get(id(m))
        if i is None:  # bound, finished or terminating: the pass does not move it
            out.append(MemberFit(m, m.node, m.node is not None, None))
        elif group is None:
            node = placed.get(i)
            out.append(MemberFit(m, node, False, None if node else evaluated[i].message))
        elif group == WAITING_APPEAR:  # held before any cycle (kube-scheduler writes nothing on the pod)
            out.append(MemberFit(m, placed.get(i), False, group))
        elif i in placed:  # would fit but the group does not
            out.append(MemberFit(m, placed[i], False, member_held(group)))
        elif i > stop:  # never tried: the group's status as it stands (recorded: gang137's watch, gang-a's 2nd cycle)
            out.append(MemberFit(m, placed.get(i), False, group))
        else:
            out.append(MemberFit(m, None, False, evaluated[i].message))
    return out


def _blockers(result: GangFit, alloc: Allocation, placed: dict[int, str], evaluated: dict[int, Placement],
              took: Counter[str]) -> None:
    """Saturated (took members, then refused the rest) and excluded (took none) nodes, with the reasons
    they refused the members no node took: counted per reason as arrays (a gang of hundreds on 5,000
    nodes), turned into dicts only for the nodes that refused someone."""
    counts: dict[str, np.ndarray] = {}  # reason -> members refused for it, per node
    for i, placement in evaluated.items():
        if i in placed:
            continue
        for k, name in enumerate(placement.reason_names):
            row = placement.failed[k]
            if row.any():
                if name in counts:
                    counts[name] += row
                else:
                    counts[name] = row.astype(np.int32)
    if not counts:
        return
    names = list(counts)
    matrix = np.stack([counts[name] for name in names])  # (reasons, nodes)
    took_any = np.isin(np.asarray(alloc.nodes), list(took)) if took else np.zeros(len(alloc.nodes), dtype=bool)
    refused = matrix.any(axis=0)
    for r in np.flatnonzero(refused & took_any).tolist():
        result.saturated[alloc.nodes[r]] = {names[k]: int(matrix[k, r]) for k in np.flatnonzero(matrix[:, r]).tolist()}
    for r in np.flatnonzero(refused & ~took_any).tolist():
        result.excluded[alloc.nodes[r]] = [names[k] for k in np.flatnonzero(matrix[:, r]).tolist()]


def _summary(result: GangFit, alloc: Allocation, queue: list[PodView], evaluated: dict[int, Placement],
             assumed: ExtraLoad | None) -> str:
    live = [m.pod for m in result.members if m.pod.phase not in TERMINAL_PHASES and not m.pod.deleting]
    if not live:
        return "no members"
    head = sizes(live)
    if result.fits:
        where = sorted(Counter(node for _, node in result.placement).items())
        shown = ", ".join(f"{n} {c}" if c > 1 else n for n, c in where[:_SHOWN_NODES])
        more = f", +{len(where) - _SHOWN_NODES} more nodes" if len(where) > _SHOWN_NODES else ""
        return f"{head}: fits ({shown}{more})"
    need = "" if result.min_count == result.size else f" of {result.min_count} needed"
    if result.size < result.min_count:
        return f"{head}: {result.size} of minCount {result.min_count} members exist"
    return f"{head}: room for {result.room}{need} ({_blocks(alloc, live, queue, evaluated, assumed)})"


def _blocks(alloc: Allocation, live: list[PodView], queue: list[PodView], evaluated: dict[int, Placement],
            assumed: ExtraLoad | None) -> str:
    """The largest free block, on each node its members may use, of the resource that stops them (GPUs
    when they ask for GPUs and some node refused them for GPUs; else the resource most nodes refused the
    first member no node took for), with its unit."""
    asks_gpus = any(p.requests.get(GPU) for p in live)
    resource = _blocking(evaluated, asks_gpus) or (GPU if asks_gpus else "cpu")
    col = alloc.column(resource)
    if col is None:
        return f"no node has {resource}"
    free = alloc.free[:, col].copy()
    if assumed is not None:
        free[assumed.rows] -= assumed.amounts[:, col]
    usable = np.ones(len(alloc.nodes), dtype=bool)
    if evaluated:
        usable &= ~evaluated[0].unresolvable()  # cordoned, tainted or unselected nodes are no block
    rows = [r for r in np.flatnonzero(usable & (free > 0)).tolist()]
    rows.sort(key=lambda r: (-int(free[r]), alloc.nodes[r]))
    if not rows:
        return f"no free {'GPUs' if resource == GPU else resource} on the nodes its members may use"
    shown = ", ".join(f"{alloc.nodes[r]} {amount_text(resource, int(free[r]))}" for r in rows[:_SHOWN_NODES])
    more = f", +{len(rows) - _SHOWN_NODES} more" if len(rows) > _SHOWN_NODES else ""
    what = "block" if resource == GPU else resource
    return f"largest free {what} per node: {shown}{more}"


def _blocking(evaluated: dict[int, Placement], asks_gpus: bool) -> str | None:
    """The resource that refused the first member that fit nowhere (None: none did, or no resource)."""
    first = next((p for p in evaluated.values() if not p.feasible.any()), None)
    if first is None:
        return None
    counts: Counter[str] = Counter()
    for k, name in enumerate(first.reason_names):
        if name == CLAIMS or name.startswith("Insufficient "):
            counts[GPU if name == CLAIMS else name.removeprefix("Insufficient ")] += int(first.failed[k].sum())
    counts = +counts
    if asks_gpus and counts[GPU]:
        return GPU
    return max(sorted(counts), key=counts.__getitem__) if counts else None


def fit_of(model: ClusterModel, gang: Gang, config: PackingConfig = _DEFAULT,
           assumed: ExtraLoad | None = None) -> GangFit:
    """`fit_gang` for a gang of the model: its member pods (by name), its minCount, and the nodes its
    shared ResourceClaims are allocated on (from the GPU ledger); inside one domain of its topology key
    when it has one (scheduling/gang_domain.py). A Kueue Workload with no pods yet
    (not admitted: its Job is suspended) is placed as its pod sets would be, and says so."""
    pods = [p for m in gang.members if (p := model.pods.get(m.key)) is not None]
    if not pods and gang.templates:
        return template_fit(model, gang, template_members(gang), config, assumed)
    if gang.topology_key:  # inside one domain of the label (gang_domain.py)
        return fit_gang_within(fit_gang, model.allocation(), pods, gang.min_count, config, gang.topology_key,
                               assumed, group_claim_nodes(model, gang))
    return fit_gang(model.allocation(), pods, gang.min_count, config, assumed, group_claim_nodes(model, gang))


def template_fit(model: ClusterModel, gang: Gang, members: list[PodView], config: PackingConfig = _DEFAULT,
                 assumed: ExtraLoad | None = None) -> GangFit:
    """`fit_of` of a Kueue Workload with no pods yet, its `template_members` given."""
    fit = fit_gang(model.allocation(), members, gang.min_count, config, assumed)
    topology = ", then topology" if gang.condition_reason == "TopologyPlacementFailed" else ""
    fit.notes += (f"not admitted by Kueue yet: its pod sets are placed as if it were (Kueue admits by quota "
                  f"first{topology})",)
    return fit


def template_members(gang: Gang) -> list[PodView]:
    """The pods a Kueue Workload's pod sets would make: `count` of each template."""
    out = []
    for podset, template, count in gang.templates:
        spec = template.get("spec") if isinstance(template.get("spec"), dict) else {}
        for i in range(count):
            meta = {**(template.get("metadata") or {}), "name": f"{gang.name}-{podset}-{i}", "namespace": gang.namespace}
            out.append(PodView.from_api(defaulted_pod({"metadata": meta, "spec": spec, "status": {"phase": "Pending"}})))
    return out


def defaulted_pod(obj: dict) -> dict:
    """The API server's defaulting that changes what a pod requests: a container's limit with no
    request is its request too (a manifest is read before any API server saw it)."""
    spec = dict(obj["spec"])
    for field_name in ("containers", "initContainers"):
        containers = []
        for c in spec.get(field_name) or []:
            resources = c.get("resources") or {}
            limits, requests = resources.get("limits") or {}, resources.get("requests") or {}
            if set(limits) - set(requests):
                c = {**c, "resources": {**resources, "requests": {**limits, **requests}}}
            containers.append(c)
        if field_name in spec:
            spec[field_name] = containers
    return {**obj, "spec": spec}


def group_claim_nodes(model: ClusterModel, gang: Gang) -> tuple[str, ...] | None:
    """`fit_gang`'s `claim_nodes` for a gang: None without shared claims, else the nodes the GPU
    ledger has its allocated ones on (empty: none allocated yet)."""
    if not (gang.claims or gang.claim_refs):
        return None
    claims = [model.gpus.claims.get((gang.namespace, name)) for name in gang.claims]
    return tuple(sorted({c.node for c in claims if c is not None and c.node}))


def uniform_members(count: int, requests: dict[str, str], name: str = "what-if", namespace: str = "default",
                    tolerations: list[dict] | None = None) -> list[PodView]:
    """`count` identical pending members asking `requests` (API quantities, e.g. {"nvidia.com/gpu": "8"}):
    a what-if gang such as "4 pods × 8 GPUs" for `fit_gang`."""
    spec = {"containers": [{"name": "main", "resources": {"requests": dict(requests), "limits": dict(requests)}}],
            "tolerations": list(tolerations or [])}
    return [PodView.from_api({"metadata": {"name": f"{name}-{i}", "namespace": namespace}, "spec": spec,
                              "status": {"phase": "Pending"}}) for i in range(count)]


__all__ = ["CLAIM_ELSEWHERE", "GangFit", "MemberFit", "amount_text", "defaulted_pod", "describe", "fit_gang", "fit_of",
           "group_claim_nodes", "sizes", "template_fit", "template_members", "uniform_members"]
