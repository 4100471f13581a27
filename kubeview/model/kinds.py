"""The seam where a kind enters the model: what a store offers, and what "unavailable" says.

`ClusterModel` keeps one table kind -> stores (`ClusterModel.kinds`); a list (`Listed`) calls each
store's `replace`, a watch event its `put` or `delete`. A kind may feed several stores (a Pod: the
node figures, the Jobs, the gangs). Adding a kind is one store, one row in that table and one row in
the source's table (docs/architecture.md, "Adding a kind").

A kind the source cannot read (a 403, not served) is one entry kind -> reason in
`ClusterModel.unavailable`, fed from the source's `Scope`; the notes below are the words the views
print for it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from kubeview.model.autoscaling.store import AUTOSCALING_KINDS
from kubeview.model.gangs.messages import GANG_KINDS
from kubeview.model.queues.objects import QUEUE_KINDS
from kubeview.model.quota.store import QUOTA_KIND


class KindStore(Protocol):
    """The objects of one kind the model holds (or what it derives from them)."""

    def put(self, obj: dict) -> bool:
        """An object added or modified; True if anything changed."""

    def delete(self, obj: dict) -> bool:
        """An object deleted; True if anything changed."""

    def replace(self, objects: list[dict]) -> object:
        """A full (re)list: these objects and no others of the kind (the result is not read)."""


@dataclass(frozen=True, slots=True)
class Calls:
    """A store whose methods for this kind have other names (`JobStore.put_pod`, ...)."""

    put: Callable[[dict], bool]
    delete: Callable[[dict], bool]
    replace: Callable[[list[dict]], object]
    # a page of a list in progress (`Listing.page`; empty: a list begins): build what `replace` will
    # want of it now, while the next page is in transit; `replace` must give what it gives without it,
    # and read of an object it prepared no more than its identity (model/staged.py `slim`)
    prepare: Callable[[Sequence[dict]], None] | None = None


class ManyKinds(Protocol):
    """A store holding several kinds (the GPU ledger, the gangs, the workloads), told which."""

    def put(self, kind: str, obj: dict) -> bool: ...

    def delete(self, kind: str, obj: dict) -> bool: ...

    def replace(self, kind: str, objects: Iterable[dict]) -> object: ...


@dataclass(frozen=True, slots=True)
class OfKind:
    """One kind's share of a `ManyKinds` store."""

    store: ManyKinds
    kind: str

    def put(self, obj: dict) -> bool:
        return self.store.put(self.kind, obj)

    def delete(self, obj: dict) -> bool:
        return self.store.delete(self.kind, obj)

    def replace(self, objects: list[dict]) -> object:
        return self.store.replace(self.kind, objects)


def rows_of(store: ManyKinds, kinds: Iterable[str]) -> dict[str, tuple[KindStore, ...]]:
    """Table rows for every kind a `ManyKinds` store holds."""
    return {kind: (OfKind(store, kind),) for kind in kinds}


def events_unavailable(unavailable: Mapping[str, str]) -> str | None:
    """Why recent Events are not shown (None: they are, or the source has none)."""
    why = unavailable.get("Event")
    return None if why is None else f"events are not shown: {why}"


def gangs_unavailable(unavailable: Mapping[str, str]) -> str | None:
    """Why some gang kinds are not shown (their lists were refused), each kind's reason once."""
    whys = [why for kind, why in unavailable.items() if kind in GANG_KINDS]
    return f"some gangs are not shown: {'; '.join(whys)}" if whys else None


def autoscaling_unavailable(unavailable: Mapping[str, str]) -> str | None:
    """Why some node groups are not shown (NodePools, NodeClaims or CA's status refused), each reason once."""
    whys = list(dict.fromkeys(why for kind, why in unavailable.items() if kind in AUTOSCALING_KINDS))
    return f"node groups are not shown: {'; '.join(whys)}" if whys else None


def quota_unavailable(unavailable: Mapping[str, str]) -> str | None:
    """Why quotas (and holds by quota, read against them) are not shown: the ResourceQuota list refused."""
    why = unavailable.get(QUOTA_KIND)
    return None if why is None else f"quotas are not shown: {why}"


def queues_unavailable(unavailable: Mapping[str, str]) -> str | None:
    """Why some of Kueue's queues are not shown (ClusterQueue, LocalQueue or ResourceFlavor refused),
    each reason once; a cluster that does not serve Kueue lists none of them and has no entry."""
    whys = list(dict.fromkeys(why for kind, why in unavailable.items() if kind in QUEUE_KINDS))
    return f"Kueue queues are not shown: {'; '.join(whys)}" if whys else None


def domains_unavailable(unavailable: Mapping[str, str]) -> str | None:
    """Why NVIDIA's ComputeDomains are not shown (their list refused); cliques come from node labels."""
    why = unavailable.get("ComputeDomain")
    return None if why is None else f"ComputeDomains are not shown: {why}"
