"""Run by tests/test_hermetic.py in a pytest of its own, under a decoy KUBECONFIG, ~/.kube/config and
in-cluster variables: what a careless test does (spawn kubeview, or load a kubeconfig in-process,
with the caller's environment) must find no cluster, through tests/conftest.py alone."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from kubernetes import config

ROOT = Path(__file__).resolve().parents[3]


def test_kubeview_spawned_with_the_callers_environment_runs_the_local_cluster() -> None:
    r = subprocess.run([sys.executable, "-m", "kubeview", "snapshot", "--json"], capture_output=True, text=True,
                       env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=120)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["cluster"]["title"] == "local cluster"


def test_the_kubernetes_client_in_process_finds_no_kubeconfig() -> None:
    with pytest.raises(config.ConfigException):
        config.load_kube_config()
