"""The model's node names laid out for the compiled loops in `name_kernels.py`: one table per node set.

`NameTable.of(names)` is None when the fast path cannot serve these names (a name outside printable
ASCII, or with a quote or backslash, which Kubernetes never allows in a node name; or numba missing
or failing to compile) and callers use `json` and dicts instead, with the same results.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

import numpy as np

log = logging.getLogger("kubeview.extender")

_PRINTABLE = bytes(range(0x20, 0x7F)).replace(b'"', b"").replace(b"\\", b"")
_kernels = None  # the module, once imported; False after it failed


def kernels():
    """`name_kernels`, imported (and compiled, with `node_list_kernels`) on first use; None where numba
    cannot serve."""
    global _kernels
    if _kernels is None:
        try:
            from kubeview.scheduling import name_kernels, node_list_kernels

            _warm(name_kernels)
            _warm_node_list(node_list_kernels)
            _kernels = name_kernels
        except Exception as exc:  # an ImportError, or numba failing to compile here: json serves
            log.warning("compiled name lookup unavailable (%s: %s); using json", type(exc).__name__, exc)
            _kernels = False
    return _kernels or None


def _warm(k) -> None:
    """Compile every kernel now (a second or two, or a cache load), not inside a request."""
    blob = np.frombuffer(b"ab", dtype=np.uint8)
    offsets = np.array([0, 1, 2], dtype=np.int64)
    slots = k.build_slots(blob, offsets, 4)
    rows = np.empty(4, dtype=np.int64)
    k.scan_names(np.frombuffer(b'["a","c"]', dtype=np.uint8), 0, blob, offsets, slots, rows)
    k.write_chunks(blob, offsets, rows[:1].clip(0), _NO_SCORES)
    k.write_chunks(blob, offsets, rows[:1].clip(0), np.zeros(1, dtype=np.int64))


def _warm_node_list(k) -> None:
    body = np.frombuffer(b'{"metadata":{},"items":[{"a":[1,-2.5e3,true,false,null,"\\u00e9"]}]}', dtype=np.uint8)
    spans = np.empty(2, dtype=np.int64)
    k.scan_items(body, 0, np.frombuffer(b"items", dtype=np.uint8), spans, spans.copy(), k._ESCAPES, k._HEX,
                 k._TRUE, k._FALSE, k._NULL)


_NO_SCORES = np.zeros(0, dtype=np.int64)


def plain(names: list[str]) -> bool:
    """True when no name needs escaping in a JSON string (printable ASCII without quote or backslash)."""
    joined = "".join(names)
    return joined.isascii() and not joined.encode().translate(None, _PRINTABLE)


@dataclass(frozen=True, slots=True)
class NameTable:
    names: list[str]  # row -> name (the model's list, shared, never changed)
    blob: np.ndarray  # uint8: every name's bytes, concatenated
    offsets: np.ndarray  # int64 (N+1,): name r is blob[offsets[r]:offsets[r+1]]
    slots: np.ndarray  # int64 hash table of rows (see name_kernels)
    quoted: tuple[np.ndarray, np.ndarray]  # (blob, offsets) of `"name"`: NodeNames replies
    hosts: tuple[np.ndarray, np.ndarray]  # (blob, offsets) of `{"Host":"name","Score":`: prioritize replies

    @classmethod
    def of(cls, names: list[str]) -> NameTable | None:
        k = kernels()
        if k is None or not plain(names):
            return None
        blob, offsets = _chunks(names)
        size = 1 << max(3, (2 * len(names) - 1).bit_length())  # at most half full
        return cls(names, blob, offsets, k.build_slots(blob, offsets, size), _chunks([f'"{n}"' for n in names]),
                   _chunks([f'{{"Host":"{n}","Score":' for n in names]))

    def scan(self, body: bytes, start: int) -> tuple[np.ndarray, int] | None:
        """(rows of the names in the JSON array at `body[start]`, -1 for unknown ones; the offset just
        past the array), or None when the array is not plain JSON strings (decode it with json)."""
        buf = np.frombuffer(body, dtype=np.uint8)
        rows = np.empty((len(body) - start) // 3 + 1, dtype=np.int64)  # a name takes 3 bytes at least ("",)
        count, end = _kernels.scan_names(buf, start, self.blob, self.offsets, self.slots, rows)
        if count < 0:
            return None
        return rows[:count], int(end)

    def names_json(self, rows: np.ndarray) -> bytes:
        """`["name",...]` for known `rows`."""
        rows = np.ascontiguousarray(rows, dtype=np.int64)
        return _kernels.write_chunks(*self.quoted, rows, _NO_SCORES).tobytes()

    def host_priority_json(self, rows: np.ndarray, scores: np.ndarray) -> bytes:
        """kube-scheduler's HostPriorityList for known `rows` and their scores (0..10)."""
        rows = np.ascontiguousarray(rows, dtype=np.int64)
        scores = np.ascontiguousarray(scores, dtype=np.int64)
        return _kernels.write_chunks(*self.hosts, rows, scores).tobytes()


def _chunks(texts: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """ASCII texts as one byte blob and their offsets (N+1): text r is blob[offsets[r]:offsets[r+1]]."""
    blob = np.frombuffer("".join(texts).encode(), dtype=np.uint8)
    offsets = np.zeros(len(texts) + 1, dtype=np.int64)
    np.cumsum([len(t) for t in texts], out=offsets[1:])
    return blob, offsets
