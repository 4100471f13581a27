"""A gang with a topology constraint (PodGroup `spec.schedulingConstraints.topology[0].key`, Kubernetes
1.37 alpha gate TopologyAwareWorkloadScheduling): every member inside one domain of a node label, as
kube-scheduler's TopologyPlacementGenerator makes it.

Upstream (1.37.2 `schedule_one_podgroup.go`, `podGroupSchedulingPlacementAlgorithm`): one placement per
value of the label (nodes without it are in none), restricted to the domain of members already bound;
the group's cycle runs in each; of the placements that hold it, PodGroupPodsCount scores them (all equal
when each holds every member) and a tie is broken at random; when none holds it, the group's status is
"pod group is unschedulable, 0/P placements are available, first placement status: <the status of the
first placement tried>" (Go map order), and the members carry that placement's words.

Here: `fit_gang` (handed in by gang_fit) on each domain's rows (`topology_domains.domains_of`,
`Allocation.subset`); of the domains
that hold the gang, the one with the fewest free GPUs left (Kueue's BestFit, domain_fit's rule; where
several hold it kube-scheduler's pick is random, and the fit says so), else the closest (most members,
then most free GPUs), whose words stand for "the first placement" (equal where the domains are alike).
Pure.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence

import numpy as np

from kubeview.model.allocation import GPU, Allocation
from kubeview.model.gangs.messages import NO_PLACEMENTS, member_held, placements_unavailable
from kubeview.model.views import TERMINAL_PHASES, PodView
from kubeview.scheduling.config import PackingConfig
from kubeview.scheduling.evaluate import ExtraLoad
from kubeview.scheduling.gang_types import GangFit, MemberFit, sizes
from kubeview.scheduling.topology_domains import Tried, choose_domain, free_gpus

# gang_fit.fit_gang, handed in (gang_fit calls this module: no import circle)
Place = Callable[[Allocation, Sequence[PodView], int, PackingConfig, ExtraLoad | None, Collection[str] | None], GangFit]

_SHOWN = 6


def fit_gang_within(fit_gang: Place, alloc: Allocation, members: Sequence[PodView], min_count: int, config: PackingConfig, key: str,
                    assumed: ExtraLoad | None = None, claim_nodes: Collection[str] | None = None) -> GangFit:
    """`fit_gang` inside one domain of `key`; the GangFit carries `topology_key`, `domain` (where it
    goes; None when no domain holds it) and `domains` (domain -> (members it allows, members, free GPUs))."""
    live = [m for m in members if m.phase not in TERMINAL_PHASES and not m.deleting]
    bound = {m.node for m in live if m.node}

    def attempt(sub: Allocation, rows: np.ndarray) -> Tried[GangFit]:
        load = _sub_load(assumed, rows)
        fit = fit_gang(sub, members, min_count, config, load, claim_nodes)
        gpu = sub.column(GPU)
        asked = 0 if gpu is None or not fit.fits else sum(int(sub.vector(m.pod.requests)[gpu]) for m in fit.members
                                                          if m.node and not m.bound)
        return Tried(fit, fit.fits, fit.room, free_gpus(sub, load), asked)

    c = choose_domain(alloc, key, bound, attempt)
    rooms = {value: (t.room, len(live), t.free) for value, t in c.tried.items()}
    if c.chosen is not None:
        return _fits(c.tried[c.chosen].result, key, c.chosen, rooms)
    if c.closest is None:
        return _nowhere(fit_gang(alloc, members, min_count, config, assumed, None), key, bound, c.domains)
    return _closest(c.tried[c.closest].result, key, rooms)


def _sub_load(assumed: ExtraLoad | None, rows: np.ndarray) -> ExtraLoad | None:
    """`assumed` (rows of the whole allocation) on the domain's rows, renumbered."""
    if assumed is None:
        return None
    where = {int(r): i for i, r in enumerate(rows.tolist())}
    keep = [k for k, r in enumerate(assumed.rows.tolist()) if r in where]
    if not keep:
        return None
    return ExtraLoad(np.asarray([where[int(assumed.rows[k])] for k in keep], dtype=np.intp), assumed.amounts[keep])


def _shown_rooms(rooms: dict[str, tuple[int, int, int]]) -> str:
    order = sorted(rooms.items(), key=lambda kv: (-kv[1][0], -kv[1][2], kv[0]))
    text = ", ".join(f"{d}{' allows' * (i == 0)} {room} of {pods}" for i, (d, (room, pods, _free))
                     in enumerate(order[:_SHOWN]))
    return text + (f", +{len(order) - _SHOWN} more" if len(order) > _SHOWN else "")


def _fits(fit: GangFit, key: str, domain: str, rooms: dict[str, tuple[int, int, int]]) -> GangFit:
    fit.topology_key, fit.domain, fit.domains = key, domain, rooms
    holding = [d for d, (room, _pods, _free) in rooms.items() if room >= fit.min_count]
    head, _, where = fit.summary.partition(": fits ")
    fit.summary = f"{head}: fits inside {key}={domain} {where}"
    if len(holding) > 1:
        fit.notes += (f"{len(holding)} {key} domains hold it ({', '.join(sorted(holding)[:_SHOWN])}): kube-scheduler "
                      f"picks one of them at random; shown is the one with the fewest free GPUs left",)
    return fit


def _closest(fit: GangFit, key: str, rooms: dict[str, tuple[int, int, int]]) -> GangFit:
    """The closest domain's fit, in the words of a group no placement holds."""
    fit.topology_key, fit.domain, fit.domains = key, None, rooms
    in_placement_words(fit, len(rooms))
    head = fit.summary.partition(": ")[0]
    fit.summary = f"{head}: topology {key}: no one domain holds {fit.min_count} pods: {_shown_rooms(rooms)}"
    return fit


def in_placement_words(fit: GangFit, placements: int) -> None:
    """A group no placement holds, in kube-scheduler's words: its status (the first placement's, here
    the closest domain's) wrapped, and the members that carried it with it."""
    first = fit.message or ""
    wrapped = placements_unavailable(placements, first)
    fit.message = wrapped
    fit.members = [_rewrap(m, first, wrapped) for m in fit.members]


def _rewrap(m: MemberFit, first: str, wrapped: str) -> MemberFit:
    if m.message == first:  # never tried in that placement: the group's status
        return MemberFit(m.pod, m.node, m.bound, wrapped)
    if m.message == member_held(first):  # placed there, held with the group
        return MemberFit(m.pod, m.node, m.bound, member_held(wrapped))
    return m


def _nowhere(fit: GangFit, key: str, bound: set[str], domains: int) -> GangFit:
    """No domain to try (no node carries the label, or the bound members are not in one domain): `fit`
    is the gang's fit anywhere, turned into that answer."""
    live = [m.pod for m in fit.members if m.pod.phase not in TERMINAL_PHASES and not m.pod.deleting]
    fit.fits, fit.placement, fit.room = False, [], len(bound)
    fit.topology_key, fit.domain, fit.domains = key, None, {}
    if not domains:
        why, fit.message = f"no node has the label {key}, so there is no domain to place it in", NO_PLACEMENTS
    else:
        why = f"its bound members are not inside one {key} domain"
        fit.message = f"cannot determine domain for already scheduled pods: {why}"
    fit.members = [m if m.bound or m.node is None and m.pod.phase in TERMINAL_PHASES
                   else MemberFit(m.pod, None, False, fit.message) for m in fit.members]
    fit.summary = f"{sizes(live) or 'no members'}: topology {key}: {why}"
    return fit
