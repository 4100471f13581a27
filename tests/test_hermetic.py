"""Issue 38: the suite never touches a cluster it was not given. tests/conftest.py scrubs the
caller's KUBECONFIG, in-cluster variables and HOME (tests/hermetic.py); here a probe that does what a
careless test does runs under a decoy cluster that records every connection (tests/kube_decoy.py)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import hermetic
import pytest
from kube_decoy import Decoy, connections

ROOT = Path(__file__).resolve().parents[1]
PROBE = ROOT / "tests" / "data" / "hermetic" / "probe_cluster.py"


def test_a_test_sees_no_cluster_variables_and_a_home_of_its_own(tmp_path: Path) -> None:
    for variable in (*hermetic.CLUSTER_VARIABLES, *hermetic.HOME_VARIABLES):
        assert variable not in os.environ, variable
    home = Path(os.environ["HOME"])
    assert home == Path.home() and home.is_dir() and not (home / ".kube").exists()
    assert home.parent.parent == tmp_path.parent.parent  # the test's own, beside its tmp_path


def test_the_shared_caches_are_pinned_outside_the_tests_home() -> None:
    home = Path.home()
    for variable in (*hermetic.SHARED_CACHES, hermetic.PIP_CACHE):
        assert not Path(os.environ[variable]).is_relative_to(home), variable
    out = subprocess.run(["bash", str(ROOT / "scripts" / "build-kubernetes.sh"), "--print-dir"],
                         capture_output=True, text=True, check=True).stdout.strip()
    assert Path(out).is_relative_to(os.environ["KUBEVIEW_K8S_CACHE"])


def _probe(tmp_path: Path, kubeconfig: str, *pytest_args: str) -> tuple[subprocess.CompletedProcess[str], list[str]]:
    """The probe in a pytest of its own, with KUBECONFIG set as `kubeconfig` says and the decoy
    behind ~/.kube/config and the in-cluster variables; returns the run and the decoy's record."""
    decoy = Decoy(tmp_path / "decoy").start()
    try:
        where = {"missing": str(tmp_path / "no-such-kubeconfig"), "empty": str(tmp_path / "empty"),
                 "decoy": str(decoy.folder / "kubeconfig")}[kubeconfig]
        (tmp_path / "empty").write_text("")
        env = {**os.environ, "KUBECONFIG": where, "HOME": str(decoy.folder / "home"),
               "KUBERNETES_SERVICE_HOST": "127.0.0.1", "KUBERNETES_SERVICE_PORT": str(decoy.port)}
        r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *pytest_args, str(PROBE)],
                           capture_output=True, text=True, cwd=ROOT, env=env, timeout=300)
    finally:
        decoy.stop()
    return r, connections(decoy.folder)


@pytest.mark.parametrize("kubeconfig", ["missing", "empty", "decoy"])
def test_under_a_decoy_cluster_the_probe_passes_and_nothing_connects(tmp_path: Path, kubeconfig: str) -> None:
    r, seen = _probe(tmp_path, kubeconfig)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "2 passed" in r.stdout
    assert seen == []


def test_without_the_conftest_the_decoy_is_reached_and_the_probe_fails(tmp_path: Path) -> None:
    """The decoy bites: the same probe, run without tests/conftest.py, connects to it and fails."""
    r, seen = _probe(tmp_path, "decoy", "--noconftest")
    assert r.returncode == 1, r.stdout + r.stderr
    assert "2 failed" in r.stdout
    assert seen, "the unscrubbed probe should have connected to the decoy"
