"""An image drawn with half-block cells: each cell is `▀`, its top pixel the foreground colour and its
bottom pixel the background, so a W x H widget shows W x 2H pixels in any truecolor terminal.

A view of its `png` reactive (bytes). The PNG is decoded and downscaled with Pillow to the widget's
size once per new image or resize, not per frame; the lines are then plain segments.
"""

from __future__ import annotations

import io
import textwrap

from PIL import Image
from rich.color import Color
from rich.segment import Segment
from rich.style import Style
from textual.geometry import Size
from textual.reactive import reactive
from textual.strip import Strip
from textual.widget import Widget

UPPER_HALF = "▀"


def half_block_lines(image: Image.Image, width: int, height: int) -> list[Strip]:
    """`height` lines of `width` cells showing `image` scaled to fit (aspect kept, centred)."""
    if width <= 0 or height <= 0:
        return []
    img = image.convert("RGB")
    # a terminal cell is about twice as tall as wide: one cell = 1 x 2 pixels keeps the aspect
    scale = min(width / img.width, 2 * height / img.height)
    w, h = max(1, int(img.width * scale)), max(2, int(img.height * scale))
    h += h % 2
    img = img.resize((w, h), Image.Resampling.BOX)
    rgb = img.tobytes()  # row by row, 3 bytes a pixel
    row_bytes = 3 * w
    pad_left = (width - w) // 2
    top_pad = (height - h // 2) // 2
    blank = Strip.blank(width)
    lines = [blank] * top_pad
    styles: dict[tuple[bytes, bytes], Style] = {}
    for y in range(0, h, 2):
        segments = [Segment(" " * pad_left)] if pad_left else []
        top, bottom = y * row_bytes, (y + 1) * row_bytes
        for i in range(0, row_bytes, 3):
            key = (rgb[top + i:top + i + 3], rgb[bottom + i:bottom + i + 3])  # (r, g, b) above and below
            style = styles.get(key)
            if style is None:
                style = styles[key] = Style(color=Color.from_rgb(*key[0]), bgcolor=Color.from_rgb(*key[1]))
            segments.append(Segment(UPPER_HALF, style))
        lines.append(Strip(segments).adjust_cell_length(width))
    lines += [blank] * (height - len(lines))
    return lines[:height]


class HalfBlockImage(Widget):
    """Shows `png` scaled to the widget; `placeholder` while there is none."""

    DEFAULT_CSS = "HalfBlockImage { width: 1fr; height: 1fr; }"

    png: reactive[bytes | None] = reactive(None, always_update=False)

    def __init__(self, placeholder: str = "no image yet", *, id: str | None = None) -> None:  # noqa: A002
        super().__init__(id=id)
        self.placeholder = placeholder
        self._image: Image.Image | None = None
        self._lines: list[Strip] = []
        self._for: Size | None = None

    def watch_png(self, png: bytes | None) -> None:
        self._image = None
        if png:
            try:
                self._image = Image.open(io.BytesIO(png))
                self._image.load()
            except (OSError, ValueError):
                self._image = None
        self._for = None
        self.refresh()

    def render_line(self, y: int) -> Strip:
        size = self.size
        if self._image is None:  # the placeholder wrapped at spaces (80 columns cut it to `as samples `)
            lines = textwrap.wrap(self.placeholder, max(size.width, 1)) or [""]
            row = y - (size.height - len(lines)) // 2
            if 0 <= row < len(lines):
                return Strip([Segment(lines[row].center(size.width)[: size.width], Style(dim=True))])
            return Strip.blank(size.width)
        if self._for != size:
            self._lines = half_block_lines(self._image, size.width, size.height)
            self._for = size
        return self._lines[y] if y < len(self._lines) else Strip.blank(size.width)
