"""The reference image each trial is checked against: `python -m renderer render`, one process, cached.

The tuner may change speed, never the image. Neither tile size nor samples per task can change a
bit: the renderer sums each pixel's samples as int64 fixed point (renderer/fixed.py), exact in any
grouping and order. So there is one reference per (scene, size, spp), kept under the state
directory: computed once, reused by every later trial and study whatever their task sizes.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from kubeview.render.inputs import SceneChoice

RENDER_TIMEOUT = 3600.0


class ReferenceRenderError(Exception):
    """The reference render could not be made; one sentence."""


def state_dir() -> Path:
    """Where kubeview keeps what outlives a run (the default study database, reference images)."""
    base = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(base) / "kubeview"


@dataclass(frozen=True, slots=True)
class Reference:
    raw: Path  # linear float64 image (.npy): what a local trial's --raw is compared with, bit for bit
    png: Path  # what a real-cluster trial's PNG (the only output there) is compared with

    def matches(self, raw: Path | None, png: Path | None) -> str | None:
        """None if the trial's image is the reference's bits, else one sentence saying what differs."""
        if raw is not None:
            return None if _npy_pixels(raw) == _npy_pixels(self.raw) else "its image differs from the reference render"
        if png is not None:
            return None if png.read_bytes() == self.png.read_bytes() else "its PNG differs from the reference render"
        return "it wrote no image"


def _npy_pixels(path: Path) -> bytes:
    import numpy as np

    a = np.load(path, allow_pickle=False)
    return repr((a.dtype.str, a.shape)).encode() + np.ascontiguousarray(a).tobytes()


REFERENCE_FORMAT = 2  # 2: fixed-point sums (a format-1 reference was float sums, cached per task size)


def reference_key(scene: SceneChoice) -> str:
    text = scene.path.read_bytes()
    settings = repr((REFERENCE_FORMAT, scene.width, scene.height, scene.spp)).encode()
    return hashlib.sha256(text + b"\0" + settings).hexdigest()[:32]


def reference(scene: SceneChoice, cache: Path) -> Reference:
    """The cached reference for this scene, size and spp (rendered now if missing); raises
    ReferenceRenderError."""
    where = cache / reference_key(scene)
    ref = Reference(where / "reference.npy", where / "reference.png")
    if ref.raw.is_file() and ref.png.is_file():
        return ref
    try:
        cache.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=".ref-", dir=cache))
    except OSError as exc:
        raise ReferenceRenderError(f"cannot write reference images in {cache}: {exc.strerror}") from None
    try:
        argv = [sys.executable, "-m", "renderer", "render", str(scene.path), "--no-progress",
                "--raw", str(tmp / "reference.npy"), "-o", str(tmp / "reference.png"),
                *scene.producer_args()]
        try:
            done = subprocess.run(argv, capture_output=True, text=True, timeout=RENDER_TIMEOUT, check=False)
        except subprocess.TimeoutExpired:
            raise ReferenceRenderError(f"the reference render took more than {RENDER_TIMEOUT:g} s") from None
        if done.returncode != 0:
            last = (done.stderr.strip().splitlines() or ["no message"])[-1]
            raise ReferenceRenderError(f"the reference render failed: {last}")
        try:
            os.replace(tmp, where)
        except OSError:  # another tuner made it meanwhile: theirs is the same bits
            if not (ref.raw.is_file() and ref.png.is_file()):
                raise ReferenceRenderError(f"cannot store the reference render in {where}") from None
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return ref
