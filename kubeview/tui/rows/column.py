"""A table column: key (for sorting), header label, width (0 = flexible) and alignment."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Column:
    key: str
    label: str
    width: int = 0  # 0: flexible, shares what the fixed columns leave
    align: str = "left"  # or "right"
