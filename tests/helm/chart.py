"""The real `helm` (scripts/build-helm.sh) on charts/kubeview-extender, for tests/helm and tests/realk8s."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
CHART = ROOT / "charts" / "kubeview-extender"
MANIFESTS = ROOT / "manifests" / "scheduler"


def helm_binary() -> Path:
    out = subprocess.run(["bash", str(ROOT / "scripts" / "build-helm.sh"), "--print-dir"], capture_output=True,
                         text=True, check=True)
    path = Path(out.stdout.strip()) / "helm"
    if not path.is_file():
        pytest.skip("no helm: run scripts/build-helm.sh (builds it from its Go module)")
    return path


def helm(*args: str, home: Path, check: bool = True) -> subprocess.CompletedProcess[str]:
    """helm with its config, cache and data under `home` (nothing of the user's)."""
    env = {"HOME": str(home), "XDG_CONFIG_HOME": str(home / "config"), "XDG_CACHE_HOME": str(home / "cache"),
           "XDG_DATA_HOME": str(home / "data"), "PATH": "/usr/bin:/bin"}
    out = subprocess.run([str(helm_binary()), *args], capture_output=True, text=True, env=env, timeout=300)
    if check:
        assert out.returncode == 0, f"helm {' '.join(args)}: {out.stderr}"
    return out


def objects(text: str) -> dict[tuple[str, str], dict]:
    """(kind, name) -> object of a multi-document YAML stream."""
    return {(d["kind"], d["metadata"]["name"]): d for d in yaml.safe_load_all(text) if d}


def manifest_objects(*names: str) -> dict[tuple[str, str], dict]:
    found: dict[tuple[str, str], dict] = {}
    for name in names:
        found.update(objects((MANIFESTS / name).read_text()))
    return found
