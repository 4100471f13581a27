"""The snapshot's tables as plain text, written directly: the same characters rich's
`Table(show_edge=False, pad_edge=False)` prints to a pipe, at a fraction of the cost.

`kubeview snapshot` prints one small table per node. rich lays out each one (measure, wrap, style,
segment), ~1.5 ms a table: 3.2 s of 2,000 nodes' tables against 0.07 s for the JSON document of the
same model (docs/architecture.md, #28). A pipe gets no styles and these tables never need wrapping,
so their text is the headers and cells padded to each column's widest: `lines()` writes that, and
returns None when rich must decide (the table is wider than the console, or a cell has a newline or
a wide character), so the output is always exactly rich's (tests/cluster/test_table_text.py).
"""

from __future__ import annotations

from collections.abc import Sequence

HEAD = " ┃ "
RULE = "━"
CROSS = "╇"
CELL = " │ "


def _plain(text: str) -> bool:
    """One line of characters one cell wide each (rich measures others differently)."""
    return text.isascii() and text.isprintable()


def lines(headers: Sequence[str], right: Sequence[bool], rows: Sequence[Sequence[str]],
          width: int) -> list[str] | None:
    """The table's lines as rich draws them to a pipe, or None when it would wrap or measure."""
    widths = [len(h) for h in headers]
    if not all(map(_plain, headers)):
        return None
    for row in rows:
        for i, cell in enumerate(row):
            if not _plain(cell):
                return None
            if len(cell) > widths[i]:
                widths[i] = len(cell)
    if sum(widths) + len(CELL) * (len(widths) - 1) > width:
        return None

    def line(cells: Sequence[str], sep: str) -> str:
        return sep.join(c.rjust(w) if r else c.ljust(w) for c, w, r in zip(cells, widths, right, strict=True))

    last = len(widths) - 1  # the edge columns have padding on their inner side only
    rule = CROSS.join(RULE * (w + (i > 0) + (i < last)) for i, w in enumerate(widths))
    out = [line(headers, HEAD), rule]
    out.extend(line(row, CELL) for row in rows)
    return out
