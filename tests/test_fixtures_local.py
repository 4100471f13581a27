"""The project carries its own test data: no test or helper reads anything outside the repository."""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
OUTSIDE = re.compile(r"""(\.\./|parents\[\d+\]\s*/\s*["']\.\.["'])|["']shared["']\s*/\s*["']fixtures""")


def test_no_test_reads_outside_the_repository() -> None:
    offenders = [f"{path.relative_to(REPO)}:{n}: {line.strip()}"
                 for path in sorted((REPO / "tests").rglob("*.py"))
                 for n, line in enumerate(path.read_text().splitlines(), 1)
                 if OUTSIDE.search(line) and "OUTSIDE" not in line]
    assert not offenders, "\n".join(offenders)


def test_the_recordings_are_in_the_repository() -> None:
    from kubeapi import fixtures

    assert fixtures.FIXTURES.is_relative_to(REPO)
    assert (fixtures.FIXTURES / "index.json").is_file()
    assert (fixtures.FIXTURES / "extender-live" / "traffic-cache.jsonl").is_file()
    served = [e["file"] for e in fixtures.index() if e["method"] == "GET" and e["status"] == 200]
    assert served and all((fixtures.FIXTURES / name).is_file() for name in served)
