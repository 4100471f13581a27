"""The `plane` fixture: one real control plane for the tests of this directory (tests/realk8s/plane.py).

Every test in this directory is marked `realk8s`. Without the binaries every one of them skips
with the same single line saying how to build them (`-ra` groups it); CI builds them first and
fails on that skip. The plane's processes are stopped at session end, at exit, and on SIGTERM;
each dies with pytest even on SIGKILL (procs.py).

`realk8s_counts` collects figures the tests want in CI's output (runs of the 1-1-2 story per
mode, ...); they are printed in the terminal summary under "realk8s".
"""

from __future__ import annotations

import os
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from .plane import Plane, bin_dir, cleanup_dir, missing_binaries, new_plane

COUNTS: dict[str, str] = {}
PREFIX = "kubeview-realk8s-"
SKIP_PREFIX = "realk8s: no "
_SKIP_LINE = next(i for i, line in enumerate(Path(__file__).read_text().splitlines(), 1) if line.startswith("def _started("))


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    here = Path(__file__).parent
    for item in items:
        if here in Path(item.fspath).parents:
            item.add_marker(pytest.mark.realk8s)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call):  # noqa: ARG001
    """A skip for missing binaries is reported at one place, so `-ra` folds every realk8s test into
    one line (pytest otherwise names each test's own line)."""
    report = yield
    if report.skipped and isinstance(report.longrepr, tuple) and SKIP_PREFIX in str(report.longrepr[2]):
        report.longrepr = (str(Path(__file__).relative_to(Path.cwd())) if Path.cwd() in Path(__file__).parents
                           else __file__, _SKIP_LINE, report.longrepr[2])
    return report


def pytest_terminal_summary(terminalreporter, exitstatus, config) -> None:  # noqa: ARG001
    if COUNTS:
        terminalreporter.section("realk8s")
        for key, value in COUNTS.items():
            terminalreporter.write_line(f"realk8s {key}: {value}")


def _sweep_stale() -> None:
    """Directories of sessions that were SIGKILLed (their processes died with them: PDEATHSIG; only
    the files stayed)."""
    for d in Path(tempfile.gettempdir()).glob(f"{PREFIX}*"):
        try:
            os.kill(int((d / "owner.pid").read_text()), 0)
        except ProcessLookupError:
            cleanup_dir(d)
        except (OSError, ValueError):
            continue


@pytest.fixture(scope="session")
def realk8s_counts() -> dict[str, str]:
    return COUNTS


def _started(name: str, gated: bool = False) -> Iterator[Plane]:
    binaries = bin_dir()
    missing = missing_binaries(binaries)
    if missing:
        pytest.skip(f"{SKIP_PREFIX}{', '.join(missing)} in {binaries}; build them with `bash scripts/build-kubernetes.sh`")
    _sweep_stale()
    p = new_plane(PREFIX, gated)  # SIGTERM skips the finally below; stop_all removes its directory then
    (p.root / "owner.pid").write_text(str(os.getpid()))
    start = time.monotonic()
    try:
        p.start()
        COUNTS[f"{name} start"] = f"{time.monotonic() - start:.1f} s"
        yield p
    finally:
        p.stop()
        cleanup_dir(p.root)


@pytest.fixture(scope="package")
def plane() -> Iterator[Plane]:
    """The started plane with 1.37's default feature gates; `plane.kubeconfig` is the admin's. Stopped
    and its directory removed after the last test of tests/realk8s (package scope: the rest of the suite
    runs without its processes beside it)."""
    yield from _started("plane")


@pytest.fixture(scope="package")
def gated_plane() -> Iterator[Plane]:
    """A second plane with 1.37's gang and DRA gates on (plane.GATED): Workload/PodGroup at
    scheduling.k8s.io/v1beta1, Jobs with `spec.scheduling`, group claims, ResourcePoolStatusRequest, and
    PodGroup topology constraints (TopologyAwareWorkloadScheduling: every PodGroup through the placement
    algorithm)."""
    yield from _started("gated plane", gated=True)
