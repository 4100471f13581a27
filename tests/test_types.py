"""Issue 34 item 5: mypy runs in CI (`.ci/run`, `python -m mypy` with pyproject's [tool.mypy]) over
kubeview/ and renderer/. These tests show the project's configuration bites: a planted type error
fails the check, naming it, and a strictness flag of the configuration (strict_equality) is in force.
The whole tree is not checked here (about two minutes on 2 cores): CI does that.
"""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CONFIG = ROOT / "pyproject.toml"

pytest.importorskip("mypy", reason="mypy is pinned in requirements/test.lock")


def _mypy(tmp_path: Path, source: str) -> subprocess.CompletedProcess[str]:
    planted = tmp_path / "planted.py"
    planted.write_text(source)
    return subprocess.run(
        [sys.executable, "-m", "mypy", "--config-file", str(CONFIG), "--cache-dir", str(tmp_path / "cache"),
         "--no-color-output", "--no-error-summary", str(planted)],
        capture_output=True, text=True, cwd=tmp_path, timeout=300)


def test_the_configuration_checks_the_source_folders() -> None:
    config = tomllib.loads(CONFIG.read_text())["tool"]["mypy"]
    assert config["files"] == ["kubeview", "renderer"]
    assert config["strict_equality"] is True and config["warn_unused_ignores"] is True


def test_a_planted_type_error_fails_the_check(tmp_path: Path) -> None:
    r = _mypy(tmp_path, 'def double(n: int) -> int:\n    return 2 * n\n\n\ndouble("two")\n')
    assert r.returncode == 1, r.stdout + r.stderr
    assert ('planted.py:5: error: Argument 1 to "double" has incompatible type "str"; expected "int"  [arg-type]'
            in r.stdout), r.stdout


def test_the_projects_strictness_is_in_force(tmp_path: Path) -> None:
    """strict_equality is off by default: this error comes from pyproject's configuration."""
    r = _mypy(tmp_path, 'def same(n: int, s: str) -> bool:\n    return n == s\n')
    assert r.returncode == 1, r.stdout + r.stderr
    assert "planted.py:2: error: Non-overlapping equality check" in r.stdout, r.stdout


def test_a_clean_file_passes(tmp_path: Path) -> None:
    r = _mypy(tmp_path, 'def double(n: int) -> int:\n    return 2 * n\n\n\ndouble(2)\n')
    assert (r.returncode, r.stdout) == (0, ""), r.stdout + r.stderr
