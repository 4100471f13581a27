"""A table column (key for sorting, header label, width, alignment) and how widths share a line.

Names must be read whole, figures can be shorter: at 100 columns the node names were cut to
`cpu-n…` (five identical rows) while the bars kept their full 18 cells. So a table's widths come
from `fit_widths`: flexible columns first get what their content wants, fixed ones shrink toward
their `least` before a name is cut.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

FLEX_LEAST = 4  # a flexible column never goes below this


@dataclass(frozen=True, slots=True)
class Column:
    key: str
    label: str
    width: int = 0  # 0: flexible, shares what the fixed columns leave
    align: str = "left"  # or "right"
    least: int = 0  # how narrow it may get (0: a fixed column keeps its width, a flexible one FLEX_LEAST)
    whole: bool = False  # flexible, and as wide as its widest cell seen (names): `VirtualTable.want`
    descending: bool = False  # sorts largest first (figures), so its header arrow points down

    @property
    def floor(self) -> int:
        return self.least or (self.width or FLEX_LEAST)


def fit_widths(columns: Sequence[Column], width: int, want: Mapping[str, int] | None = None) -> list[int]:
    """Widths of `columns` on a line of `width` cells (one space after each column).

    A flexible column starts at what its content wants (`want[key]`, e.g. the longest name); too
    wide, the fixed columns give up cells first (the widest above its `least` each time), then the
    flexible ones from the last (a reason, taints) to the first (the name). Room to spare goes to
    the flexible columns without a `want` (evenly), or else to the last one.
    """
    want = want or {}
    widths = [c.width or max(c.floor, want.get(c.key, 0)) for c in columns]
    over = sum(widths) + len(columns) - width
    fixed = [i for i, c in enumerate(columns) if c.width]
    while over > 0:
        slack = [(widths[i] - columns[i].floor, i) for i in fixed if widths[i] > columns[i].floor]
        if not slack:
            break
        widths[max(slack)[1]] -= 1
        over -= 1
    flex = [i for i, c in enumerate(columns) if not c.width]
    for i in reversed(flex):
        if over <= 0:
            break
        give = min(over, widths[i] - columns[i].floor)
        widths[i] -= give
        over -= give
    if over < 0 and flex:
        open_ended = [i for i in flex if columns[i].key not in want] or flex[-1:]
        spare = -over
        share = spare // len(open_ended)
        for n, i in enumerate(open_ended):
            widths[i] += spare - share * (len(open_ended) - 1) if n == len(open_ended) - 1 else share
    return widths
