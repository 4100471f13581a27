"""`--help` wraps description, epilog and options at one width: the terminal's, at most 100
(#24 item 16: the description was pre-wrapped at ~100 columns while options followed the terminal)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

COMMANDS = [(), ("snapshot",), ("extender",), ("tune",), ("preempt",), ("render-manifests",), ("bench",), ("serve",)]


def help_lines(columns: int, *command: str) -> list[str]:
    env = {**os.environ, "COLUMNS": str(columns)}
    out = subprocess.run([sys.executable, "-m", "kubeview", *command, "--help"], capture_output=True, text=True,
                         env=env, timeout=60)
    assert out.returncode == 0, out.stderr
    return out.stdout.splitlines()


@pytest.mark.parametrize("columns", [200, 80])
def test_every_help_line_fits_one_width(columns: int) -> None:
    width = min(columns, 100) - 2
    for command in COMMANDS:
        lines = help_lines(columns, *command)
        assert max(len(line) for line in lines) <= width, (command, max(lines, key=len))


def test_the_description_is_wrapped_at_the_options_width() -> None:
    lines = help_lines(80)
    start = next(i for i, line in enumerate(lines) if line.startswith("kubeview watches"))
    description = lines[start:lines.index("", start)]
    assert len(description) >= 5 and all(len(line) <= 78 for line in description)
    assert max(len(line) for line in description) >= 70  # filled to the width, not left at ~100 or cut short
