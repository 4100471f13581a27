"""plugins/kubeview.yaml, judged by krew itself (sigs.k8s.io/krew's validate-krew-manifest and
`kubectl krew install`, built by scripts/build-krew.sh): valid, its sha256 that of the archive the tree
builds, its version pyproject's, and installed by krew into a fresh KREW_ROOT it runs."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
import tomllib
from pathlib import Path

import yaml

from .tools import ROOT, VENV_BIN, built, env_with_path

MANIFEST = ROOT / "plugins" / "kubeview.yaml"


def _archive(tmp: Path) -> Path:
    out = tmp / "kubectl-kubeview.tar.gz"
    subprocess.run([sys.executable, str(ROOT / "scripts" / "krew-archive.py"), str(out)], check=True,
                   capture_output=True)
    return out


def _validate(manifest: Path) -> subprocess.CompletedProcess[str]:
    validator = built("build-krew.sh", "validate-krew-manifest")
    # -skip-install: its install step downloads spec.platforms[].uri; the install is tested below
    # from the archive the tree builds instead
    return subprocess.run([validator, "-manifest", str(manifest), "-skip-install"], capture_output=True,
                          text=True, timeout=60)


def test_krew_validates_the_manifest_and_refuses_a_broken_copy(tmp_path: Path) -> None:
    ok = _validate(MANIFEST)
    assert ok.returncode == 0 and "structural validation OK" in ok.stderr, ok.stderr
    doc = yaml.safe_load(MANIFEST.read_text())
    doc["spec"]["platforms"][0]["sha256"] = "not-a-sha256"
    broken = tmp_path / "kubeview.yaml"
    broken.write_text(yaml.safe_dump(doc))
    bad = _validate(broken)
    assert bad.returncode != 0 and "sha256" in bad.stderr, bad.stderr


def test_the_manifest_names_the_archive_and_version_of_this_tree(tmp_path: Path) -> None:
    doc = yaml.safe_load(MANIFEST.read_text())
    digest = hashlib.sha256(_archive(tmp_path).read_bytes()).hexdigest()
    assert doc["spec"]["platforms"][0]["sha256"] == digest, "run python scripts/krew-archive.py, update sha256"
    version = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    assert doc["spec"]["version"] == f"v{version}"
    assert f"/v{version}/" in doc["spec"]["platforms"][0]["uri"]


def test_krew_installs_the_plugin_and_kubectl_runs_it(tmp_path: Path) -> None:
    krew = built("build-krew.sh", "kubectl-krew")
    kubectl = built("build-kubernetes.sh", "kubectl")
    root = tmp_path / "krew"
    env = {**env_with_path(tmp_path, krew.parent, kubectl.parent, VENV_BIN), "KREW_ROOT": str(root)}
    install = subprocess.run([kubectl, "krew", "install", f"--manifest={MANIFEST}", f"--archive={_archive(tmp_path)}"],
                             capture_output=True, text=True, env=env, timeout=120, stdin=subprocess.DEVNULL)
    assert install.returncode == 0 and "Installed plugin: kubeview" in install.stderr, install.stderr
    assert (root / "bin" / "kubectl-kubeview").resolve().read_bytes() == (ROOT / "plugins" / "kubectl-kubeview").read_bytes()

    env["PATH"] = f"{root / 'bin'}:{env['PATH']}"  # krew's bin first: its launcher is what kubectl runs
    listed = subprocess.run([kubectl, "plugin", "list"], capture_output=True, text=True, env=env, timeout=60)
    assert listed.stdout.index(str(root / "bin" / "kubectl-kubeview")) < listed.stdout.index(str(VENV_BIN)), listed.stdout
    out = subprocess.run([kubectl, "kubeview", "snapshot", "--demo", "--json"], capture_output=True, text=True,
                         env=env, timeout=300)
    assert out.returncode == 0, out.stderr
    assert "gpu-node-1" in {n["name"] for n in json.loads(out.stdout)["nodes"]}

    # without kubeview on PATH the launcher says what to install, in one line
    env["PATH"] = f"{root / 'bin'}:{kubectl.parent}:/usr/bin:/bin"
    missing = subprocess.run([kubectl, "kubeview"], capture_output=True, text=True, env=env, timeout=60)
    assert missing.returncode == 127 and "pip install kubeview" in missing.stderr, missing.stderr
