"""table_text writes exactly what rich's Table prints to a pipe, or leaves the table to rich."""

from __future__ import annotations

import io
import random

from rich.console import Console
from rich.table import Table

from kubeview.commands import table_text

WORDS = ["", "0", "1", "cpu", "memory", "nvidia.com/gpu", "128Gi", "2750m", "100%", "default/train-a",
         "ephemeral-storage", "Ready", "x" * 30, "a b", "never fits"]


def by_rich(headers: list[str], right: list[bool], rows: list[list[str]], width: int) -> str:
    out = io.StringIO()
    table = Table(show_edge=False, pad_edge=False)
    for h, r in zip(headers, right, strict=True):
        table.add_column(h, justify="right" if r else "left")
    for row in rows:
        table.add_row(*row)
    Console(file=out, width=width, soft_wrap=False, highlight=False, color_system=None).print(table)
    return out.getvalue()


def test_the_text_is_richs_or_none() -> None:
    """1,000 random tables: each one's text equals rich's, or it is one rich must lay out (wider than
    the console, or holding a character that is not one plain cell); most are compared."""
    compared = 0
    for seed in range(1000):
        rng = random.Random(seed)
        columns = rng.randint(1, 6)
        headers = [rng.choice(["Resource", "Requests", "%", "Kind", "Name", "GPUs per pod", "Lost", "é"])
                   for _ in range(columns)]
        right = [rng.random() < 0.5 for _ in range(columns)]
        rows = [[rng.choice(WORDS) for _ in range(columns)] for _ in range(rng.randint(0, 6))]
        width = rng.choice([20, 40, 80, 200])
        got = table_text.lines(headers, right, rows, width)
        if got is None:
            widest = [max(len(c) for c in column) for column in zip(headers, *rows, strict=True)]
            assert "é" in headers or sum(widest) + 3 * (columns - 1) > width, (headers, rows, width)
            continue
        assert "\n".join(got) + "\n" == by_rich(headers, right, rows, width), (headers, right, rows, width)
        compared += 1
    assert compared > 300  # 385 with these seeds


def test_too_wide_is_left_to_rich() -> None:
    assert table_text.lines(["Name", "Reason"], [False, False], [["a" * 50, "b" * 50]], 80) is None
    assert table_text.lines(["Name", "Reason"], [False, False], [["a" * 50, "b" * 20]], 80) is not None
