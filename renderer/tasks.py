"""The producer's book of tasks: leases, requeues, idempotent results, exact reduction.

Pure bookkeeping (no I/O, time is passed in).  A job of ``T`` tiles and ``C`` sample
chunks has ``T * C`` tasks; task ``id = chunk * T + tile``, so handing out the lowest id
first refines the whole image chunk after chunk.  A result is int64 fixed-point sums
(``renderer/fixed.py``) and is added to the accumulator as soon as it arrives: integer
addition is exact and associative, so the image is the same bits whichever consumer
finished what, and when, and however the job is tiled and chunked.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass

import numpy as np

from renderer.fixed import to_image
from renderer.protocol import Task
from renderer.scene import Scene, chunk_ranges


@dataclass(frozen=True)
class TaskSpec(Task):
    """A task as the wire carries it, plus where it sits in the job (tile index, chunk index)."""

    tile: int
    chunk: int


@dataclass
class Lease:
    owner: str
    expires: float
    since: float = 0.0


def lease_seconds(durations: list[float], floor: float, ceiling: float, multiple: float = 4.0,
                  min_samples: int = 8) -> float:
    """How long a lease lasts: ``multiple`` x the 95th percentile of observed task times, within
    [floor, ceiling]; ``ceiling`` until ``min_samples`` tasks were timed.  A stopped consumer then
    holds its tasks for seconds, not the fixed 300 s that kept a render at "100.0%" for 46 s."""
    if len(durations) < min_samples:
        return ceiling
    ordered = sorted(durations)
    p95 = ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))]
    return min(ceiling, max(min(floor, ceiling), multiple * p95))


class TaskBook:
    """Which tasks are queued, leased or done; the accumulated fixed-point sums."""

    def __init__(self, scene: Scene) -> None:
        self.width, self.height, self.spp = scene.width, scene.height, scene.spp
        self.tile_size = t = scene.tile
        self.tiles = [(x, y, min(t, scene.width - x), min(t, scene.height - y))
                      for y in range(0, scene.height, t) for x in range(0, scene.width, t)]
        self.chunks = chunk_ranges(scene.spp, scene.chunk)
        self.n_tiles, self.n_chunks = len(self.tiles), len(self.chunks)
        self.total = self.n_tiles * self.n_chunks
        self.samples_total = scene.width * scene.height * scene.spp
        self.acc = np.zeros((scene.height, scene.width, 3), dtype=np.int64)
        self.done_mask = np.zeros(self.total, dtype=bool)  # task id -> its result is in acc
        self.tile_samples = np.zeros(self.n_tiles, dtype=np.int64)  # samples per pixel in acc, per tile
        self.leases: dict[int, Lease] = {}
        self.history: dict[str, set[int]] = {}  # owner -> task ids ever leased to it
        self.done_by: dict[int, str] = {}  # task -> owner whose result was recorded (for discard)
        self.exclude: dict[int, frozenset[str]] = {}  # task -> owners it must not be leased to (verify)
        self._heap = list(range(self.total))
        self._queued = set(self._heap)
        self.done = 0
        self.samples_done = 0
        self.requeued = 0

    # -- queries -----------------------------------------------------------------------
    def spec(self, task_id: int) -> TaskSpec:
        chunk, tile = divmod(task_id, self.n_tiles)
        x, y, w, h = self.tiles[tile]
        s0, s1 = self.chunks[chunk]
        return TaskSpec(task_id, x, y, w, h, s0, s1, tile=tile, chunk=chunk)

    def is_done(self, task_id: int) -> bool:
        return bool(self.done_mask[task_id])

    @property
    def finished(self) -> bool:
        return self.done == self.total

    @property
    def queued(self) -> int:
        return len(self._queued)

    def leased_by(self, owner: str) -> list[int]:
        return [tid for tid, lease in self.leases.items() if lease.owner == owner]

    # -- leases ------------------------------------------------------------------------
    def lease(self, owner: str, now: float, duration: float) -> TaskSpec | None:
        """Lease the lowest queued task to ``owner``, or None if nothing is queued."""
        skipped: list[int] = []
        found = None
        while self._heap:
            tid = heapq.heappop(self._heap)
            if tid not in self._queued:
                continue
            if owner in self.exclude.get(tid, ()):
                skipped.append(tid)
                continue
            self._queued.discard(tid)
            self.leases[tid] = Lease(owner, now + duration, now)
            self.history.setdefault(owner, set()).add(tid)
            found = self.spec(tid)
            break
        for tid in skipped:
            heapq.heappush(self._heap, tid)
        return found

    def again_elsewhere(self, owner: str, task_id: int, exclude: frozenset[str]) -> None:
        """Take ``owner``'s lease back without recording its result; lease the task to someone
        not in ``exclude`` (result verification)."""
        lease = self.leases.get(task_id)
        if lease is not None and lease.owner == owner:
            del self.leases[task_id]
        if not self.is_done(task_id) and task_id not in self._queued and task_id not in self.leases:
            self._queued.add(task_id)
            heapq.heappush(self._heap, task_id)
        self.exclude[task_id] = exclude

    def discard(self, owner: str) -> int:
        """Throw away every result recorded from ``owner``: each tile it touched is emptied and all
        that tile's done chunks are queued again (the book keeps sums, not each result).
        Returns the number of tasks queued again."""
        tiles = {tid % self.n_tiles for tid, o in self.done_by.items() if o == owner}
        n = 0
        for tile in tiles:
            for chunk in range(self.n_chunks):
                tid = chunk * self.n_tiles + tile
                if self.is_done(tid):
                    self.done_mask[tid] = False
                    self.done_by.pop(tid, None)
                    self.done -= 1
                    self.samples_done -= self.spec(tid).samples
                    self._queued.add(tid)
                    heapq.heappush(self._heap, tid)
                    n += 1
            x, y, w, h = self.tiles[tile]
            self.acc[y:y + h, x:x + w] = 0
            self.tile_samples[tile] = 0
        return n

    def _requeue(self, tid: int) -> None:
        del self.leases[tid]
        self._queued.add(tid)
        heapq.heappush(self._heap, tid)
        self.requeued += 1

    def give_back(self, owner: str, task_id: int) -> bool:
        """The owner hands a leased task back; True if it was queued again."""
        lease = self.leases.get(task_id)
        if lease is None or lease.owner != owner:
            return False
        self._requeue(task_id)
        return True

    def release(self, owner: str) -> int:
        """The owner is gone: requeue its leases, forget its history.  Returns the count."""
        mine = self.leased_by(owner)
        for tid in mine:
            self._requeue(tid)
        self.history.pop(owner, None)
        return len(mine)

    def expire(self, now: float) -> list[tuple[int, str]]:
        """Requeue leases that ran out: [(task id, owner), ...]."""
        late = [(tid, lease.owner) for tid, lease in self.leases.items() if lease.expires <= now]
        for tid, _ in late:
            self._requeue(tid)
        return late

    # -- results -----------------------------------------------------------------------
    def complete(self, owner: str, task_id: int, data: np.ndarray) -> bool:
        """Record a result (added to the sums at once).  False (and nothing changes) if it is a
        duplicate or late one, or if the task was never leased to ``owner``.  The caller checks
        ``data``: its shape, int64, and each value at most the task's samples x ``fixed.MAX_SAMPLE``."""
        if task_id >= self.total or task_id not in self.history.get(owner, ()):
            return False
        if self.is_done(task_id):
            return False
        spec = self.spec(task_id)
        self.leases.pop(task_id, None)
        self._queued.discard(task_id)
        self.acc[spec.y:spec.y + spec.h, spec.x:spec.x + spec.w] += data
        self.done_mask[task_id] = True
        self.tile_samples[spec.tile] += spec.s1 - spec.s0
        self.done_by[task_id] = owner
        self.exclude.pop(task_id, None)
        self.done += 1
        self.samples_done += spec.samples
        return True

    def restore(self, acc: np.ndarray, done_mask: np.ndarray) -> None:
        """Resume from a checkpoint (already validated against this job)."""
        self.acc[...] = acc
        self.done_mask[:] = done_mask
        done = np.flatnonzero(self.done_mask).tolist()
        self.tile_samples[:] = self.samples_per_tile(self.done_mask)
        self._queued.difference_update(done)
        self._heap = sorted(self._queued)
        self.done = len(done)
        self.samples_done = sum(self.spec(tid).samples for tid in done)

    def samples_per_tile(self, done_mask: np.ndarray) -> np.ndarray:
        """Samples per pixel that the done tasks of ``done_mask`` add up to, per tile."""
        per_chunk = np.array([s1 - s0 for s0, s1 in self.chunks], dtype=np.int64)
        return (done_mask.reshape(self.n_chunks, self.n_tiles) * per_chunk[:, None]).sum(axis=0)

    # -- images ------------------------------------------------------------------------
    def tile_image(self, tile: int) -> np.ndarray | None:
        """One tile's sums so far / its samples so far (float64), or None if it has none yet."""
        n = int(self.tile_samples[tile])
        if not n:
            return None
        x, y, w, h = self.tiles[tile]
        return to_image(self.acc[y:y + h, x:x + w], n)

    def image_so_far(self) -> np.ndarray:
        """Each tile's sums / its samples so far (black where none yet)."""
        img = np.zeros(self.acc.shape, dtype=np.float64)
        for tile, (x, y, w, h) in enumerate(self.tiles):
            part = self.tile_image(tile)
            if part is not None:
                img[y:y + h, x:x + w] = part
        return img

    def final_image(self) -> np.ndarray:
        """The finished image: sums / (SCALE * spp), the bits of kernels.accumulate_image."""
        if not self.finished:
            raise RuntimeError("job not finished")
        return to_image(self.acc, self.spp)
