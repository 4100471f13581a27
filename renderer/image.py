"""Writing images: 8-bit PNG (gamma 2, as in the book) and the raw float64 array, atomically."""

from __future__ import annotations

import io
import os
import tempfile
from pathlib import Path

import numpy as np
from PIL import Image


def to_8bit(image: np.ndarray) -> np.ndarray:
    """Linear float image (H, W, 3) -> uint8 with gamma 2: int(256 * clamp(sqrt(c), 0, 0.999))."""
    g = np.sqrt(np.clip(np.nan_to_num(image, nan=0.0), 0.0, None))
    return (256.0 * np.clip(g, 0.0, 0.999)).astype(np.uint8)


def png_bytes(image: np.ndarray) -> bytes:
    buf = io.BytesIO()
    Image.fromarray(to_8bit(image), mode="RGB").save(buf, format="PNG")
    return buf.getvalue()


def write_atomic(path: str | Path, data: bytes) -> None:
    """Write via a temporary file in the same directory and ``os.replace``: never half a file."""
    p = Path(path)
    fd, name = tempfile.mkstemp(prefix=f".{p.name}.", suffix=".tmp", dir=p.parent)
    tmp = Path(name)
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
