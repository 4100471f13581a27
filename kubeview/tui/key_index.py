"""Rows of a big table in display order, kept up to date one changed key at a time.

At 150,000 pods a full sort costs a few hundred milliseconds, far over the 100 ms a refresh may take.
A `KeyIndex` holds the visible keys sorted by `(value(key), key)`; after a burst of watch events only
the changed keys are removed and re-inserted (binary search, O(log n) each, plus a list memmove),
so a refresh costs what changed, not what exists. A full rebuild (new sort column, new filter,
relist) starts from the keys already sorted by name and uses numpy's stable argsort, which keeps
name order among equal values. Pure Python: no Textual, testable on its own.

Keys compare in natural order (`natural`): the digits in a name compare as numbers, so pods read
`app-9, app-86, app-90` (character by character: `-86, -9, -90`). Every comparison of keys here and
in what hands keys in sorted (the state's relists, `Contains.few`) goes through `natural`.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from functools import lru_cache
from itertools import repeat
from typing import Any, cast

import numpy as np

Key = Hashable
_DIGITS = re.compile(r"\d+")
_WIDTH = 20  # digits a number is padded to (longer ones compare as text)


def _pad(match: re.Match) -> str:
    digits = match.group()
    return digits.rjust(_WIDTH, "0") if len(digits) < _WIDTH else digits


def _natural_text(text: str) -> str:
    """`app-86-x` -> `app-000…086-x`: every number zero-padded to one width, so plain string comparison
    (in C, a tuple of strings per key) orders numbers by value. Cheaper than a tuple of text and int
    parts: a relist of 150,000 pods sorts in ~0.6 s (0.3 s once cached) instead of ~1.7 s (0.25 s character
    by character)."""
    return _DIGITS.sub(_pad, text)


@lru_cache(maxsize=1 << 18)  # a relist sorts every key; a watch event's insert compares ~17 of them
def natural(key: Key) -> Any:
    """The sort key of `key` (a name, or a tuple of names such as (namespace, name)) in natural order."""
    if isinstance(key, str):
        return _natural_text(key)
    if isinstance(key, tuple):
        return tuple(_natural_text(k) if isinstance(k, str) else k for k in key)
    return key


def natural_sorted(keys: Iterable) -> list:
    return sorted(keys, key=natural)


class Contains:
    """A filter: keys whose text (from `texts`) contains `needle`. KeyIndex runs it without a call per key."""

    __slots__ = ("needle", "texts")

    def __init__(self, needle: str, texts: Mapping[Any, str]) -> None:
        self.needle, self.texts = needle, texts

    def __call__(self, key: Key) -> bool:
        return self.needle in self.texts.get(key, "")

    def select(self, keys: Iterable) -> list:
        needle, get = self.needle, self.texts.get
        return [k for k in keys if needle in get(k, "")]

    def few(self, limit: int) -> list | None:
        """Every matching key, sorted, if there are at most `limit` (else None): one pass over the
        texts in their own order, with no lookup by key, then a sort of the few that matched.
        `texts` must not change meanwhile (call under the state's lock)."""
        needle = self.needle
        hits = [k for k, text in self.texts.items() if needle in text]
        return natural_sorted(hits) if len(hits) <= limit else None


class ItemValue:
    """A sort value per key: `get(items[key])`, or `get(gone)` for a key deleted meanwhile (a worker
    may sort while the source thread deletes). `many` computes a rebuild's worth with C-level loops
    instead of a Python call per key: a sort of 150,000 rows holds the GIL that much less."""

    __slots__ = ("gone", "get", "items")

    def __init__(self, items: Mapping[Any, Any], get: Callable[[Any], Any], gone: object) -> None:
        self.items, self.get, self.gone = items, get, gone

    def __call__(self, key: Key) -> Any:
        return self.get(self.items.get(key, self.gone))

    def many(self, keys: list) -> list:
        return list(map(self.get, map(self.items.get, keys, repeat(self.gone))))


def untracked_copy(keys: Sequence[Key]) -> Sequence[Key]:
    """A copy of `keys` the cyclic GC never walks: a list of 150,000 keys made at every refresh sat in
    the young generation, and each collection (dozens a second at 1,000 events/s) visited all its
    items: 13 ms per collection, up to 160 ms. An object array is a sequence to `bisect` and `Rows`
    alike, and numpy arrays are not GC containers (the keys are tuples of strings: no cycles)."""
    # numpy does not declare `Sequence`; a 1-d object array indexes, slices and bisects as one
    return cast("Sequence[Key]", np.fromiter(keys, dtype=object, count=len(keys)))


def _select(match: Callable[[Any], bool], keys: Iterable) -> list:
    if isinstance(match, Contains):
        return match.select(keys)
    return [k for k in keys if match(k)]


class Cancelled(Exception):
    """A rebuild was abandoned because a newer one was asked for."""


CHUNK = 4096  # keys per step of a rebuild between checks (cancelled? a key to answer first?): ~3 ms


class KeyIndex:
    """Visible keys ordered by `(value(key), natural(key))`; `value=None` orders by key alone."""

    def __init__(self, value: Callable[[Any], Any] | None = None,
                 match: Callable[[Any], bool] | None = None) -> None:
        self.value = value
        self.match = match
        self.keys: list = []
        # sort value of every visible key (sorting by value only; also membership). Ordered by key
        # alone, membership is a binary search: no set of 150,000 keys for the cyclic GC to walk.
        self._vals: dict = {}

    def __len__(self) -> int:
        return len(self.keys)

    def __contains__(self, key: object) -> bool:
        return key in self._vals if self.value is not None else self.position(key) is not None

    def position(self, key: Key) -> int | None:
        """Row of `key`, or None if it is not visible (binary search: no set needed)."""
        keys = self.keys
        if self.value is None:
            i = bisect.bisect_left(keys, natural(key), key=natural)
        else:
            vals = self._vals
            if key not in vals:
                return None
            i = bisect.bisect_left(keys, (vals[key], natural(key)), key=lambda k: (vals[k], natural(k)))
        return i if i < len(keys) and keys[i] == key else None

    def rebuild(self, by_key: list, cancelled: Callable[[], bool] | None = None) -> None:
        """All rows again from `by_key` (every present key, in natural order: `natural_sorted`).

        Runs in a worker for big tables: `cancelled()` is asked between steps of CHUNK keys, and a
        True answer raises `Cancelled` (a newer sort or filter supersedes this one; finishing it
        would only take the GIL from the UI thread)."""
        def steps(n: int) -> Iterable[slice]:
            for start in range(0, n, CHUNK):
                if cancelled is not None and cancelled():
                    raise Cancelled
                yield slice(start, start + CHUNK)

        if self.match is None:
            keys = list(by_key)
        else:
            keys = []
            for part in steps(len(by_key)):
                keys += _select(self.match, by_key[part])
        if self.value is None:
            self.keys, self._vals = keys, {}
            return
        many = getattr(self.value, "many", None) or (lambda part: [self.value(k) for k in part])
        values: list = []
        for part in steps(len(keys)):
            values += many(keys[part])
        vals: dict = {}
        for part in steps(len(keys)):
            vals.update(zip(keys[part], values[part], strict=True))
        self._vals = vals
        if keys:
            order = np.argsort(_array(values), kind="stable")  # numpy lets go of the GIL while it sorts
            keys = [keys[i] for i in order.tolist()]
        self.keys = keys

    def narrow(self, match: Callable[[Any], bool]) -> None:
        """Keep only the visible keys that also pass `match` (typing more of a filter): no re-sort."""
        self.match = match
        self.keys = _select(match, self.keys)
        if self._vals:
            vals = self._vals
            self._vals = {k: vals[k] for k in self.keys}

    def update(self, changed: Iterable, present: Callable[[Any], bool]) -> None:
        """Re-place each changed key: gone if not `present(key)` or not matching the filter."""
        for key in changed:
            if self.value is None and key in self and present(key) and (
                    self.match is None or self.match(key)):
                continue  # ordered by key alone: a modified row keeps its place
            self._remove(key)
            if present(key) and (self.match is None or self.match(key)):
                self._insert(key)

    def _remove(self, key: Key) -> None:
        if key not in self:
            return
        i = self.position(key)
        if i is not None:
            del self.keys[i]
        else:  # values changed behind our back: fall back to a scan (correct, just slower)
            self.keys.remove(key)
        self._vals.pop(key, None)

    def _insert(self, key: Key) -> None:
        if self.value is None:
            bisect.insort(self.keys, key, key=natural)
            return
        vals = self._vals
        vals[key] = self.value(key)
        bisect.insort(self.keys, key, key=lambda k: (vals[k], natural(k)))


def _array(values: list) -> np.ndarray:
    """Values as an array numpy can argsort: numbers stay numbers, anything else compares as text."""
    first = values[0]
    if isinstance(first, int | float) and not isinstance(first, bool):
        return np.asarray(values, dtype=np.float64)
    # strings, tuples: rank the distinct values with Python's ordering (there are few: node names,
    # phases), then sort integers; much faster than numpy's unicode sort over 150,000 rows
    ranks = {v: i for i, v in enumerate(sorted(set(values)))}
    return np.fromiter(map(ranks.__getitem__, values), dtype=np.int64, count=len(values))
