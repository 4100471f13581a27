"""Shared pytest fixtures.

`kube_api`: a running test Kubernetes API server (tests/kubeapi) and a kubeconfig pointing at it;
see tests/kubeapi/__init__.py for what it serves and how to script it. `k8s_fixtures`: the
directory of recorded kube-apiserver responses (tests/fixtures/k8s).
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))  # `import kubeapi` from any test directory

import hermetic  # noqa: E402
import thread_guard  # noqa: E402
from kubeapi import KubeAPI  # noqa: E402
from kubeapi import fixtures as _fixtures  # noqa: E402

# Before anything is collected or started: none of the caller's kubeconfig, in-cluster variables or
# home reaches a test or what it spawns (tests/hermetic.py says why and what stays shared).
hermetic.scrub()


_exit_status: list[int] = []


@pytest.hookimpl(trylast=True)
def pytest_unconfigure(config: pytest.Config) -> None:
    hermetic.unscrub()
    thread_guard.exit_if_threads_are_left((_exit_status or [0])[-1])


@pytest.fixture(autouse=True)
def _hermetic_environment(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test starts with a HOME of its own and no cluster settings; it sets them on purpose."""
    hermetic.isolate(monkeypatch, tmp_path_factory.mktemp("home"))


@pytest.fixture
def kube_api(tmp_path: Path) -> Iterator[KubeAPI]:
    """A started KubeAPI with `.kubeconfig` written under tmp_path; stopped after the test."""
    api = KubeAPI().start()
    api.kubeconfig = api.write_kubeconfig(tmp_path / "kubeconfig")
    try:
        yield api
    finally:
        api.stop()


@pytest.fixture(scope="session")
def k8s_fixtures() -> Path:
    """tests/fixtures/k8s, relative to the repository root."""
    return _fixtures.FIXTURES


# --- a skip for a missing dependency is an untested claim: under CI it fails the run -------------
# Skip reasons for something not installed say how to install it ("pip install", "apt-get install",
# "scripts/build-kubernetes.sh") or come from pytest.importorskip ("could not import").
_MISSING_DEPENDENCY = re.compile(r"could not import|pip install|apt-get install|scripts/build-", re.I)
_missing: list[str] = []


def _skip_reason(report: pytest.TestReport) -> str:
    longrepr = report.longrepr
    return str(longrepr[2]) if isinstance(longrepr, tuple) and len(longrepr) == 3 else str(longrepr)


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    reason = _skip_reason(report) if report.skipped else ""
    if _MISSING_DEPENDENCY.search(reason):
        _missing.append(f"{report.nodeid}: {reason}")


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    if _missing and os.environ.get("CI") and exitstatus in (0, 5):
        session.exitstatus = 1
    _exit_status.append(int(session.exitstatus))


def pytest_terminal_summary(terminalreporter, exitstatus: int) -> None:  # noqa: ANN001 -- pytest hook
    if not _missing:
        return
    verdict = "FAILED (CI)" if os.environ.get("CI") else "skipped"
    terminalreporter.section(f"{len(_missing)} test(s) {verdict} for a missing dependency")
    for line in _missing:
        terminalreporter.line(line)
