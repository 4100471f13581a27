"""Issue 24 item 15: under CI a test skipped for a missing dependency fails the run; elsewhere it is
listed. A skip for another reason (no GPU) stays a skip."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PROBE = ROOT / "tests" / "data" / "ci" / "skip_probe.py"


def _run(ci: bool) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    if ci:
        env["CI"] = "true"
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(PROBE)],
                          capture_output=True, text=True, cwd=ROOT, env=env, timeout=120)


@pytest.mark.parametrize("ci", [True, False], ids=["ci", "local"])
def test_missing_dependency_skip(ci: bool) -> None:
    r = _run(ci)
    assert r.returncode == (1 if ci else 0), r.stdout
    verdict = "FAILED (CI)" if ci else "skipped"
    assert f"1 test(s) {verdict} for a missing dependency" in r.stdout
    assert "skip_probe.py::test_needs_a_module_that_is_not_installed: Skipped: could not import" in r.stdout
    assert "test_skips_for_a_reason_that_is_not_a_dependency:" not in r.stdout
    assert "2 skipped" in r.stdout
