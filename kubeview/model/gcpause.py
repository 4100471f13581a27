"""Pause Python's cyclic garbage collector around bulk allocation of acyclic data.

A relist of 150,000 pods or a snapshot document allocates millions of small dicts and tuples; each
allocation burst makes the collector walk every live object again (seconds at that size), though
none of these structures can form a cycle. Reference counting still frees them.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def gc_paused() -> Iterator[None]:
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
