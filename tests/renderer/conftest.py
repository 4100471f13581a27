"""Fixtures for the renderer tests (helpers live in testkit.py)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.renderer.testkit import Procs


@pytest.fixture
def procs(tmp_path: Path) -> Iterator[Procs]:
    """Start processes with ``procs.start(...)``; any left running are SIGKILLed at teardown."""
    ps = Procs(tmp_path)
    yield ps
    ps.cleanup()


@pytest.fixture(scope="session")
def warm_kernels() -> None:
    """Compile both kernel variants once, into numba's on-disk cache, before processes that
    need them start together (otherwise each would compile them itself on a cold cache)."""
    from renderer import kernels
    from renderer import scene as scene_mod

    sc = scene_mod.load(scene_mod.bundled("three-spheres"))
    kernels.render_chunk(sc, 0, 0, 1, 1, 0, 1, parallel=False)
    kernels.render_chunk(sc, 0, 0, 1, 1, 0, 1, parallel=True)
