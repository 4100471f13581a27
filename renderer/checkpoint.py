"""Producer checkpoints: finished chunk sums on disk, replaced atomically.

A checkpoint is an uncompressed ``.npz`` (zip members carry CRCs) holding the job
fingerprint, the accumulator, the number of chunks folded per tile, and the results that
arrived ahead of their turn.  It is written to a temporary file, fsynced and moved over
the old one with ``os.replace``, so a crash leaves either the old or the new checkpoint,
never a torn one.  Loading checks every array against the job before anything is used.
"""

from __future__ import annotations

import io
import zipfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from renderer.image import write_atomic
from renderer.tasks import TaskBook


class CheckpointError(ValueError):
    """A checkpoint that cannot be used for this job (one-line message)."""


@dataclass(frozen=True)
class Snapshot:
    fingerprint: str
    acc: np.ndarray
    folded: np.ndarray
    pending: dict[int, np.ndarray]


def snapshot(book: TaskBook, fingerprint: str) -> Snapshot:
    """A consistent copy of the book's finished work (cheap; safe to write from a thread)."""
    return Snapshot(fingerprint, book.acc.copy(), book.folded.copy(), dict(book.pending))


def encode(snap: Snapshot) -> bytes:
    ids = np.array(sorted(snap.pending), dtype=np.int64)
    flat = (np.concatenate([snap.pending[int(i)].ravel() for i in ids]) if len(ids)
            else np.zeros(0, dtype=np.float64))
    buf = io.BytesIO()
    np.savez(buf, fingerprint=np.frombuffer(snap.fingerprint.encode(), dtype=np.uint8),
             acc=snap.acc, folded=snap.folded, pending_ids=ids, pending_data=flat)
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
            arrays = {k: z[k] for k in ("fingerprint", "acc", "folded", "pending_ids", "pending_data")}
    except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile) as e:
        raise CheckpointError(f"{p}: not a renderer checkpoint ({e})") from None
    if arrays["fingerprint"].tobytes() != fingerprint.encode():
        raise CheckpointError(f"{p}: checkpoint belongs to a different job (scene or settings changed)")
    acc, folded, ids, flat = arrays["acc"], arrays["folded"], arrays["pending_ids"], arrays["pending_data"]
    if acc.shape != book.acc.shape or acc.dtype != np.float64 or not np.isfinite(acc).all():
        raise CheckpointError(f"{p}: accumulator does not match the job")
    if folded.shape != (book.n_tiles,) or folded.dtype.kind != "i" or not (
        (folded >= 0) & (folded <= book.n_chunks)
    ).all():
        raise CheckpointError(f"{p}: folded chunk counts do not match the job")
    if ids.ndim != 1 or ids.dtype.kind != "i" or flat.ndim != 1 or flat.dtype != np.float64:
        raise CheckpointError(f"{p}: pending results are malformed")
    pending: dict[int, np.ndarray] = {}
    offset = 0
    for tid in ids.tolist():
        if not 0 <= tid < book.total or tid in pending:
            raise CheckpointError(f"{p}: pending task id {tid} is not in this job")
        spec = book.spec(tid)
        if spec.chunk < folded[spec.tile]:
            raise CheckpointError(f"{p}: pending task {tid} was already folded")
        n = spec.w * spec.h * 3
        if offset + n > len(flat):
            raise CheckpointError(f"{p}: pending results are truncated")
        pending[tid] = flat[offset:offset + n].reshape(spec.h, spec.w, 3).copy()
        offset += n
    if offset != len(flat):
        raise CheckpointError(f"{p}: pending results have trailing data")
    return Snapshot(fingerprint, acc, folded.astype(np.int64), pending)
