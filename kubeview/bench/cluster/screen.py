"""Just enough of a terminal to read what a TUI in a pty shows (k9s draws with tcell, which moves
the cursor and rewrites only the cells that changed, so its output stream is not its screen).

Handles printable characters, CR/LF/BS, cursor positioning (CUP/HVP, CUU/CUD/CUF/CUB, CHA/VPA) and
erasing (ED/EL); every other escape sequence (colours, modes) is skipped. Pure: bytes in, lines out.
"""

from __future__ import annotations

import re

_TOKEN = re.compile(r"\x1b\[([0-9;?]*)([@-~])|\x1b[\]P_^][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b[()][0-9A-Za-z]|\x1b.|[\r\n\b]|[^\x1b\r\n\b]+")


class Screen:
    def __init__(self, cols: int, rows: int) -> None:
        self.cols, self.rows = cols, rows
        self.cells = [[" "] * cols for _ in range(rows)]
        self.x = self.y = 0
        self._tail = ""  # an escape sequence cut at the end of the last feed

    def feed(self, text: str) -> None:
        text = self._tail + text
        self._tail = ""
        cut = text.rfind("\x1b")
        if cut != -1 and cut > len(text) - 32 and not _complete(text[cut:]):
            text, self._tail = text[:cut], text[cut:]
        for m in _TOKEN.finditer(text):
            tok = m.group(0)
            if m.group(2):
                self._csi(m.group(1), m.group(2))
            elif tok == "\r":
                self.x = 0
            elif tok == "\n":
                self.y = min(self.rows - 1, self.y + 1)
            elif tok == "\b":
                self.x = max(0, self.x - 1)
            elif not tok.startswith("\x1b"):
                self._put(tok)

    def lines(self) -> list[str]:
        return ["".join(row).rstrip() for row in self.cells]

    def _put(self, text: str) -> None:
        for ch in text:
            if ch < " ":
                continue
            if self.x >= self.cols:
                self.x, self.y = 0, min(self.rows - 1, self.y + 1)
            self.cells[self.y][self.x] = ch
            self.x += 1

    def _csi(self, params: str, final: str) -> None:
        args = [int(a) if a.isdigit() else 0 for a in params.lstrip("?").split(";")] if params else []
        first = args[0] if args else 0
        if final in "Hf":
            self.y = min(self.rows, max(1, first or 1)) - 1
            self.x = min(self.cols, max(1, args[1] if len(args) > 1 and args[1] else 1)) - 1
        elif final == "A":
            self.y = max(0, self.y - (first or 1))
        elif final == "B":
            self.y = min(self.rows - 1, self.y + (first or 1))
        elif final == "C":
            self.x = min(self.cols - 1, self.x + (first or 1))
        elif final == "D":
            self.x = max(0, self.x - (first or 1))
        elif final == "G":
            self.x = min(self.cols, max(1, first or 1)) - 1
        elif final == "d":
            self.y = min(self.rows, max(1, first or 1)) - 1
        elif final == "J":
            rows = range(self.rows) if first == 2 else range(self.y + 1, self.rows) if first == 0 else range(0, self.y)
            for r in rows:
                self.cells[r] = [" "] * self.cols
            if first == 0:
                self._erase_line(0)
        elif final == "K":
            self._erase_line(first)

    def _erase_line(self, mode: int) -> None:
        row = self.cells[self.y]
        span = range(self.x, self.cols) if mode == 0 else range(0, self.x + 1) if mode == 1 else range(self.cols)
        for c in span:
            if c < self.cols:
                row[c] = " "


def _complete(seq: str) -> bool:
    return bool(re.match(r"\x1b(\[[0-9;?]*[@-~]|[^\[\]P_^()]|[()][0-9A-Za-z]|[\]P_^][^\x07\x1b]*(\x07|\x1b\\))", seq))
