"""The fits `kubeview snapshot` hands the document (`waiting_fits`): every gang with members waiting for a
node, and every Kueue Workload waiting for admission, placed from its pod sets (scheduling/gang_fit.py).

Kueue's pending Workloads are many and alike: the quota bench's 7,500 (model_quota.py) come in a few
shapes, and fitting each one took 7.7 s of CPU in a one-shot snapshot. A Workload without pods is placed
from its pod sets' templates alone, and `fit_gang` reads of a member only what `evaluate` reads (its
requests, tolerations, node selector, affinity, claims: all from the template's spec) and its phase, node
and deletion: never its name, namespace or labels, which only label the result. So Workloads whose pod
sets have the same specs and counts, with the same minCount and the same Kueue condition reason (the
topology note), get the same fit: it is computed once per such shape and handed to the others with their
own members (their names, namespace and labels) in its members' places: found by the specs' bytes
without parsing them again, else by what the parsed members read (specs that differ only in an image
are one shape). Held equal to fitting each alone by tests/scheduling/test_waiting_fits.py. Pod sets
with ResourceClaims are fitted alone.
"""

from __future__ import annotations

from dataclasses import replace

import msgspec

from kubeview.model.cluster import ClusterModel
from kubeview.model.gangs.store import Gang
from kubeview.model.queues.objects import PENDING
from kubeview.model.views import PodView
from kubeview.scheduling.config import PackingConfig
from kubeview.scheduling.gang_fit import fit_of, template_fit, template_members
from kubeview.scheduling.gang_types import GangFit

_DEFAULT = PackingConfig()


def waiting_fits(model: ClusterModel, config: PackingConfig = _DEFAULT) -> dict[tuple[str, str, str], tuple[GangFit, str]]:
    """Gang key -> (its fit, the policy) for every gang of the model with members waiting for a node, and
    every Kueue Workload waiting for admission (placed from its pod sets; one fit per shape)."""
    out: dict[tuple[str, str, str], tuple[GangFit, str]] = {}
    shapes: _Shapes = ({}, {})
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


def _template_fit(model: ClusterModel, g: Gang, config: PackingConfig, shapes: _Shapes) -> GangFit:
    """`fit_of` for a gang placed from its templates, computed once per shape (see the module doc)."""
    if any("resourceClaims" in (t.get("spec") or {}) for _, t, _ in g.templates):
        return fit_of(model, g, config)  # a claim's name may follow the pod's: fitted alone
    by_spec, by_read = shapes
    spec = _spec_shape(g)
    known = by_spec.get(spec)
    if known is not None:
        return _with_members(known, _members_like(known, g))
    members = template_members(g)
    read = _read_shape(members, g.min_count, g.condition_reason)
    known = by_read.get(read)
    fit = _with_members(known, members) if known is not None else template_fit(model, g, members, config)
    by_read.setdefault(read, fit)
    by_spec[spec] = fit
    return fit


_Shapes = tuple[dict[bytes, GangFit], dict[bytes, GangFit]]  # fits by spec shape, by what is read of members
_SORTED = msgspec.json.Encoder(order="sorted")


def _spec_shape(g: Gang) -> bytes:
    """Pod sets that decide the same fit, seen without parsing them: each one's spec (all `fit_gang` reads
    of a member comes from it; a template's metadata gives only names, labels and owners, and whether it
    is deleting), count and order, minCount and the condition reason (the topology note)."""
    sets = [[t.get("spec"), count, bool((t.get("metadata") or {}).get("deletionTimestamp"))]
            for _, t, count in g.templates]
    return _SORTED.encode([sets, g.min_count, g.condition_reason])


def _read_shape(members: list[PodView], min_count: int, reason: str | None) -> bytes:
    """What `fit_gang` reads of the members, in order, and what else decides the fit and its notes: specs
    that differ only where no fit looks (an image, a command) are one shape."""
    read = [[m.requests, m.tolerations, m.node_selector, m.affinity, m.pod_claims, m.phase, m.node, m.deleting]
            for m in members]
    return _SORTED.encode([read, min_count, reason])


def _members_like(fit: GangFit, g: Gang) -> list[PodView]:
    """`template_members(g)` made from `fit`'s members of the same spec: what a member reads of its template's
    metadata (name, namespace, owner, labels, ...) read as `PodView.from_api` reads it, the rest kept."""
    out: list[PodView] = []
    shared = iter(m.pod for m in fit.members)
    for podset, template, count in g.templates:
        for i in range(count):
            meta = {**(template.get("metadata") or {}), "name": f"{g.name}-{podset}-{i}", "namespace": g.namespace}
            own = PodView.from_api({"metadata": meta, "spec": {}, "status": {"phase": "Pending"}})
            out.append(replace(next(shared), namespace=own.namespace, name=own.name, owner=own.owner,
                               deleting=own.deleting, labels=own.labels, resource_version=own.resource_version,
                               uid=own.uid))
    return out


def _with_members(fit: GangFit, members: list[PodView]) -> GangFit:
    """`fit` with `members` in its members' places (the same order: template_members is deterministic)."""
    assert len(members) == len(fit.members), "a shape holds its members' count"
    mine = {id(m.pod): own for m, own in zip(fit.members, members, strict=True)}
    return replace(fit, members=[replace(m, pod=mine[id(m.pod)]) for m in fit.members],
                   placement=[(mine[id(p)], node) for p, node in fit.placement],
                   saturated={n: dict(r) for n, r in fit.saturated.items()},
                   excluded={n: list(r) for n, r in fit.excluded.items()}, domains=dict(fit.domains))
