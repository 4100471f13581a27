"""Where a producer's work is kept: the checkpoint while it renders, the image files at the end.

The checkpoint is resumed from at start, saved as chunks finish (bursts coalesce) and once more
with the result; the final write is retried while the process is out of fds (fd_budget.py), so a
computed image is never lost to a burst of connections (issue 23).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from pathlib import Path

import numpy as np

from renderer import checkpoint as ckpt
from renderer import fd_budget
from renderer.image import write_or_keep
from renderer.tasks import TaskBook

log = logging.getLogger("renderer.producer")
FD_RETRY_SECONDS = 60.0
"""How long writing the result is retried while the process is out of fds (see fd_budget.py)."""


class ResultFiles:
    """The checkpoint file (if any) and the outputs of one job; `book` is the job's tasks."""

    def __init__(self, book: TaskBook, fingerprint: str, scene_name: str, *, output: str | Path | None,
                 raw: str | Path | None, checkpoint: str | Path | None, clock: Callable[[], float]) -> None:
        self.book, self.fingerprint, self.scene_name = book, fingerprint, scene_name
        self.output, self.raw, self.checkpoint_path = output, raw, checkpoint
        self.clock = clock
        self._lock = asyncio.Lock()

    def resume(self) -> None:
        """Restore the finished tasks of an earlier run of the same job from the checkpoint."""
        if self.checkpoint_path is None:
            return
        snap = ckpt.load(self.checkpoint_path, self.book, self.fingerprint)
        if snap is not None:
            self.book.restore(snap.acc, snap.done)
            log.info("resumed from %s: %d/%d tasks already done", self.checkpoint_path,
                     self.book.done, self.book.total)

    async def save_checkpoint(self) -> None:
        if self.checkpoint_path is None:
            return
        async with self._lock:  # one writer at a time; the last snapshot taken lands last
            snap = ckpt.snapshot(self.book, self.fingerprint)
            await asyncio.get_running_loop().run_in_executor(None, ckpt.save, self.checkpoint_path, snap)

    async def keep_saving(self, dirty: asyncio.Event) -> None:
        """Persist finished chunks as they arrive (`dirty` set); bursts coalesce (<= ~20% of the time
        writing)."""
        while True:
            await dirty.wait()
            dirty.clear()
            t0 = self.clock()
            try:
                await self.save_checkpoint()
            except Exception as e:  # keep serving; the next result tries again
                log.error("cannot write checkpoint %s: %s", self.checkpoint_path, e)
            await asyncio.sleep(min(5.0, 4.0 * (self.clock() - t0)))

    async def write(self, image: np.ndarray) -> None:
        """The checkpoint and the outputs. Out of fds is retried for ``FD_RETRY_SECONDS``: a burst
        of connections holds every fd until the loop refuses those over the cap (fd_budget.py), and
        a computed image must not be lost to that moment (issue 23: exit 1 at ``nofile`` 64)."""
        deadline = self.clock() + FD_RETRY_SECONDS
        pause, tries = 0.02, 0
        while True:
            try:
                await self.save_checkpoint()
                await asyncio.get_running_loop().run_in_executor(None, write_or_keep, image, self.output, self.raw,
                                                                 f"{self.scene_name}-{self.fingerprint[:12]}")
            except OSError as e:
                if e.errno not in fd_budget.SHORT_OF_FDS or self.clock() >= deadline:
                    raise
                tries += 1
                if tries == 1:
                    log.warning("writing the result: %s; trying again for up to %.0f s", e.strerror, FD_RETRY_SECONDS)
                await asyncio.sleep(pause)
                pause = min(0.5, 2 * pause)
                continue
            if tries:
                log.info("wrote the result after %d tries (out of fds)", tries + 1)
            return
