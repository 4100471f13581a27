"""A table column (key for sorting, header label, width, alignment) and how widths share a line.

Names must be read whole, figures can be shorter: at 100 columns the node names were cut to
`cpu-n…` (five identical rows) while the bars kept their full 18 cells. So a table's widths come
from `fit_widths`: flexible columns first get what their content wants, fixed ones shrink toward
their `least` before a name is cut. A Pending reason is cut last of all, never before its point
(`3 Insufficient cpu`): at 120 columns a 42-character DaemonSet pod name left it `3 Insufficie…`;
only names already cut to `READABLE` cells keep the rest (at 80 columns they were `ku…1`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

FLEX_LEAST = 4  # a flexible column never goes below this
READABLE = 10  # a name cut in the middle still reads (`kube…mmh92`): the reason's point gives first below it


@dataclass(frozen=True, slots=True)
class Column:
    key: str
    label: str
    width: int = 0  # 0: flexible, shares what the fixed columns leave
    align: str = "left"  # or "right"
    least: int = 0  # how narrow it may get (0: a fixed column keeps its width, a flexible one FLEX_LEAST);
    # a `whole` column with one (a namespace: context) gives down to it before the other names give
    whole: bool = False  # flexible, and as wide as its widest cell seen (names): `VirtualTable.want`
    descending: bool = False  # sorts largest first (figures), so its header arrow points down
    # flexible, and as wide as the widest `point(cell)` seen (a reason's leading part), which it keeps
    # while names are cut: the one column cut last
    point: Callable[[str], str] | None = None
    # with `point`: what the cell shows whole (`want[key + "+"]`), for which fixed columns give their
    # padding and a context column (a namespace) its room, never a name (`3 Insufficient cpu, +1 more`)
    full: Callable[[str], str] | None = None
    short: str = ""  # the header when the column is narrower than `label` (`RUN`, not `RU…`)

    @property
    def floor(self) -> int:
        return self.least or (self.width or FLEX_LEAST)


def fit_widths(columns: Sequence[Column], width: int, want: Mapping[str, int] | None = None) -> list[int]:
    """Widths of `columns` on a line of `width` cells (one space after each column).

    A flexible column starts at what its content wants (`want[key]`, e.g. the longest name); too
    wide, the fixed columns give up cells first (the widest above its `least` each time), then the
    other flexible ones from the last (taints) to the first, then the `whole` ones (names): those
    with a `least` down to it, then the widest first down to `READABLE`; the `point` ones (a reason's key
    part) then, and the names below `READABLE` last of all. A `point` column short of its `full`
    want (`want[key + "+"]`) then takes room to spare, and the padding of fixed columns and the room of
    context columns (`whole` with a `least`) above their floors, widest first. Room still to spare goes
    to the flexible columns without a `want` (evenly), or else to the last one.
    """
    want = want or {}
    widths = [c.width or max(c.floor, want.get(c.key, 0)) for c in columns]
    over = sum(widths) + len(columns) - width

    def widest_first(indices: list[int], size: Callable[[int], int], floor: int = 0) -> None:
        nonlocal over
        while over > 0:
            slack = [(size(i), i) for i in indices if widths[i] > max(columns[i].floor, floor)]
            if not slack:
                return
            widths[max(slack)[1]] -= 1
            over -= 1

    def last_first(indices: list[int]) -> None:
        nonlocal over
        for i in reversed(indices):
            give = min(max(over, 0), widths[i] - columns[i].floor)
            widths[i] -= give
            over -= give

    flex = [i for i, c in enumerate(columns) if not c.width]
    widest_first([i for i, c in enumerate(columns) if c.width], lambda i: widths[i] - columns[i].floor)
    last_first([i for i in flex if not columns[i].whole and columns[i].point is None])
    widest_first([i for i in flex if columns[i].whole and columns[i].least], lambda i: widths[i])
    widest_first([i for i in flex if columns[i].whole], lambda i: widths[i], READABLE)
    last_first([i for i in flex if columns[i].point is not None])  # at 80 columns names were `ku…1`
    widest_first([i for i in flex if columns[i].whole], lambda i: widths[i])
    for i, c in enumerate(columns):
        more = want.get(c.key + "+", 0) - widths[i] if c.point is not None else 0
        if more > 0 and over < 0:  # room to spare first
            widths[i] += min(more, -over)
            over, more = over + min(more, -over), more - min(more, -over)
        donors = [j for j, d in enumerate(columns) if j != i and (d.width or (d.whole and d.least))]
        while more > 0:
            slack = [(widths[j] - columns[j].floor, j) for j in donors if widths[j] > columns[j].floor]
            if not slack:
                break
            widths[max(slack)[1]] -= 1
            widths[i] += 1
            more -= 1
    if over < 0 and flex:
        open_ended = [i for i in flex if columns[i].key not in want] or flex[-1:]
        spare = -over
        share = spare // len(open_ended)
        for n, i in enumerate(open_ended):
            widths[i] += spare - share * (len(open_ended) - 1) if n == len(open_ended) - 1 else share
    return widths
