"""Messages workers post to the app. High-rate ones coalesce (Toolong's pattern, see STYLE.md).

`ClusterChanged` carries nothing: the state holds the data, and a queue of them collapses into one,
so a burst of watch events becomes a single refresh.
"""

from __future__ import annotations

from dataclasses import dataclass

from textual.message import Message


@dataclass
class ClusterChanged(Message, bubble=False):
    """The model changed; read it under the state's lock."""

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, ClusterChanged)


@dataclass
class RenderUpdated(Message, bubble=False):
    """A new status (and maybe a new image) of the render job."""

    status: object
    png: bytes | None = None
    error: str | None = None

    def can_replace(self, message: Message) -> bool:
        # an update carrying an image must not be dropped for one without
        return isinstance(message, RenderUpdated) and (self.png is not None or message.png is None)


@dataclass
class ActionDone(Message, bubble=False):
    """A user action (scale, apply packing) finished: `text` is the one-line result or refusal."""

    text: str
    ok: bool = True
