"""`bench cluster`'s one-command measure: the peak RSS is the command's own, not the bench's."""

from __future__ import annotations

import sys

from kubeview.bench.cluster.measure import timed

TOUCH = "x = bytearray({mib} * 2**20)\nfor i in range(0, len(x), 4096): x[i] = 1\nraise SystemExit({rc})"


def test_a_small_command_from_a_big_bench_reports_its_own_peak() -> None:
    """The bench holds its lists (here 400 MiB); a command using 50 MiB is reported near 50, not 400
    (Linux keeps the pre-exec address space's high-water mark in a forked child's ru_maxrss)."""
    held = bytearray(400 * 2**20)
    for i in range(0, len(held), 4096):
        held[i] = 1
    small = timed([sys.executable, "-c", TOUCH.format(mib=50, rc=0)])
    big = timed([sys.executable, "-c", TOUCH.format(mib=150, rc=3)])
    assert small.rc == 0 and big.rc == 3
    assert 50 * 2**20 < small.rss < 120 * 2**20
    assert 150 * 2**20 < big.rss < 220 * 2**20
    assert small.wall > 0 and len(held) == 400 * 2**20


def test_a_command_that_cannot_start_fails_with_its_reason() -> None:
    t = timed(["kubeview-no-such-command"])
    assert t.rc != 0 and "No such file" in t.err
