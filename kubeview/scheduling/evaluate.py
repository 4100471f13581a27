"""Filter and score one pod over every node at once: the one function behind the extender, the local
scheduler and the TUI's what-if preview.

Filters run in kube-scheduler's plugin order (NodeUnschedulable, TaintToleration, NodeAffinity,
NodeResourcesFit) and, as there, a node reports the reasons of the first filter it fails; resource fit
reports every resource that does not fit. Scores are 0..10 (MaxExtenderPriority) under the config's
policy; see `scoring.py`. Pure: arrays in, arrays out, no I/O.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import cast

import numpy as np

from kubeview.model.allocation import GPU, Allocation
from kubeview.model.views import PodView
from kubeview.scheduling import predicates
from kubeview.scheduling.config import PackingConfig
from kubeview.scheduling.native_scoring import NativeScoring
from kubeview.scheduling.node_index import NodeIndex, index_for
from kubeview.scheduling.scoring import finish, native_scores, policy_scores, score_columns

UNSCHEDULABLE = "node(s) were unschedulable"
UNTOLERATED = "node(s) had untolerated taint(s)"
AFFINITY = "node(s) didn't match Pod's node affinity/selector"
NON_SCALAR = ("cpu", "memory", "ephemeral-storage")  # scored even where the pod requests none
DEFAULT_NONZERO = {"cpu": 100, "memory": 200 * 2**20}  # schedutil.DefaultMilliCPURequest, DefaultMemoryRequest
CLAIMS = "cannot allocate all claims"  # kube-scheduler's DynamicResources reason (recorded, tests/fixtures/k8s/dra)
_DEFAULT = PackingConfig()


def resource_reason(resource: str) -> str:
    """NodeResourcesFit's reason for one resource."""
    return "Too many pods" if resource == "pods" else f"Insufficient {resource}"


@dataclass(frozen=True, slots=True)
class ExtraLoad:
    """Requests on top of an Allocation's for a few of its rows (pods placed but not shown yet)."""

    rows: np.ndarray  # intp (K,), distinct
    amounts: np.ndarray  # int64 (K, R), columns as the Allocation's resources


@dataclass(slots=True)
class Placement:
    """Where a pod can go and how well, over `nodes` (rows of the Allocation it was computed on)."""

    nodes: list[str]
    feasible: np.ndarray  # bool (N,)
    scores: np.ndarray  # int64 (N,), 0..10 (0..100 under native scoring); 0 for infeasible and avoided nodes
    reason_names: list[str]  # columns of `failed`
    failed: np.ndarray  # bool (K, N): node n failed for reason k
    index: NodeIndex = field(repr=False)
    fit_scores: np.ndarray = field(repr=False)  # scores as if every node fit
    notes: tuple[str, ...] = ()  # what the preview does not evaluate (a pod's ResourceClaims), said plainly
    _reasons: dict[str, list[str]] | None = field(default=None, repr=False)

    @property
    def best_row(self) -> int | None:
        """Row of the highest-scoring feasible node; ties go to the first node by name."""
        if not self.feasible.any():
            return None
        top = self.scores[self.feasible].max()
        rows = np.flatnonzero(self.feasible & (self.scores == top))
        return int(rows[np.argmin(self.index.name_rank[rows])])

    @property
    def best_set(self) -> list[str]:
        """Every feasible node with the top score, by name: where kube-scheduler's selectHost may land
        the pod (it picks at random among equal totals)."""
        if not self.feasible.any():
            return []
        top = self.scores[self.feasible].max()
        return sorted(self.nodes[r] for r in np.flatnonzero(self.feasible & (self.scores == top)).tolist())

    @property
    def best(self) -> str | None:
        row = self.best_row
        return None if row is None else self.nodes[row]

    @property
    def reasons(self) -> dict[str, list[str]]:
        """Node -> why it fails, for the failing nodes only (in node order)."""
        if self._reasons is None:
            out: dict[str, list[str]] = {}
            for row in np.flatnonzero(~self.feasible).tolist():
                out[self.nodes[row]] = self.reasons_of(row)
            self._reasons = out
        return self._reasons

    def reasons_of(self, row: int) -> list[str]:
        return [self.reason_names[k] for k in np.flatnonzero(self.failed[:, row])]

    def unresolvable(self) -> np.ndarray:
        """Per node: fails a filter that evicting pods cannot fix (cordon, taint, selector/affinity)."""
        return cast(np.ndarray, self.failed[:3].any(axis=0))  # 2-D: a column per node

    def reason_texts(self, rows: np.ndarray) -> list[str]:
        """The reasons of each of `rows` joined with ", ", one string per row (vectorised: the work is
        per distinct combination of reasons, not per node)."""
        if len(rows) == 0:
            return []
        failed = self.failed[:, rows]
        if len(failed) > 62:  # more reasons than bits in a code: compare whole columns
            combos, which = np.unique(failed.T, axis=0, return_inverse=True)
            texts = [", ".join(self.reason_names[k] for k in np.flatnonzero(c)) for c in combos]
            return [texts[i] for i in which.reshape(-1).tolist()]
        codes = (np.int64(1) << np.arange(len(failed), dtype=np.int64)) @ failed  # reasons as bits
        distinct, which = np.unique(codes, return_inverse=True)  # 1-D: ~10x faster than unique(axis=0)
        texts = [", ".join(name for k, name in enumerate(self.reason_names) if code >> k & 1)
                 for code in distinct.tolist()]
        return [texts[i] for i in which.tolist()]

    @property
    def message(self) -> str:
        """kube-scheduler's FitError text: `0/5 nodes are available: 3 Insufficient cpu, ...`.

        Counts per reason, each rendered `"<count> <reason>"` and sorted as strings (Go's sort.Strings),
        as `FitError.Error()` does. With feasible nodes the leading count is theirs, not 0.
        """
        total = len(self.nodes)
        if total == 0:
            return "no nodes available to schedule pods"
        counts = self.failed.sum(axis=1)
        parts = sorted(f"{int(c)} {name}" for name, c in zip(self.reason_names, counts, strict=True) if c)
        head = f"{int(self.feasible.sum())}/{total} nodes are available"
        return f"{head}: {', '.join(parts)}." if parts else f"{head}."


def evaluate(alloc: Allocation, pod: PodView, config: PackingConfig = _DEFAULT,
             assumed: ExtraLoad | None = None, index: NodeIndex | None = None) -> Placement:
    """Filter and score `pod` on every node of `alloc`.

    A config with `native` set scores as kube-scheduler's NodeResourcesFit does under kubeview's native
    profile (scores 0..100; bias and avoid do not apply: native mode has none), otherwise as the
    extender does, 0..10.

    `assumed` is requested on top of `alloc.requested` on a few rows: pods the caller has placed but
    the allocation does not show yet (the extender's recent decisions). `index` is for callers that hold
    one for a throwaway node set (otherwise it is looked up, and built once per node set).
    """
    index = index if index is not None else index_for(alloc)
    native = config.native
    n = len(alloc.nodes)
    request = alloc.vector(pod.requests)
    missing = alloc.missing(pod.requests)

    ok_sched = predicates.schedulable(index, pod.tolerations)
    ok_taint = predicates.taints_tolerated(index, pod.tolerations)
    ok_aff = predicates.affinity_matches(index, pod.node_selector, pod.affinity)

    # One resource column at a time, as (N,) arrays (see scoring.policy_scores for why not blocks).
    fit_cols = (request > 0).nonzero()[0].tolist()
    scored_request = request  # differs only where the pod requests 0 (native's non-zero cpu, memory)
    if native is None:
        score_cols, weights = score_columns(alloc, request, config)
    else:
        score_cols, int_weights, scored_request = native_columns(alloc, request, native)
    used: dict[int, np.ndarray] = {}  # column -> what each node would hold with the pod placed there
    for c in dict.fromkeys(fit_cols + score_cols):
        u = alloc.requested[:, c] + scored_request[c]
        if assumed is not None:
            u[assumed.rows] += assumed.amounts[:, c]
        used[c] = u
    k = len(fit_cols)

    names = [UNSCHEDULABLE, UNTOLERATED, AFFINITY]  # the unresolvable ones come first, see `unresolvable`
    names += [resource_reason(alloc.resources[c]) for c in fit_cols]
    names += [resource_reason(r) for r in missing]
    failed = np.zeros((len(names), n), dtype=bool)
    np.logical_not(ok_sched, out=failed[0])
    np.greater(ok_sched, ok_taint, out=failed[1])  # passed the earlier filter, failed this one
    earlier = ok_sched & ok_taint
    np.greater(earlier, ok_aff, out=failed[2])
    earlier &= ok_aff  # reached NodeResourcesFit
    for j, c in enumerate(fit_cols):
        np.greater(used[c], alloc.allocatable[:, c], out=failed[3 + j])
        failed[3 + j] &= earlier
    if missing:
        failed[3 + k:] = earlier
    failed = _dra_reasons(alloc, fit_cols, failed, names)
    feasible = ~cast(np.ndarray, failed.any(axis=0))  # 2-D: a column per node

    if native is not None:
        fit_scores = native_scores([used[c] for c in score_cols], [alloc.allocatable[:, c] for c in score_cols],
                                   int_weights, native.strategy, native.shape)
    elif score_cols:
        raw = policy_scores([used[c] for c in score_cols], [alloc.allocatable[:, c] for c in score_cols],
                            weights, config.policy)
        fit_scores = finish(raw, config, index)
    else:
        fit_scores = finish(np.zeros(n), config, index)
    scores = fit_scores.copy()
    scores[~feasible] = 0
    return Placement(nodes=alloc.nodes, feasible=feasible, scores=scores, reason_names=names,
                     failed=failed, index=index, fit_scores=fit_scores, notes=claim_notes(pod))


def native_columns(alloc: Allocation, request: np.ndarray,
                   native: NativeScoring) -> tuple[list[int], list[int], np.ndarray]:
    """(columns, integer weights, request) NodeResourcesFit scores the pod on: the profile's resources
    the model knows, less extended ones the pod does not request; cpu and memory are scored even at 0,
    counted as kube-scheduler's non-zero defaults (100m, 200Mi) then, as its scorer does."""
    cols: list[int] = []
    weights: list[int] = []
    scored = request
    for resource, weight in native.resources:
        col = alloc.column(resource)
        if col is None or col in cols or resource == "pods" or (resource not in NON_SCALAR and request[col] == 0):
            continue
        if request[col] == 0 and resource in DEFAULT_NONZERO:
            scored = request.copy() if scored is request else scored
            scored[col] = DEFAULT_NONZERO[resource]
        cols.append(col)
        weights.append(weight)
    return cols, weights, scored


def _dra_reasons(alloc: Allocation, fit_cols: list[int], failed: np.ndarray, names: list[str]) -> np.ndarray:
    """A resource a DeviceClass maps to DRA (`extendedResourceName`) that does not fit on a node with
    none of it in its status is kube-scheduler's `cannot allocate all claims` there; device-plugin
    nodes keep `Insufficient <resource>` (both seen in tests/fixtures/k8s/dra/README.md)."""
    mapped = [(j, c) for j, c in enumerate(fit_cols) if alloc.resources[c] in alloc.dra_mapped]
    if not mapped:
        return failed
    names.append(CLAIMS)
    failed = np.vstack([failed, np.zeros((1, failed.shape[1]), dtype=bool)])
    for j, c in mapped:
        dra = alloc.dra_gpus if alloc.dra_gpus is not None and alloc.resources[c] == GPU else 0
        plugin = (alloc.allocatable[:, c] - dra) > 0
        failed[-1] |= failed[3 + j] & ~plugin
        failed[3 + j] &= plugin
    # DynamicResources runs after NodeResourcesFit: a node already failing another resource reports
    # only that (kube-scheduler stops at a node's first failing filter)
    failed[-1] &= ~failed[3:-1].any(axis=0)
    return failed


def fail_where(placement: Placement, ok: np.ndarray, reason: str) -> Placement:
    """`placement` with the nodes that passed every filter but not `ok` (bool per node) failing for
    `reason`: a later filter, reported only where the earlier ones passed, as kube-scheduler does."""
    newly = placement.feasible & ~ok
    names, failed = list(placement.reason_names), placement.failed
    if reason not in names:
        names.append(reason)
        failed = np.vstack([failed, np.zeros((1, failed.shape[1]), dtype=bool)])
    else:
        failed = failed.copy()
    failed[names.index(reason)] |= newly
    feasible = placement.feasible & ok
    scores = placement.scores.copy()
    scores[~feasible] = 0
    return Placement(nodes=placement.nodes, feasible=feasible, scores=scores, reason_names=names, failed=failed,
                     index=placement.index, fit_scores=placement.fit_scores, notes=placement.notes)


def claim_notes(pod: PodView) -> tuple[str, ...]:
    """What a preview of `pod` leaves out: its ResourceClaims' device requests are CEL kubeview does
    not evaluate, so only its other requests are placed (said, never guessed)."""
    if not pod.pod_claims:
        return ()
    return (f"ResourceClaims not evaluated ({', '.join(pod.pod_claims)}): kubeview does not evaluate device "
            "selectors (CEL), so this preview places the pod's other requests only",)
