"""Which figures are facts: a figure counts objects of some kinds, and is only as good as their lists.

A partial list is not a fact (#41: while 90,000 of 150,000 pods were read the header said "GPUs 4000
free" with 3,600 free). The rule, one function (`freshness`) for every view:

- **pending**: some kind the figure counts has never been listed completely (its first list is in
  progress, or has not begun). The figure is not shown at all: "…", with what it waits for
  ("listing Pod 90,000…"). The model holds no pods of a kind until its list ends (`Listed`), so any
  number would be a count of nothing.
- **stale**: every kind was listed completely, but one is being relisted (a 410 Gone: the watch
  expired) or the link is down (reconnecting). The model still holds the last complete list plus every
  watch event up to the break, so the figures are true *as of* that moment (`as_of`): they are shown,
  marked not current ("as of 12:00:03, relisting Pod 40,000…"), until the relist ends or the watch resumes.
- **fact**: every kind listed completely, no relist in progress, the link live.

Only the kinds the source lists count (`depends`): a cluster without DRA never lists a ResourceSlice.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Literal

from kubeview.model.events import ConnectionState
from kubeview.model.gpus.dra import DRA_KINDS

ALWAYS = ("Node", "Pod")  # every source lists these
NODE_FIGURES = ("Node", "Pod", *DRA_KINDS)  # requested/free per node and their sums, GPU fit (DRA: GPUs)
DOWN = ("reconnecting", "stale", "failed")  # link states in which nothing new arrives


@dataclass(frozen=True, slots=True)
class Freshness:
    """What a figure may say now: `state`, and for the others than "fact" why (`why`: "listing Pod
    90,000…", "relisting Pod…", "reconnecting") and, when stale, since when it is not current (`as_of`)."""

    state: Literal["fact", "pending", "stale"]
    why: str = ""
    as_of: float = 0.0

    @property
    def fact(self) -> bool:
        return self.state == "fact"

    @property
    def pending(self) -> bool:
        return self.state == "pending"


FACT = Freshness("fact")


@dataclass(frozen=True, slots=True)
class Lists:
    """The source's lists as the model knows them (a copy: views read it without the model's lock).
    `listed`: kinds listed completely at least once; `listing`: kind -> (objects read so far, when the
    list began) of lists in progress; `link`: the connection."""

    listed: frozenset[str] = frozenset()
    listing: Mapping[str, tuple[int, float]] = field(default_factory=dict)
    link: ConnectionState = ConnectionState("connecting", 0.0)

    def freshness(self, kinds: Iterable[str]) -> Freshness:
        return freshness(kinds, self.listed, self.listing, self.link)


def depends(figure: Iterable[str], source_kinds: Iterable[str]) -> tuple[str, ...]:
    """Of the kinds a figure counts, those it waits for: Node and Pod always, the others when the source
    lists them (`source_kinds`, `ListsKinds.kinds`: what discovery found served)."""
    listed = set(source_kinds)
    return tuple(k for k in figure if k in ALWAYS or k in listed)


def freshness(kinds: Iterable[str], listed: frozenset[str] | set[str], listing: Mapping[str, tuple[int, float]],
              link: ConnectionState) -> Freshness:
    """The rule of this module for a figure counting `kinds` (already filtered by `depends`)."""
    kinds = tuple(kinds)
    waiting = [k for k in kinds if k not in listed]
    if waiting:
        return Freshness("pending", "listing " + ", ".join(_read(k, listing) for k in waiting))
    relisting = [k for k in kinds if k in listing]
    down = link.state in DOWN
    if not (relisting or down):
        return FACT
    # current until the first of: a relist began, the link went down (a relist after a reconnect: the latter)
    since = [listing[k][1] for k in relisting] + ([link.since] if down else [])
    why = ["relisting " + ", ".join(_read(k, listing) for k in relisting)] if relisting else []
    return Freshness("stale", ", ".join(why + ([link.state] if down else [])), min(since))


def _read(kind: str, listing: Mapping[str, tuple[int, float]]) -> str:
    read = listing.get(kind, (0, 0.0))[0]
    return f"{kind} {read:,}…" if read else f"{kind}…"
