"""Shared pytest fixtures.

`kube_api`: a running test Kubernetes API server (tests/kubeapi) and a kubeconfig pointing at it;
see tests/kubeapi/__init__.py for what it serves and how to script it. `k8s_fixtures`: the
directory of recorded kube-apiserver responses (tests/fixtures/k8s).
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))  # `import kubeapi` from any test directory

from kubeapi import KubeAPI  # noqa: E402
from kubeapi import fixtures as _fixtures  # noqa: E402


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
