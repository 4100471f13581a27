"""What cluster sources emit and the model consumes. Raw API dicts travel inside, typed at the edge."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

from kubeview.model.queues.positions import QueuePositions
from kubeview.model.usage import UsageUpdate

KINDS = ("Node", "Pod", "ReplicaSet", "Deployment", "StatefulSet", "Job")
Kind = Literal["Node", "Pod", "ReplicaSet", "Deployment", "StatefulSet", "Job"]


@dataclass(frozen=True, slots=True)
class WatchEvent:
    """One ADDED / MODIFIED / DELETED event for one object."""

    kind: str
    type: Literal["ADDED", "MODIFIED", "DELETED"]
    obj: dict


@dataclass(frozen=True, slots=True)
class Listed:
    """A full (re)list of one kind: replaces everything the model holds of that kind."""

    kind: str
    objects: list[dict]
    resource_version: str = ""


@dataclass(frozen=True, slots=True)
class Listing:
    """A list in progress: at its start (`items` 0), then after each page, `items` objects of `kind`
    read so far. A 50,000-pod list is ten pages and tens of seconds on a busy API server: this says it is
    moving, and that the kind is not complete until its `Listed` (model/freshness.py: figures counting
    it are pending, or stale during a relist). `as_of` (time.time()): until when what the model holds of
    the kind was current, for a relist: when its watch broke, else when the list began."""

    kind: str
    items: int
    as_of: float = 0.0
    # the page just read (empty at the list's start): what can be built of it before `Listed` is built
    # now, while the next page is in transit (`Calls.prepare`); not part of the event's identity
    page: Sequence[dict] = field(default=(), compare=False, repr=False)


@dataclass(frozen=True, slots=True)
class ConnectionState:
    """The source's link to its cluster: the header shows it, the view is stale while not live."""

    state: Literal["connecting", "live", "stale", "reconnecting", "failed"]
    since: float  # time.time() of the change
    detail: str = ""


@dataclass(frozen=True, slots=True)
class Scope:
    """What the source shows and counts: `title` for the header; `namespace` the one namespace whose
    pods are listed for display (None: all); `partial` why node figures miss some pods (None: they
    count every pod); `unavailable` kind -> why the source cannot read that kind (a 403 on its list,
    or another failure of an optional kind; the views say it: model/kinds.py); `kubernetes` the
    API server's gitVersion (None: not asked, or it did not say); `not_served` feature -> why, for
    the built-in APIs it does not serve (model/server_version.py). A source may send it again when
    its scope changes (e.g. a 403 narrows it)."""

    title: str
    namespace: str | None = None
    partial: str | None = None
    unavailable: Mapping[str, str] = field(default_factory=dict)
    kubernetes: str | None = None
    not_served: Mapping[str, str] = field(default_factory=dict)


# UsageUpdate: see model/usage.py; QueuePositions: model/queues/positions.py
SourceEvent = WatchEvent | Listed | Listing | ConnectionState | UsageUpdate | Scope | QueuePositions
