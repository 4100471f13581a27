"""Run a ClusterSource for a fixed number of watch requests per informer and collect what it emits."""

from __future__ import annotations

import threading


def collect_events(src, iterations: int) -> list:
    """`src.run(..., _iterations=iterations)` with a thread-safe list as `emit`; the source is closed after."""
    events: list = []
    lock = threading.Lock()

    def emit(e) -> None:
        with lock:
            events.append(e)

    try:
        src.run(emit, threading.Event(), _iterations=iterations)
    finally:
        src.close()
    return events
