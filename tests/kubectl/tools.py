"""Where the real kubectl and krew binaries are (built by scripts/build-*.sh, cached outside the repo)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
VENV_BIN = Path(sys.executable).parent


def built(script: str, name: str) -> Path:
    """The binary `name` from scripts/`script` --print-dir, or skip saying how to build it."""
    out = subprocess.run(["bash", str(ROOT / "scripts" / script), "--print-dir"], capture_output=True,
                         text=True, check=True)
    path = Path(out.stdout.strip()) / name
    if not path.is_file():
        pytest.skip(f"no {name}: run scripts/{script}")
    return path


def env_with_path(tmp: Path, *dirs: Path) -> dict[str, str]:
    """An environment whose PATH is `dirs` then the system's, HOME and state in `tmp`, no kubeconfig."""
    return {**os.environ, "PATH": os.pathsep.join([*map(str, dirs), "/usr/bin", "/bin"]), "HOME": str(tmp),
            "XDG_STATE_HOME": str(tmp / "state"), "KUBECONFIG": str(tmp / "no-kubeconfig")}
