"""glibc's heap set up for the extender's multi-megabyte request and reply buffers.

By default glibc serves a large allocation with a fresh mmap and hands the heap's free top back to
the system once it passes a threshold, so each 2 MB body or reply of a full-Nodes call lands in
pages never touched before: the page faults cost ~1 ms per call here (a 2 MB prioritize after a
2 MB filter reply: 1.95 ms round trip, 1.14 ms with this; docs/architecture.md). Raising both
thresholds keeps those buffers in pages already mapped. The memory kept is bounded by the trim
threshold (the server's bodies-in-flight cap). Linux with glibc only; elsewhere nothing changes.
"""

from __future__ import annotations

import ctypes

M_TRIM_THRESHOLD = -1  # glibc's mallopt parameters (malloc.h)
M_MMAP_THRESHOLD = -3
MMAP_THRESHOLD_MAX = 32 * 1024 * 1024  # glibc refuses more on 64-bit


def keep_large_buffers(largest: int, keep: int) -> bool:
    """Serve allocations up to `largest` bytes from the heap and keep up to `keep` bytes of freed heap
    mapped. True when glibc took both settings; process-wide (the extender owns its process)."""
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):  # not glibc
        return False
    mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    mallopt.restype = ctypes.c_int
    return bool(mallopt(M_MMAP_THRESHOLD, min(largest, MMAP_THRESHOLD_MAX))) and bool(mallopt(M_TRIM_THRESHOLD, keep))
