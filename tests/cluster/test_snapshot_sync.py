"""`snapshot`'s initial sync waits while the lists move and gives up once nothing comes for its timeout."""

from __future__ import annotations

import threading
import time

import pytest

from kubeview.cluster.source import SourceError
from kubeview.commands.snapshot import sync
from kubeview.model.events import KINDS, Listed, Listing


class PagedSource:
    """Lists every kind at once except pods, whose pages come `gap` s apart (`pages` of them), then
    the Pod list, unless `stall`: then nothing more. A source as the snapshot sees one (run/kinds)."""

    title = "paged"
    is_local = False
    kinds = KINDS

    def __init__(self, pages: int, gap: float, stall: bool = False) -> None:
        self.pages, self.gap, self.stall = pages, gap, stall

    def run(self, emit, stop: threading.Event) -> None:  # noqa: ANN001
        for kind in KINDS:
            if kind != "Pod":
                emit(Listed(kind, [], "1"))
        for page in range(1, self.pages + 1):
            if stop.wait(self.gap):
                return
            emit(Listing("Pod", page * 5000))
        if not self.stall:
            emit(Listed("Pod", [], "2"))
        stop.wait()

    def close(self) -> None:
        pass


def test_a_list_whose_pages_keep_coming_is_waited_for_past_the_timeout() -> None:
    started = time.monotonic()
    model = sync(PagedSource(pages=6, gap=0.2), timeout=0.6)  # 1.2 s of pages, none more than 0.6 s apart
    assert model.is_synced(KINDS) and time.monotonic() - started > 1.1
    assert model.listing == {}  # the list is done


def test_a_list_that_stops_moving_fails_in_one_line_with_what_it_read() -> None:
    with pytest.raises(SourceError) as err:
        sync(PagedSource(pages=2, gap=0.1, stall=True), timeout=0.5)
    text = str(err.value)
    assert "\n" not in text
    assert "sent nothing for 0.5 s" in text and "still waiting for: Pod (10,000 read)" in text
