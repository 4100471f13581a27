"""CI runs what the README says: the Quickstart's test line is the one `.ci/run` executes."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def quickstart_lines() -> list[str]:
    text = (ROOT / "README.md").read_text()
    block = re.search(r"## Quickstart\s+```sh\n(.*?)```", text, re.S)
    assert block, "README has no Quickstart code block"
    return [line for line in block.group(1).splitlines() if line.strip()]


def test_quickstart_has_exactly_two_lines() -> None:
    lines = quickstart_lines()
    assert len(lines) == 2
    assert "kubeview --render" in lines[0]
    assert "pytest" in lines[1]


def test_ci_runs_the_readme_test_line_verbatim() -> None:
    ci = (ROOT / ".ci" / "run").read_text().splitlines()
    assert quickstart_lines()[1] in ci


def test_readme_names_the_commands_that_made_the_screenshots() -> None:
    """scripts/screenshots.py runs these commands; the README says which, verbatim."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("screenshots", ROOT / "scripts" / "screenshots.py")
    assert spec is not None and spec.loader is not None
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    readme = (ROOT / "README.md").read_text()
    for argv in (script.DEMO, script.RENDER):
        command = " ".join(["kubeview", *(a.format(out="screenshots") for a in argv)])
        assert f"\n{command}" in readme, command
