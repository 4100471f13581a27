"""One consumer connection on the producer side: bytes in, validated messages out.

A callback-based :class:`asyncio.Protocol` (no task, no timer per frame: the producer's
cost per task is a few microseconds of framing).  It enforces the protocol's shape: HELLO
first and only once, only consumer message types, every header and payload validated,
a HELLO deadline, a deadline for completing a started frame, and a bound on replies the
peer leaves unread.  Any violation is logged and closes the connection; what the
messages *mean* is the :class:`Handler`'s business.
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Protocol

from renderer import protocol as proto

if TYPE_CHECKING:
    from renderer.consumer_stats import ConsumerInfo

log = logging.getLogger("renderer.producer")

_HELLO = frozenset({proto.MsgType.HELLO})
_AFTER_HELLO = proto.FROM_CONSUMER - _HELLO


class Handler(Protocol):
    def link_opened(self, link: Link) -> None: ...
    def link_message(self, link: Link, msg: proto.Message) -> None: ...
    def link_closed(self, link: Link) -> None: ...


class Link(asyncio.Protocol):
    """A consumer connection and the producer's per-consumer state."""

    def __init__(self, handler: Handler, owner: str, *, hello_timeout: float, frame_timeout: float,
                 max_unread: int = 1 << 20) -> None:
        self.handler = handler
        self.owner = owner  # unique per connection; the lease owner
        self.hello_timeout, self.frame_timeout, self.max_unread = hello_timeout, frame_timeout, max_unread
        self.address = "?"
        self.info: ConsumerInfo | None = None  # set by the handler when HELLO is accepted
        self.wanted = 0  # parked REQUESTs
        self.leases: set[int] = set()
        self.closed = False
        self._buf = bytearray()
        self._transport: asyncio.Transport | None = None
        self._timer: asyncio.TimerHandle | None = None

    @property
    def name(self) -> str:
        return self.info.id if self.info is not None else "before HELLO"

    @property
    def consumer(self) -> ConsumerInfo:
        """The accepted consumer's entry: only for a link whose HELLO was accepted."""
        if self.info is None:
            raise RuntimeError(f"{self.owner}: no consumer before HELLO")
        return self.info

    # -- sending ----------------------------------------------------------------------------
    def send(self, msg: proto.Message) -> None:
        self.send_frame(proto.encode(msg))

    def send_frame(self, frame: bytes) -> None:
        if not self.closed and self._transport is not None:
            self._transport.write(frame)

    def close(self) -> None:
        """Close (after flushing what was sent) and tell the handler, once."""
        transport = self._transport
        self._finish()
        if transport is not None:
            transport.close()

    # -- asyncio callbacks ----------------------------------------------------------------------
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self._transport = transport  # type: ignore[assignment]
        peer = transport.get_extra_info("peername")
        self.address = f"{peer[0]}:{peer[1]}" if isinstance(peer, tuple) else str(peer)
        self._arm(self.hello_timeout, "no HELLO in time")
        self.handler.link_opened(self)

    def data_received(self, data: bytes) -> None:
        if self.closed:
            return
        self._buf += data
        try:
            while len(self._buf) >= proto.HEADER_SIZE and not self.closed:
                allowed = _AFTER_HELLO if self.info is not None else _HELLO
                mtype, length = proto.parse_header(bytes(self._buf[:proto.HEADER_SIZE]), allowed)
                end = proto.HEADER_SIZE + length
                if len(self._buf) < end:
                    break
                payload = bytes(self._buf[proto.HEADER_SIZE:end])
                del self._buf[:end]
                before_hello = self.info is None
                self.handler.link_message(self, proto.decode(mtype, payload))
                if before_hello and self.info is not None:
                    self._disarm()  # the HELLO deadline is met, whatever else came in this read
            if self.closed:
                return
            if self._transport is not None and self._transport.get_write_buffer_size() > self.max_unread:
                raise proto.ProtocolError("not reading its replies")
            if self.info is not None:  # after HELLO: a started frame must complete in time
                if not self._buf:
                    self._disarm()
                elif self._timer is None:
                    self._arm(self.frame_timeout, "frame not completed in time")
        except proto.ProtocolError as e:
            log.warning("%s (%s): protocol error: %s; disconnecting", self.address, self.name, e)
            self.close()
        except Exception:
            log.exception("%s (%s): unexpected error; disconnecting", self.address, self.name)
            self.close()

    def eof_received(self) -> bool:
        if self._buf:
            log.warning("%s (%s): connection closed mid-frame", self.address, self.name)
        elif self.info is None:  # probes and scanners do this all the time: not worth a line each
            log.debug("%s: connection closed before HELLO", self.address)
        return False

    def connection_lost(self, exc: Exception | None) -> None:
        self._finish()

    # -- internals ------------------------------------------------------------------------------
    def _finish(self) -> None:
        if self.closed:
            return
        self.closed = True
        self._disarm()
        self.handler.link_closed(self)

    def _arm(self, seconds: float, why: str) -> None:
        self._disarm()
        self._timer = asyncio.get_running_loop().call_later(seconds, self._expired, why)

    def _disarm(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _expired(self, why: str) -> None:
        self._timer = None
        log.warning("%s (%s): %s; disconnecting", self.address, self.name, why)
        self.close()
