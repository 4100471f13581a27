"""Producer checkpoints: finished work on disk, replaced atomically.

A checkpoint is an uncompressed ``.npz`` (zip members carry CRCs) holding its format version,
the job fingerprint, the int64 fixed-point accumulator (``renderer/fixed.py``) and which tasks
it holds.  It is written to a temporary file, fsynced and moved over the old one with
``os.replace``, so a crash leaves either the old or the new checkpoint, never a torn one.
Loading checks every array against the job before anything is used.

Format 2 (this one) keeps exact integer sums; format 1 (float64 sums folded in chunk order,
with the results that arrived early kept aside) had no version member.  An older checkpoint is
refused with one line rather than read as something it is not.
"""

from __future__ import annotations

import io
import zipfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from renderer.fixed import MAX_SAMPLE
from renderer.image import write_atomic
from renderer.tasks import TaskBook

FORMAT = 2
_MEMBERS = ("format", "fingerprint", "acc", "done")


class CheckpointError(ValueError):
    """A checkpoint that cannot be used for this job (one-line message)."""


@dataclass(frozen=True)
class Snapshot:
    fingerprint: str
    acc: np.ndarray  # (H, W, 3) int64 fixed-point sums
    done: np.ndarray  # (tasks,) bool: the task's result is in acc


def snapshot(book: TaskBook, fingerprint: str) -> Snapshot:
    """A consistent copy of the book's finished work (cheap; safe to write from a thread)."""
    return Snapshot(fingerprint, book.acc.copy(), book.done_mask.copy())


def encode(snap: Snapshot) -> bytes:
    buf = io.BytesIO()
    np.savez(buf, format=np.array([FORMAT], dtype=np.int64),
             fingerprint=np.frombuffer(snap.fingerprint.encode(), dtype=np.uint8),
             acc=snap.acc, done=snap.done)
    return buf.getvalue()


def save(path: str | Path, snap: Snapshot) -> None:
    write_atomic(path, encode(snap))


def load(path: str | Path, book: TaskBook, fingerprint: str) -> Snapshot | None:
    """Read and validate a checkpoint for this job; None if the file does not exist."""
    p = Path(path)
    try:
        raw = p.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as e:
        raise CheckpointError(f"{p}: cannot read checkpoint: {e.strerror}") from None
    try:
        with np.load(io.BytesIO(raw), allow_pickle=False) as z:
            names = set(z.files)
            if "format" not in names and {"acc", "folded", "pending_ids"} <= names:
                raise CheckpointError(f"{p}: checkpoint format 1 (float sums) is from an older renderer and "
                                      f"cannot be resumed by this one (format {FORMAT}): delete it to render again")
            arrays = {k: z[k] for k in _MEMBERS}
    except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile) as e:
        if isinstance(e, CheckpointError):
            raise
        raise CheckpointError(f"{p}: not a renderer checkpoint ({e})") from None
    fmt = arrays["format"]
    if fmt.shape != (1,) or fmt.dtype.kind != "i" or int(fmt[0]) != FORMAT:
        raise CheckpointError(f"{p}: checkpoint format {fmt.ravel()[:1].tolist()} is not {FORMAT} "
                              "(a different renderer version): delete it to render again")
    if arrays["fingerprint"].tobytes() != fingerprint.encode():
        raise CheckpointError(f"{p}: checkpoint belongs to a different job (scene or settings changed)")
    acc, done = arrays["acc"], arrays["done"]
    if done.shape != (book.total,) or done.dtype != np.bool_:
        raise CheckpointError(f"{p}: done tasks do not match the job")
    if acc.shape != book.acc.shape or acc.dtype != np.int64 or not _within(acc, book, done):
        raise CheckpointError(f"{p}: accumulator does not match the job")
    return Snapshot(fingerprint, acc, done)


def _within(acc: np.ndarray, book: TaskBook, done: np.ndarray) -> bool:
    """Every sum is >= 0 and at most what its tile's done samples can add up to (so nothing the
    job adds later can overflow, and a tile with no done task is all zeros)."""
    if acc.size and acc.min() < 0:
        return False
    t = book.tile_size  # tiles are t x t, cut short at the right and bottom edges, row by row
    limit = (book.samples_per_tile(done) * MAX_SAMPLE).reshape(-1, -(-book.width // t))
    for row, y in enumerate(range(0, book.height, t)):  # per tile row: < 1 s at the job size limits
        if (acc[y:y + t].max(axis=(0, 2)) > np.repeat(limit[row], t)[:book.width]).any():
            return False
    return True
