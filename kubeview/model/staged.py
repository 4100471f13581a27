"""What a store builds of a list's pages while the list is still being read (#41 item 2).

A 150,000-pod list arrives in 30 pages over seconds; the model holds none of it until `Listed`
(model/freshness.py: figures counting pods stay pending), and building every pod's views only then put
seconds of CPU after the last page. A store that builds per object (a view, a pod's gang keys) builds
each page as it is read (`Listing.page`, `Calls.prepare`) into a `Staged`, and its `replace` takes
what was built of each object it is given. Only what was built of that very object (identity) is
taken, so a list restarted (a 410 mid-list), a `Listed` of other objects or a page never seen gives
what `replace` gave without staging: the object is built then.

Once every store of a kind has built a page, a model that owns its events (`ClusterModel(slim_pages=
True)`: the TUI, `snapshot`) keeps of each page's object only its identity (`slim`): the rest of the
page's dicts are freed while the next page decodes, into the very memory they held (#41 item 3). A
list's transient dicts were otherwise all alive until `Listed`, made side by side with the views that
stay, so pymalloc could give none of their arenas back: +1,376 MiB held at 150,000 pods against the
views' few hundred. So a store's `replace` reads of an object it prepared no more than `IDENTITY`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from enum import Enum
from itertools import zip_longest
from typing import Generic, TypeVar

from kubeview.model.gcpause import BULK, gc_paused

V = TypeVar("V")


class NotBuilt(Enum):
    """`take`'s word for an object no page built anything of (an enum: `is NOT_BUILT` narrows the type)."""

    NOT_BUILT = 0


NOT_BUILT = NotBuilt.NOT_BUILT

IDENTITY = ("namespace", "name", "resourceVersion", "uid")  # what `slim` keeps of an object's metadata


def slim(page: Sequence[dict]) -> None:
    """Each object of a built page reduced, in place (its identity is what `Staged.take` matches), to
    `{"metadata": IDENTITY}`; what its views kept of it (labels, tolerations, strings) stays with them."""
    for obj in page:
        meta = obj.get("metadata") or {}
        kept = {k: meta[k] for k in IDENTITY if k in meta}
        obj.clear()
        obj["metadata"] = kept


def build_page(prepares: Sequence[Callable[[Sequence[dict]], None] | None], page: Sequence[dict],
               may_slim: bool) -> None:
    """A page of a list in progress, built by each store of its kind that builds ahead (`Calls.prepare`;
    None: a store that does not, and reads all of each object at `replace`); then slimmed when the
    model may (it owns its events) and every store has built it. Held back from the model until `Listed`."""
    for prepare in prepares:
        if prepare is not None:
            prepare(page)
    if may_slim and prepares and all(p is not None for p in prepares):
        slim(page)


def nothing_to_build(page: Sequence[dict]) -> None:
    """`Calls.prepare` of a store whose `replace` reads no field of the objects: a page costs it nothing
    and loses it nothing when slimmed."""


class Staged(Generic[V]):
    """Each object of a list in progress with what was built of it, in list order."""

    def __init__(self, build: Callable[[dict], V]) -> None:
        self._build = build
        self._items: list[tuple[dict, V]] = []

    def add(self, page: Sequence[dict]) -> None:
        """One page read: built now. An empty page is a list's (re)start: what was staged is dropped."""
        if not page:
            self._items = []
            return
        build = self._build
        with gc_paused(keep=len(page) >= BULK):  # acyclic, and kept until the list is applied (gcpause.py)
            self._items.extend([(obj, build(obj)) for obj in page])

    def take(self, objects: Sequence[dict]) -> list[V | NotBuilt]:
        """Per object of `objects`, what was built of it, or `NOT_BUILT`; nothing stays staged. An
        informer's list holds its pages' objects in order; one found elsewhere is looked up by identity
        (while staged, each object is alive: its id is its own), since it may be slimmed already."""
        items, self._items = self._items, []
        out = [pre[1] if pre is not None and pre[0] is obj else NOT_BUILT
               for obj, pre in zip_longest(objects, items[:len(objects)])]
        if any(v is NOT_BUILT for v in out[:len(items)]):  # else each staged object was found in place
            by_id = {id(obj): built for obj, built in items}
            out = [by_id.get(id(obj), NOT_BUILT) if v is NOT_BUILT else v for obj, v in zip(objects, out, strict=True)]
        return out
