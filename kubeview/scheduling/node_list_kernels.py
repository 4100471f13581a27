"""Compiled scan of a NodeList's JSON: where each of its `items` begins and ends, the rest validated.

With `nodeCacheCapable: false` every filter and prioritize call carries full Node objects (~4 KB each,
2 MB for 500 nodes) and `json` spends ~30 ms a call building dicts for them. But kube-scheduler sends
the same bytes for a node until the node changes, so the extender only needs each item's span: items
it has seen are looked up by their bytes (`node_objects.py`) and only new ones are decoded.

`scan_items` accepts a strict subset of what `json` accepts (no NaN/Infinity, no escapes in the
NodeList's own keys, one `items` member, items that are objects, nesting below `MAX_DEPTH`) and answers
`NOT_PLAIN` for anything else, valid or not: the caller then decodes with `json`, which gives the
value or the exact error. So what is accepted here is always what `json` would accept.
"""

from __future__ import annotations

import numpy as np

from kubeview.scheduling.name_kernels import NOT_PLAIN, _jit, _skip_ws

MAX_DEPTH = 256
_QUOTE, _BACKSLASH, _COMMA, _COLON = 34, 92, 44, 58
_OPEN_ARRAY, _CLOSE_ARRAY, _OPEN_OBJECT, _CLOSE_OBJECT = 91, 93, 123, 125
_ESCAPES = np.zeros(256, dtype=np.bool_)  # may follow a backslash
for _c in b'"\\/bfnrt':
    _ESCAPES[_c] = True
_HEX = np.zeros(256, dtype=np.bool_)
for _c in b"0123456789abcdefABCDEF":
    _HEX[_c] = True
_TRUE, _FALSE, _NULL = (np.frombuffer(w, dtype=np.uint8) for w in (b"true", b"false", b"null"))


@_jit
def _string_end(buf, pos, escapes, hexdigits):
    """`buf[pos]` is just past an opening quote: the offset past the closing one, or -1 (with the
    position of the first backslash in the second value, -1 when there is none)."""
    n = len(buf)
    backslash = -1
    while pos < n:
        c = buf[pos]
        if c == _QUOTE:
            return pos + 1, backslash
        if c < 32:
            return -1, backslash
        if c == _BACKSLASH:
            if backslash < 0:
                backslash = pos
            if pos + 1 >= n or not escapes[buf[pos + 1]]:
                if pos + 1 < n and buf[pos + 1] == 117:  # \uXXXX
                    if pos + 5 >= n:
                        return -1, backslash
                    for k in range(pos + 2, pos + 6):
                        if not hexdigits[buf[k]]:
                            return -1, backslash
                    pos += 6
                    continue
                return -1, backslash
            pos += 2
            continue
        pos += 1
    return -1, backslash


@_jit
def _digits_end(buf, pos):
    n = len(buf)
    while pos < n and 48 <= buf[pos] <= 57:
        pos += 1
    return pos


@_jit
def _number_end(buf, pos):
    """JSON's number grammar, as `json`'s own pattern: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][-+]?[0-9]+)?"""
    n = len(buf)
    if pos < n and buf[pos] == 45:
        pos += 1
    if pos >= n or not 48 <= buf[pos] <= 57:
        return -1
    pos = pos + 1 if buf[pos] == 48 else _digits_end(buf, pos)
    if pos < n and buf[pos] == 46:
        end = _digits_end(buf, pos + 1)
        if end == pos + 1:
            return -1
        pos = end
    if pos < n and (buf[pos] == 101 or buf[pos] == 69):
        pos += 1
        if pos < n and (buf[pos] == 43 or buf[pos] == 45):
            pos += 1
        end = _digits_end(buf, pos)
        if end == pos:
            return -1
        pos = end
    return pos


@_jit
def _word_end(buf, pos, word):
    if pos + len(word) > len(buf):
        return -1
    for k in range(len(word)):
        if buf[pos + k] != word[k]:
            return -1
    return pos + len(word)


@_jit
def scan_items(buf, pos, key, starts, ends, escapes, hexdigits, true, false, null):
    """The JSON object at `buf[pos]` must have one member `key` whose value is an array of objects:
    their spans go to `starts`/`ends`. Returns (count, end past the object) or (NOT_PLAIN, pos)."""
    n = len(buf)
    kinds = np.empty(MAX_DEPTH, dtype=np.uint8)  # per open container: 1 object, 0 array
    depth = 0
    count = 0
    found = False  # the member `key` was seen
    key_next = False  # the value about to be read is the member `key`'s
    in_items = False  # the array open at depth 2 is that value
    pos = _skip_ws(buf, pos)
    if pos >= n or buf[pos] != _OPEN_OBJECT:
        return NOT_PLAIN, pos
    while True:
        # a value starts at buf[pos] (whitespace skipped)
        if pos >= n:
            return NOT_PLAIN, pos
        c = buf[pos]
        if depth == 2 and in_items:
            if c != _OPEN_OBJECT or count >= len(starts):
                return NOT_PLAIN, pos
            starts[count] = pos
        need_key = False  # an object's member comes next, not a value
        if c in (_OPEN_OBJECT, _OPEN_ARRAY):
            if depth >= MAX_DEPTH or (key_next and c != _OPEN_ARRAY):
                return NOT_PLAIN, pos
            kinds[depth] = 1 if c == _OPEN_OBJECT else 0
            depth += 1
            pos = _skip_ws(buf, pos + 1)
            if pos < n and buf[pos] == (_CLOSE_OBJECT if c == _OPEN_OBJECT else _CLOSE_ARRAY):
                pos += 1
                depth -= 1
                ended = True
            else:
                in_items = in_items or key_next
                need_key = c == _OPEN_OBJECT
                ended = False
        elif key_next:
            return NOT_PLAIN, pos
        else:
            if c == _QUOTE:
                pos, _ = _string_end(buf, pos + 1, escapes, hexdigits)
            elif c == 116:
                pos = _word_end(buf, pos, true)
            elif c == 102:
                pos = _word_end(buf, pos, false)
            elif c == 110:
                pos = _word_end(buf, pos, null)
            else:
                pos = _number_end(buf, pos)
            if pos < 0:
                return NOT_PLAIN, 0
            ended = True
        key_next = False
        while ended:
            # a value ended just before buf[pos]; its container is kinds[depth - 1]
            if depth == 0:
                return (count, pos) if found else (NOT_PLAIN, pos)
            if depth == 2 and in_items:
                ends[count] = pos
                count += 1
            pos = _skip_ws(buf, pos)
            if pos >= n:
                return NOT_PLAIN, pos
            c = buf[pos]
            if c == _COMMA:
                pos = _skip_ws(buf, pos + 1)
                need_key = kinds[depth - 1] == 1
                break
            if c != (_CLOSE_OBJECT if kinds[depth - 1] == 1 else _CLOSE_ARRAY):
                return NOT_PLAIN, pos
            pos += 1
            depth -= 1
            if depth == 1:
                in_items = False
        if not need_key:
            continue
        # an object's member: "key" ws : ws value
        if pos >= n or buf[pos] != _QUOTE:
            return NOT_PLAIN, pos
        start = pos + 1
        pos, backslash = _string_end(buf, start, escapes, hexdigits)
        if pos < 0:
            return NOT_PLAIN, start
        if depth == 1:
            if backslash >= 0:
                return NOT_PLAIN, start  # an escaped key might spell `key`: json decides
            if pos - 1 - start == len(key) and _word_end(buf, start, key) == pos - 1:
                if found:
                    return NOT_PLAIN, start  # a repeated member: json keeps the last one
                found = True
                key_next = True
        pos = _skip_ws(buf, pos)
        if pos >= n or buf[pos] != _COLON:
            return NOT_PLAIN, pos
        pos = _skip_ws(buf, pos + 1)
