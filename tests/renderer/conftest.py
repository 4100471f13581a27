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
