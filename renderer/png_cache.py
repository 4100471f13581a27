"""``/image.png``: one PNG encoding per progress step, shared by every request.

Before (issue 16 item 10) each request made the float64 image so far and several float64
temporaries of it: four concurrent requests at 2048x2048 took 1.11 GB, enough for two viewers
to OOM-kill a producer with a 512 MiB limit.  Now the 8-bit image is built tile by tile into
one uint8 buffer (temporaries of one tile), on the event loop so each tile is read between
results (never half-folded), yielding between tile rows; then PIL encodes it in a thread.
Requests arriving meanwhile await that same build; the bytes are kept until the job moves on.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

import numpy as np

from renderer.image import encode_png, to_8bit

if TYPE_CHECKING:
    from renderer.tasks import TaskBook


def tile_row_8bit(book: TaskBook, out: np.ndarray, row: list[int]) -> None:
    """Write the 8-bit image of the given tiles (each tile's sums / its samples so far, black
    where none yet) into ``out``; the same bits as ``to_8bit(book.image_so_far())``."""
    for tile in row:
        x, y, w, h = book.tiles[tile]
        part = book.tile_image(tile)
        out[y:y + h, x:x + w] = 0 if part is None else to_8bit(part)


class PngCache:
    """The PNG of a task book's image so far, rebuilt at most once per progress step."""

    def __init__(self, book: TaskBook) -> None:
        self.book = book
        self._key: int | None = None  # tasks done when the cached bytes were built
        self._png = b""
        self._building: asyncio.Future[bytes] | None = None
        self.builds = 0  # how many encodings were made (tests read it)
        rows: dict[int, list[int]] = {}
        for i, (_, y, _, _) in enumerate(book.tiles):
            rows.setdefault(y, []).append(i)
        self._rows = list(rows.values())

    async def png(self) -> bytes:
        if self._key == self.book.done:
            return self._png
        if self._building is None:
            self._building = asyncio.ensure_future(self._build())
        building = self._building
        return await asyncio.shield(building)

    async def _build(self) -> bytes:
        try:
            key = self.book.done
            pixels = np.zeros((self.book.height, self.book.width, 3), dtype=np.uint8)
            for row in self._rows:
                tile_row_8bit(self.book, pixels, row)
                await asyncio.sleep(0)  # results keep flowing while a large image is converted
            png = await asyncio.get_running_loop().run_in_executor(None, encode_png, pixels)
            del pixels
            self._key, self._png = key, png
            self.builds += 1
            return png
        finally:
            self._building = None
