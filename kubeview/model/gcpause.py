"""Pause Python's cyclic garbage collector around bulk allocation of acyclic data.

A relist of 150,000 pods or a snapshot document allocates millions of small dicts and tuples; each
allocation burst makes the collector walk every live object again (seconds at that size), though
none of these structures can form a cycle. Reference counting still frees them.

A pause alone only moves that walk: everything made under it sits in the youngest generation, and
the collections that follow re-enabling walk it, promote it and, a few list applies later, make the
oldest generation 25 % new, which fires a full collection over every live object (the lists being
applied included): 2 s at 150,000 pods. Whether it fires inside a build or just after one depends on
the collector's counters, so on the process's history (imports, versions): `bench model --dra` took
3.5 s on a fresh environment and 1.6 s on another. `keep=True`, for long-lived bulk (a relist's
views), freezes what is live at the end of the pause (gc.freeze): no later collection walks it.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

BULK = 1000  # objects in one list from which its views are kept out of the collector's walks


@contextmanager
def gc_paused(keep: bool = False) -> Iterator[None]:
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if keep:
            gc.freeze()  # the young generation too: re-enabling then triggers no walk of the bulk
        if was_enabled:
            gc.enable()
