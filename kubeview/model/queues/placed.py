"""The queue store's per-version lists of Workloads (model/queues/store.py: `_workload_lists`) and how one
Workload's move is patched into the groups of `workloads_of` without a pass over every Workload (#40: a
snapshot after one watch event on one of 20,000 Workloads)."""

from __future__ import annotations

from bisect import bisect_left
from dataclasses import dataclass

from kubeview.model.queues.objects import FINISHED, QueuedWorkload


@dataclass(frozen=True, slots=True)
class WorkloadLists:
    """One version's lists: every Workload by key (`views`), beside each its ClusterQueue (`cqs`) and both
    (`placed`); the sorted keys and LocalQueue version they were made with; the pending count; per
    ClusterQueue, its Workloads not finished by key (`groups`). Never changed once made: a new version
    copies what it changes."""

    version: int
    views: list[QueuedWorkload]
    cqs: list[str | None]
    placed: list[tuple[QueuedWorkload, str | None]]
    keys: list[tuple[str, str]]
    local_version: int
    pending: int
    groups: dict[str, list[QueuedWorkload]]


def _grouped(w: QueuedWorkload, cq: str | None) -> bool:
    return cq is not None and w.state != FINISHED


def groups_of(placed: list[tuple[QueuedWorkload, str | None]]) -> dict[str, list[QueuedWorkload]]:
    """Per ClusterQueue, its Workloads not finished, in `placed`'s order (by key): made in one pass."""
    groups: dict[str, list[QueuedWorkload]] = {}
    for w, cq in placed:
        if cq is not None and _grouped(w, cq):
            groups.setdefault(cq, []).append(w)
    return groups


def regroup(groups: dict[str, list[QueuedWorkload]], copied: set[str], old: QueuedWorkload, old_cq: str | None,
            new: QueuedWorkload, new_cq: str | None) -> None:
    """Put `new` (the same key as `old`) where `old` was in `groups` (a copy of the last version's dict):
    out of `old_cq`'s group, into `new_cq`'s, by key. A group is copied before its first change in this
    version (`copied` names those), so the last version's lists stay as they were."""
    for cq, remove in ((old_cq, True), (new_cq, False)):
        if cq is None or not _grouped(old if remove else new, cq):
            continue
        group = groups.get(cq)
        if cq not in copied:
            group = groups[cq] = list(group or ())
            copied.add(cq)
        assert group is not None
        i = bisect_left(group, new.key, key=lambda w: w.key)
        if remove:
            if i < len(group) and group[i].key == old.key:
                del group[i]
        else:
            group.insert(i, new)
        if not group:
            del groups[cq]
            copied.discard(cq)
