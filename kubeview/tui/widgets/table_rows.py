"""What a `VirtualTable` shows: a `Rows` value, the keys in display order and how to draw each one.

The screen that owns a table builds a new `Rows` whenever its content changes and assigns it to the
table's `rows` reactive; the table formats only the keys on screen (widgets/virtual_table.py).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import Any

from rich.text import Text

Cell = str | Text


@dataclass(frozen=True, eq=False)
class Rows:
    """An immutable view of the table's content: `keys` in display order, `cells(key)` per row."""

    keys: Sequence[Hashable] = ()
    cells: Callable[[Any], Sequence[Cell]] = lambda key: ()
    position: Callable[[Any], int | None] | None = None  # fast key -> index (else a scan)
    reverse: bool = False
    stamp: Callable[[Any], Hashable] | None = None  # what a row shows: its cached strip lives while this holds
    # What the rows hold apart from their order: rows of the content the table last measured (a
    # re-sort of the same build, the same filter) keep its column widths without a row measured again.
    content: Hashable | None = None
    # What a row's measured columns (names, a reason's point: `Column.whole`/`point`) show, where that is
    # cheaper to say than `stamp`: a refresh of 5,000 nodes read every row's stamp (~13 us) to measure.
    measure: Callable[[Any], Hashable] | None = None

    def __len__(self) -> int:
        return len(self.keys)

    def key(self, row: int) -> Hashable:
        return self.keys[len(self.keys) - 1 - row] if self.reverse else self.keys[row]

    def index(self, key: Hashable) -> int | None:
        if self.position is not None:
            i = self.position(key)
        else:
            try:
                i = self.keys.index(key)
            except ValueError:
                i = None
        if i is None:
            return None
        return len(self.keys) - 1 - i if self.reverse else i
