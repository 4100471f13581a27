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


@dataclass
class TuneUpdated(Message, bubble=False):
    """The tuner moved: `records` (every trial, when one finished) and/or `live` (the running trial)."""

    records: list | None = None
    live: object = None
    error: str | None = None
    done: bool = False

    def can_replace(self, message: Message) -> bool:
        # only a live update without news replaces another: finished trials and errors are all shown
        return (isinstance(message, TuneUpdated) and message.records is None and message.error is None
                and not message.done)
