"""Writing images: 8-bit PNG (gamma 2, as in the book) and the raw float64 array, atomically."""

from __future__ import annotations

import io
import os
import secrets
import tempfile
from pathlib import Path

import numpy as np
from PIL import Image

from renderer.fd_budget import SHORT_OF_FDS


def to_8bit(image: np.ndarray) -> np.ndarray:
    """Linear float image (H, W, 3) -> uint8 with gamma 2: int(256 * clamp(sqrt(c), 0, 0.999))."""
    g = np.sqrt(np.clip(np.nan_to_num(image, nan=0.0), 0.0, None))
    return (256.0 * np.clip(g, 0.0, 0.999)).astype(np.uint8)


def prepare_to_write() -> None:
    """Do now what the first write would otherwise do on its way: import PIL's format plugins
    (``save`` imports them on first use) and find the temporary directory (``gettempdir`` tries
    files). Both open files: at a low fd limit with connections arriving, the finished image must
    not need more fds than its own (issue 23: "Too many open files: .../PIL/PngImagePlugin.py"
    lost a finished render)."""
    Image.preinit()
    tempfile.gettempdir()


def png_bytes(image: np.ndarray) -> bytes:
    return encode_png(to_8bit(image))


def encode_png(pixels: np.ndarray) -> bytes:
    """8-bit (H, W, 3) pixels -> PNG bytes."""
    buf = io.BytesIO()
    Image.fromarray(pixels, mode="RGB").save(buf, format="PNG")
    return buf.getvalue()


def write_atomic(path: str | Path, data: bytes) -> None:
    """Write via a temporary file in the same directory and ``os.replace``: never half a file."""
    p = Path(path)
    fd, tmp = _create_temp(p)
    try:
        with open(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, p)
    finally:
        tmp.unlink(missing_ok=True)
    try:
        fd = os.open(p.parent if str(p.parent) else ".", os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _create_temp(p: Path) -> tuple[int, Path]:
    """A new file beside ``p`` with mode 0666 less the umask, like any file a program writes
    (``tempfile.mkstemp`` makes it 0600, and ``os.replace`` kept that on the image)."""
    for _ in range(100):
        tmp = p.with_name(f".{p.name}.{secrets.token_hex(4)}.tmp")
        try:
            return os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666), tmp
        except FileExistsError:
            continue
    raise FileExistsError(f"cannot create a temporary file beside {p}")


def npy_bytes(image: np.ndarray) -> bytes:
    buf = io.BytesIO()
    np.save(buf, np.ascontiguousarray(image, dtype=np.float64), allow_pickle=False)
    return buf.getvalue()


def write_outputs(image: np.ndarray, png: str | Path | None, raw: str | Path | None) -> None:
    """Write the PNG and/or the raw ``.npy`` (linear float64, (H, W, 3))."""
    if raw is not None:
        write_atomic(raw, npy_bytes(image))
    if png is not None:
        write_atomic(png, png_bytes(image))


class OutputError(OSError):
    """An output could not be written; the image went to ``kept`` instead. One-line message."""

    def __init__(self, message: str, kept: list[Path], reason: str = "") -> None:
        super().__init__(message)
        self.kept = kept
        self.reason = reason or message


def fallback_path(target: str | Path, tag: str) -> Path:
    """Where an image that could not be written to ``target`` is kept: the temporary directory."""
    t = Path(target)
    return Path(tempfile.gettempdir()) / f"{t.stem}-{tag}{t.suffix}"


def write_or_keep(image: np.ndarray, png: str | Path | None, raw: str | Path | None, tag: str) -> None:
    """``write_outputs``, but an output that fails is written to ``fallback_path`` and OutputError
    names the real error and where the image is, so a finished render is never lost. Out of fds
    (EMFILE, ENFILE) is raised as an OSError with that errno, for the caller to retry."""
    failures: list[OutputError] = []
    for path, data in ((raw, npy_bytes), (png, png_bytes)):
        if path is not None:
            try:
                write_bytes_or_keep(path, data(image), tag, retry_fds=True)
            except OutputError as e:
                failures.append(e)
    if failures:
        kept = [p for e in failures for p in e.kept]
        raise OutputError("; ".join(e.reason for e in failures) + "; the image was kept in "
                          + ", ".join(map(str, kept)), kept)


def write_bytes_or_keep(path: str | Path, data: bytes, tag: str, *, retry_fds: bool = False) -> None:
    """``write_atomic``; if it fails, the bytes go to ``fallback_path`` and OutputError says both.
    With ``retry_fds`` running out of fds is raised as it is: that is the process's state for a
    moment, not the path's fault, and the caller tries again."""
    try:
        write_atomic(path, data)
    except OSError as e:
        if retry_fds and e.errno in SHORT_OF_FDS:
            raise
        spare = fallback_path(path, tag)
        write_atomic(spare, data)  # if this fails too, its own error says so
        reason = f"cannot write {path}: {e.strerror or e}"
        raise OutputError(f"{reason}; the image was kept in {spare}", [spare], reason) from None
