"""What a render is given, checked before anything starts: the scene (with --spp/--width) and -o/--raw.

A bad scene or an output that cannot be written used to surface after the producer and consumers
had started (or after the whole render had run); here each is one line and exit 2 up front.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from kubeview.render.local import RenderError, resolve_scene

if TYPE_CHECKING:
    from renderer.scene import SceneError


@dataclass(frozen=True, slots=True)
class SceneChoice:
    """The scene file and the job settings that override it (None = the scene's own)."""

    path: Path
    width: int | None = None
    height: int | None = None
    spp: int | None = None

    def producer_args(self) -> list[str]:
        """`--width W --height H --spp S` for `python -m renderer producer|render` (the same on both
        sides, so the distributed image is the single-process one)."""
        out: list[str] = []
        for flag, value in (("--width", self.width), ("--height", self.height), ("--spp", self.spp)):
            if value is not None:
                out += [flag, str(value)]
        return out


def choose_scene(arg: str, *, spp: int | None = None, width: int | None = None) -> SceneChoice:
    """Validate the scene with the overrides; `width` alone keeps the scene's aspect ratio."""
    from renderer.scene import SceneError, load

    path = resolve_scene(arg, validate=False)
    try:
        scene = load(path)
        height = None
        if width is not None:
            height = max(1, round(width * scene.height / scene.width))
        if spp is not None or width is not None:
            load(path, width=width, height=height, spp=spp)
    except SceneError as exc:
        raise RenderError(_with_our_advice(exc), exit_code=2) from None
    return SceneChoice(path, width, height, spp)


def _with_our_advice(exc: SceneError) -> str:
    """The renderer's "too many tasks" advice names its own knobs (tile, samples per task); `kubeview
    --render` has neither option, so name what it has: --spp, --width, or the scene's task fields."""
    if exc.field != "tasks":
        return str(exc)
    problem = exc.problem.split(": use ", 1)[0]
    return (f"{exc.file}: tasks: {problem}: lower --spp or --width, or raise tasks.tile or tasks.samples "
            "in a copy of the scene")


def check_output(arg: str, flag: str = "-o", suffix: str | None = ".png") -> Path:
    """The absolute path to write, or RenderError (exit 2) saying why it cannot be written there.
    `suffix`: what the file must end in (the render writes PNG bytes: `-o x.jpg` would be a PNG under a
    JPEG name)."""
    path = Path(arg).resolve()
    if path.is_dir():
        raise RenderError(f"{flag} {arg} is a directory; name a file, e.g. {Path(arg) / 'render.png'}", exit_code=2)
    if suffix and path.suffix.lower() != suffix:
        raise RenderError(f"{flag} {arg}: the render writes {suffix[1:].upper()}; name a {suffix} file", exit_code=2)
    if not path.parent.is_dir():
        raise RenderError(f"{flag} {arg}: directory {str(path.parent)!r} does not exist", exit_code=2)
    probe = path.parent / f".{path.name}.{os.getpid()}.probe"
    try:  # the image is written through a temporary file beside it: that is what must be allowed
        fd = os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except OSError as exc:
        raise RenderError(f"{flag} {arg}: cannot write in {path.parent}: {exc.strerror}", exit_code=2) from None
    os.close(fd)
    probe.unlink(missing_ok=True)
    return path
