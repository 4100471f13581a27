"""Compiled loops for the extender's hot path: node names in a request body to model rows, and the
replies' name lists back to bytes, without a Python object per name.

With `nodeCacheCapable: true` every filter and prioritize call carries up to 5,000 node names. Decoding
them with `json` and looking each up in a dict costs ~0.7 ms of Python per call; these loops do it in
tens of microseconds over the body's bytes. They accept only the plain subset of JSON that real node
names use (printable ASCII strings without escapes; Kubernetes node names are DNS subdomains) and
answer "not mine" for anything else, so the caller falls back to `json` (see `name_table.py`).

Names live in a `blob` (all names' bytes, concatenated) with `offsets` (N+1), and an open-addressing
table `slots` (power-of-two size, -1 empty) keyed by a rotate-xor hash of the bytes with murmur3's
64-bit finaliser: one cheap step per byte, so hashing rides along the scan that validates the bytes
(FNV-1a's multiply per byte doubled the scan's time). Lookups compare the bytes, so the hash only has
to spread names, not be collision-free.
"""

from __future__ import annotations

import numpy as np
from numba import njit

_ROT, _BACK = np.uint64(7), np.uint64(57)
_S33, _M1, _M2 = np.uint64(33), np.uint64(0xFF51AFD7ED558CCD), np.uint64(0xC4CEB9FE1A85EC53)
NOT_PLAIN = -1  # the scanner met something outside the plain subset: decode with json instead
_QUOTE, _BACKSLASH, _COMMA, _OPEN, _CLOSE = 34, 92, 44, 91, 93


def _jit(func):
    """`njit(cache=True)`, or without the on-disk cache where there is no writable place for it (a
    read-only root filesystem without NUMBA_CACHE_DIR): numba refuses `cache=True` there outright."""
    try:
        return njit(cache=True, nogil=True)(func)
    except RuntimeError:
        return njit(nogil=True)(func)


@_jit
def _step(h, c):
    return ((h << _ROT) | (h >> _BACK)) ^ np.uint64(c)


@_jit
def _finish(h, length):
    h ^= np.uint64(length)
    h ^= h >> _S33
    h *= _M1
    h ^= h >> _S33
    h *= _M2
    return h ^ (h >> _S33)


@_jit
def name_hash(buf, start, end):
    h = np.uint64(0)
    for i in range(start, end):
        h = _step(h, buf[i])
    return _finish(h, end - start)


@_jit
def build_slots(blob, offsets, size):
    """The hash table over names `blob[offsets[r]:offsets[r+1]]`; a later duplicate name is not added."""
    slots = np.full(size, -1, dtype=np.int64)
    mask = np.uint64(size - 1)
    for r in range(len(offsets) - 1):
        a, b = offsets[r], offsets[r + 1]
        j = name_hash(blob, a, b) & mask
        while slots[j] >= 0:
            o = slots[j]
            if _same(blob, offsets[o], offsets[o + 1], blob, a, b):
                break
            j = (j + np.uint64(1)) & mask
        if slots[j] < 0:
            slots[j] = r
    return slots


@_jit
def _same(x, xa, xb, y, ya, yb):
    if xb - xa != yb - ya:
        return False
    for k in range(xb - xa):  # noqa: SIM110 (numba compiles loops, not generators)
        if x[xa + k] != y[ya + k]:
            return False
    return True


@_jit
def _skip_ws(buf, pos):
    n = len(buf)
    while pos < n and (buf[pos] == 32 or buf[pos] == 9 or buf[pos] == 10 or buf[pos] == 13):
        pos += 1
    return pos


@_jit
def scan_names(buf, pos, blob, offsets, slots, rows):
    """Read the JSON array of strings starting at `buf[pos]` into `rows` (row of each name, -1 for a
    name not in the table). Returns (count, end) with `end` just past the `]`, or (NOT_PLAIN, pos)."""
    n = len(buf)
    mask = np.uint64(len(slots) - 1)
    if pos >= n or buf[pos] != _OPEN:
        return NOT_PLAIN, pos
    pos = _skip_ws(buf, pos + 1)
    count = 0
    if pos < n and buf[pos] == _CLOSE:
        return 0, pos + 1
    while True:
        if pos >= n or buf[pos] != _QUOTE:
            return NOT_PLAIN, pos
        pos += 1
        start = pos
        h = np.uint64(0)
        while pos < n:
            c = buf[pos]
            if c == _QUOTE:
                break
            if c < 32 or c > 126 or c == _BACKSLASH:
                return NOT_PLAIN, pos
            h = _step(h, c)
            pos += 1
        if pos >= n or count >= len(rows):
            return NOT_PLAIN, pos
        end = pos
        row = -1
        j = _finish(h, end - start) & mask
        while slots[j] >= 0:
            o = slots[j]
            if _same(blob, offsets[o], offsets[o + 1], buf, start, end):
                row = o
                break
            j = (j + np.uint64(1)) & mask
        rows[count] = row
        count += 1
        pos = _skip_ws(buf, pos + 1)
        if pos >= n:
            return NOT_PLAIN, pos
        if buf[pos] == _CLOSE:
            return count, pos + 1
        if buf[pos] != _COMMA:
            return NOT_PLAIN, pos
        pos = _skip_ws(buf, pos + 1)


@_jit
def write_chunks(chunks, starts, rows, scores):
    """A JSON array of each row's pre-encoded chunk (`chunks[starts[r]:starts[r+1]]`), in `rows` order
    (all >= 0). With `scores`, each chunk is followed by its score (0..99) and `}`: chunks
    `{"Host":"a","Score":` make a HostPriorityList, chunks `"a"` a list of names."""
    scored = len(scores) > 0
    size = 2 + 4 * len(rows)
    for r in rows:
        size += starts[r + 1] - starts[r]
    out = np.empty(size, dtype=np.uint8)
    out[0] = _OPEN
    k = 1
    for i in range(len(rows)):
        r = rows[i]
        if i:
            out[k] = _COMMA
            k += 1
        for j in range(starts[r], starts[r + 1]):
            out[k] = chunks[j]
            k += 1
        if scored:
            s = scores[i]
            if s >= 10:
                out[k] = 48 + s // 10
                k += 1
            out[k] = 48 + s % 10
            out[k + 1] = 125  # }
            k += 2
    out[k] = _CLOSE
    return out[:k + 1]
