"""Many identical pods (a Deployment's replicas, a Job's parallelism, a big gang) placed with bounded work.

A cluster is finite: identical pods fill each node to floor(free / request) of them whatever the
order (gang_fit's module doc: greedy is exact for equal members), so how many of them fit is
arithmetic over the nodes (`room_per_node`), and once one fits nowhere every later one fits nowhere
for the same reason. `fit_replicas` places pods one by one only until then, and never more than the
manifest's budget (`MAX_TRIED`): 10^9 replicas cost what room+1 of them do. Pure: arrays in, a
result out.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from kubeview.model.allocation import Allocation
from kubeview.model.views import PodView
from kubeview.scheduling.config import PackingConfig
from kubeview.scheduling.evaluate import ExtraLoad, evaluate
from kubeview.scheduling.gang_fit import GangFit, describe, fit_gang

MAX_TRIED = 2_000  # pods of a manifest placed one by one (node names, kube-scheduler's words); the rest by arithmetic
_UNBOUNDED = 2**62  # a pod that requests nothing (it always asks pods: 1, so only a node without a pods figure)


def room_per_node(alloc: Allocation, pod: PodView, config: PackingConfig,
                  assumed: ExtraLoad | None = None) -> np.ndarray:
    """How many more copies of `pod` each node takes (int64 per node): none where a filter that load
    does not change refuses it (cordon, taint, selector) or the cluster lacks a resource it asks for,
    else the least over its requested resources of floor(free / request)."""
    placement = evaluate(alloc, pod, config, assumed=assumed)
    n = len(alloc.nodes)
    if alloc.missing(pod.requests):
        return np.zeros(n, dtype=np.int64)
    request = alloc.vector(pod.requests)
    counts = np.full(n, _UNBOUNDED, dtype=np.int64)
    for c in np.flatnonzero(request > 0).tolist():
        free = alloc.allocatable[:, c] - alloc.requested[:, c]
        if assumed is not None:
            free = free.copy()
            free[assumed.rows] -= assumed.amounts[:, c]
        np.minimum(counts, np.maximum(free, 0) // int(request[c]), out=counts)
    counts[placement.unresolvable()] = 0
    return counts


@dataclass(slots=True)
class ReplicaFit:
    fit: GangFit  # the pods placed one by one (`tried` of them)
    room: int  # of all `replicas`, how many fit (exact: arithmetic)
    untried: int  # pods not placed one by one
    untried_message: str | None  # what each of them would carry (one fit nowhere: the rest the same); None: not worked out
    load: ExtraLoad | None  # what all the replicas that fit add, when known per node (None: only the tried ones')
    note: str | None  # a bound that was hit, said plainly


def fit_replicas(alloc: Allocation, template: PodView, replicas: int, config: PackingConfig,
                 assumed: ExtraLoad | None, budget: int) -> ReplicaFit:
    """`replicas` copies of `template`, each binding where it fits (not a gang): placed one by one until
    one fits nowhere or `budget` pods were tried (at least one is, for its message); the rest counted."""
    counts = room_per_node(alloc, template, config, assumed)
    capacity = int(min(counts.sum(), _UNBOUNDED))
    tried = min(replicas, capacity + 1, max(budget, 1))
    pods = materialize(template, tried)
    fit = fit_gang(alloc, pods, len(pods), config, assumed, gang=False)
    room = min(replicas, capacity)
    untried = replicas - tried
    message, note, load = None, None, None
    if untried and tried > capacity:  # the last one fit nowhere: so does every later one
        message = fit.members[-1].message
    elif untried:
        note = (f"placed the first {tried:,} pods one by one (kubeview fit's bound per manifest) and counted the "
                f"other {untried:,} by each node's free resources")
    if untried and replicas >= capacity:  # every node filled: the load is known per node
        rows = np.flatnonzero(counts > 0)
        load = ExtraLoad(rows, counts[rows, None] * alloc.vector(template.requests)[None, :])
    elif untried:
        note = f"{note}; the units after it are placed without those pods' load"
    fit.summary = _summary(fit, template, replicas, room)
    return ReplicaFit(fit, room, untried, message, load, note)


def fit_identical_gang(alloc: Allocation, template: PodView, replicas: int, min_count: int, bound: int,
                       config: PackingConfig, assumed: ExtraLoad | None) -> GangFit:
    """A gang of `replicas` identical pods too many to place one by one: all or nothing by arithmetic,
    `bound` members already on nodes counting; no member lines."""
    capacity = int(min(room_per_node(alloc, template, config, assumed).sum(), _UNBOUNDED))
    room = bound + min(replicas, capacity)
    fit = GangFit(fits=room >= min_count, placement=[], room=room, min_count=min_count, size=bound + replicas,
                  summary="", message=None,
                  notes=(f"{replicas:,} identical members, more than kubeview fit places one by one ({MAX_TRIED:,}): "
                         "counted by each node's free resources, without member lines; the units after it are "
                         "placed without its load",))
    if not fit.fits:
        fit.message = f"room for {room:,} members together, minCount {min_count:,}"
    need = f" of minCount {min_count:,}" if min_count != replicas else f" of {replicas:,}"
    fit.summary = f"{replicas:,} × {describe(template.requests)}: " + (
        "fits" if fit.fits else f"room for {room:,}{need}")
    return fit


def materialize(template: PodView, count: int) -> list[PodView]:
    """`count` copies of a template pod named `<name>-0` … (the template is `<name>-0`)."""
    base = template.name.rpartition("-")[0] or template.name
    return [template] + [dataclasses.replace(template, name=f"{base}-{i}") for i in range(1, count)] if count else []


def _summary(fit: GangFit, template: PodView, replicas: int, room: int) -> str:
    """gang_fit's summary with the whole count: "1,000,000,000 × 0.1 cpu: room for 770 (…)"."""
    tail = fit.summary.split(": ", 1)[1] if ": " in fit.summary else ""
    detail = tail[tail.index(" ("):] if " (" in tail and fit.fits == (room >= replicas) else ""
    state = "fits" if room >= replicas else f"room for {room:,} of {replicas:,}"
    return f"{replicas:,} × {describe(template.requests)}: {state}{detail}"
