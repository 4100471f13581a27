"""The fits `kubeview snapshot` hands the document (`waiting_fits`): every gang with members waiting for a
node, and every Kueue Workload waiting for admission, placed from its pod sets (scheduling/gang_fit.py).

Kueue's pending Workloads are many and alike: the quota bench's 7,500 (model_quota.py) come in a few
shapes, and fitting each one took 7.7 s of CPU in a one-shot snapshot. A Workload without pods is placed
from its pod sets' templates alone, and `fit_gang` reads of a member only what `evaluate` reads (its
requests, tolerations, node selector, affinity, claims) and its phase, node and deletion: never its name
or namespace, which only label the result. So Workloads whose members read the same, with the same
minCount and the same Kueue condition reason (the topology note), get the same fit: it is computed once
per such shape and handed to the others with their own members in its members' places (held equal to
fitting each by tests/scheduling/test_waiting_fits.py).
"""

from __future__ import annotations

import json
from dataclasses import replace

from kubeview.model.cluster import ClusterModel
from kubeview.model.gangs.store import Gang
from kubeview.model.queues.objects import PENDING
from kubeview.model.views import PodView
from kubeview.scheduling.config import PackingConfig
from kubeview.scheduling.gang_fit import fit_of, template_members
from kubeview.scheduling.gang_types import GangFit

_DEFAULT = PackingConfig()


def waiting_fits(model: ClusterModel, config: PackingConfig = _DEFAULT) -> dict[tuple[str, str, str], tuple[GangFit, str]]:
    """Gang key -> (its fit, the policy) for every gang of the model with members waiting for a node, and
    every Kueue Workload waiting for admission (placed from its pod sets; one fit per shape)."""
    out: dict[tuple[str, str, str], tuple[GangFit, str]] = {}
    shapes: dict[str, GangFit] = {}
    for g in model.gangs.gangs():
        if g.pending:
            out[g.key] = (fit_of(model, g, config), config.policy)
        elif _awaits_admission(model, g):
            out[g.key] = (_template_fit(model, g, config, shapes), config.policy)
    return out


def _awaits_admission(model: ClusterModel, g: Gang) -> bool:
    """A Kueue Workload without pods that Kueue has not admitted (finished and admitted ones are not
    waiting: at 20,000 Workloads, fitting every podless one took tens of seconds of `snapshot`)."""
    if not g.templates or g.members:
        return False
    w = model.queues.workload(g.namespace, g.name)
    return w is None or w.state == PENDING


def _template_fit(model: ClusterModel, g: Gang, config: PackingConfig, shapes: dict[str, GangFit]) -> GangFit:
    """`fit_of` for a gang placed from its templates, computed once per shape (see the module doc)."""
    members = template_members(g)
    key = _shape(members, g.min_count, g.condition_reason)
    known = shapes.get(key)
    if known is None:
        known = shapes[key] = fit_of(model, g, config)
        return known
    return _with_members(known, members)


def _shape(members: list[PodView], min_count: int, reason: str | None) -> str:
    """What `fit_gang` reads of the members, in order, and what else decides the fit and its notes."""
    read = [[m.requests, m.tolerations, m.node_selector, m.affinity, m.pod_claims, m.phase, m.node, m.deleting]
            for m in members]
    return json.dumps([read, min_count, reason], sort_keys=True, default=repr)


def _with_members(fit: GangFit, members: list[PodView]) -> GangFit:
    """`fit` with `members` in its members' places (the same order: template_members is deterministic)."""
    assert len(members) == len(fit.members), "a shape holds its members' count"
    mine = {id(m.pod): own for m, own in zip(fit.members, members, strict=True)}
    return replace(fit, members=[replace(m, pod=mine[id(m.pod)]) for m in fit.members],
                   placement=[(mine[id(p)], node) for p, node in fit.placement],
                   saturated={n: dict(r) for n, r in fit.saturated.items()},
                   excluded={n: list(r) for n, r in fit.excluded.items()}, domains=dict(fit.domains))
