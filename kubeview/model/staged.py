"""What a store builds of a list's pages while the list is still being read (#41 item 2).

A 150,000-pod list arrives in 30 pages over seconds; the model holds none of it until `Listed`
(model/freshness.py: figures counting pods stay pending), and building every pod's views only then put
seconds of CPU after the last page. A store that builds per object (a view, a pod's gang keys) builds
each page as it is read (`Listing.page`, `Calls.prepare`) into a `Staged`, and its `replace` takes
what was built of each object it is given. Only what was built of that very object (identity, at
the same place in the list) is taken, so a list restarted (a 410 mid-list), a `Listed` of other
objects or a page never seen gives what `replace` gave without staging: the object is built then.
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
        """Per object of `objects`, what was built of it, or `NOT_BUILT`; nothing stays staged."""
        items, self._items = self._items, []
        return [pre[1] if pre is not None and pre[0] is obj else NOT_BUILT
                for obj, pre in zip_longest(objects, items[:len(objects)])]
