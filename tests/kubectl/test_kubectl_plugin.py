"""`kubectl kubeview …` (issue 30 item 2): the real kubectl finds the `kubectl-kubeview` that the
same install put beside `kubeview`, and runs it."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from .tools import VENV_BIN, built, env_with_path


def test_kubectl_runs_the_installed_plugin(tmp_path: Path) -> None:
    kubectl = built("build-kubernetes.sh", "kubectl")
    plugin = VENV_BIN / "kubectl-kubeview"
    assert plugin.is_file(), f"{plugin}: the console script is missing; pip install --no-deps -e ."
    env = env_with_path(tmp_path, VENV_BIN, kubectl.parent)

    listed = subprocess.run([kubectl, "plugin", "list"], capture_output=True, text=True, env=env, timeout=60)
    assert str(plugin) in listed.stdout, listed.stdout + listed.stderr

    out = subprocess.run([kubectl, "kubeview", "snapshot", "--demo", "--json"], capture_output=True, text=True,
                         env=env, timeout=300)
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    names = {n["name"] for n in doc["nodes"]}
    assert {"gpu-node-1", "cpu-node-1"} <= names
    assert doc["cluster"]["connection"]["detail"] == "embedded local cluster"

    bad = subprocess.run([kubectl, "kubeview", "--no-such-flag"], capture_output=True, text=True, env=env, timeout=60)
    # one line, as `kubeview` gives, naming what was typed
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1, bad.stderr
    assert bad.stderr.startswith("kubectl kubeview: error: unrecognized arguments: --no-such-flag"), bad.stderr
    assert "see kubectl kubeview --help" in bad.stderr
