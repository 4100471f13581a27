"""Producer/consumer wire format (pure: bytes in, messages out; no I/O).

A frame is an 8-byte header -- magic ``b"KR"``, version (u8), message type (u8),
payload length (u32, big endian) -- followed by the payload.  Each message type has a
maximum payload size, checked from the header *before* the payload is read, and every
field is validated on decode; anything else raises :class:`ProtocolError`.

Conversation (consumer -> producer on the left)::

    HELLO(token, name)      -> JOB(job id, settings, scene YAML) | ERROR(text)
    REQUEST                 -> TASK(id, tile, samples) | WAIT(ms) | DONE
    RESULT(id, sums)           (no reply; idempotent by task id)
    RETURN(id)                 (hand a leased task back, e.g. on SIGTERM)
"""

from __future__ import annotations

import hmac
import struct
from dataclasses import dataclass
from enum import IntEnum

import numpy as np

MAGIC = b"KR"
VERSION = 2  # 2: RESULT carries int64 fixed-point sums (1: float64)
HEADER = struct.Struct(">2sBBI")
HEADER_SIZE = HEADER.size

MAX_TOKEN = 256
MAX_NAME = 128
MAX_SCENE = 8 * 1024 * 1024  # == renderer.scene.MAX_SCENE_BYTES
MAX_SIDE = 16_384
MAX_SPP = 1_000_000
MAX_TILE_PIXELS = 512 * 512
MAX_ERROR = 1024
MAX_WAIT_MS = 60_000
JOB_ID_SIZE = 32


class ProtocolError(ValueError):
    """A frame or field that does not follow the protocol."""


class MsgType(IntEnum):
    HELLO = 1
    JOB = 2
    REQUEST = 3
    TASK = 4
    WAIT = 5
    DONE = 6
    RESULT = 7
    RETURN = 8
    ERROR = 9


_TASK = struct.Struct(">7I")
_JOB = struct.Struct(f">{JOB_ID_SIZE}s5I")
_RESULT = struct.Struct(">3I")
_U32 = struct.Struct(">I")
_U16 = struct.Struct(">H")

MAX_PAYLOAD = {
    MsgType.HELLO: 2 + MAX_TOKEN + 2 + MAX_NAME,
    MsgType.JOB: _JOB.size + MAX_SCENE,
    MsgType.REQUEST: 0,
    MsgType.TASK: _TASK.size,
    MsgType.WAIT: _U32.size,
    MsgType.DONE: 0,
    MsgType.RESULT: _RESULT.size + MAX_TILE_PIXELS * 24,
    MsgType.RETURN: _U32.size,
    MsgType.ERROR: 2 + MAX_ERROR,
}
FROM_CONSUMER = frozenset({MsgType.HELLO, MsgType.REQUEST, MsgType.RESULT, MsgType.RETURN})
FROM_PRODUCER = frozenset({MsgType.JOB, MsgType.TASK, MsgType.WAIT, MsgType.DONE, MsgType.ERROR})


@dataclass(frozen=True)
class Hello:
    token: bytes
    name: str


@dataclass(frozen=True)
class Job:
    job_id: bytes
    width: int
    height: int
    spp: int
    tile: int
    chunk: int
    scene_text: str


@dataclass(frozen=True)
class Request:
    pass


@dataclass(frozen=True)
class Task:
    task_id: int
    x: int
    y: int
    w: int
    h: int
    s0: int
    s1: int

    @property
    def samples(self) -> int:
        return self.w * self.h * (self.s1 - self.s0)


@dataclass(frozen=True)
class Wait:
    ms: int


@dataclass(frozen=True)
class Done:
    pass


@dataclass(frozen=True, eq=False)
class Result:
    task_id: int
    data: np.ndarray  # (h, w, 3) int64 fixed-point sums (renderer/fixed.py), >= 0


@dataclass(frozen=True)
class Return:
    task_id: int


@dataclass(frozen=True)
class Error:
    text: str


Message = Hello | Job | Request | Task | Wait | Done | Result | Return | Error


def token_ok(expected: bytes | None, got: bytes) -> bool:
    """Constant-time token check; no expected token means any token is accepted."""
    return expected is None or hmac.compare_digest(expected, got)


# -- encoding ------------------------------------------------------------------------
def _frame(kind: MsgType, payload: bytes) -> bytes:
    if len(payload) > MAX_PAYLOAD[kind]:
        raise ProtocolError(f"{kind.name} payload of {len(payload)} bytes exceeds {MAX_PAYLOAD[kind]}")
    return HEADER.pack(MAGIC, VERSION, kind, len(payload)) + payload


def _short_bytes(b: bytes, limit: int, what: str) -> bytes:
    if len(b) > limit:
        raise ProtocolError(f"{what} longer than {limit} bytes")
    return _U16.pack(len(b)) + b


def encode(msg: Message) -> bytes:
    """One message -> one frame."""
    if isinstance(msg, Hello):
        return _frame(MsgType.HELLO, _short_bytes(msg.token, MAX_TOKEN, "token")
                      + _short_bytes(msg.name.encode(), MAX_NAME, "name"))
    if isinstance(msg, Job):
        _check_job(msg)
        return _frame(MsgType.JOB, _JOB.pack(msg.job_id, msg.width, msg.height, msg.spp, msg.tile,
                                             msg.chunk) + msg.scene_text.encode())
    if isinstance(msg, Request):
        return _frame(MsgType.REQUEST, b"")
    if isinstance(msg, Task):
        _check_task(msg)
        return _frame(MsgType.TASK, _TASK.pack(msg.task_id, msg.x, msg.y, msg.w, msg.h, msg.s0, msg.s1))
    if isinstance(msg, Wait):
        return _frame(MsgType.WAIT, _U32.pack(_check_range(msg.ms, 0, MAX_WAIT_MS, "wait")))
    if isinstance(msg, Done):
        return _frame(MsgType.DONE, b"")
    if isinstance(msg, Result):
        if msg.data.dtype.kind != "i":
            raise ProtocolError(f"result data must be int64 fixed-point sums, got {msg.data.dtype}")
        a = np.ascontiguousarray(msg.data, dtype="<i8")
        if a.ndim != 3 or a.shape[2] != 3:
            raise ProtocolError(f"result data must be (h, w, 3), got {a.shape}")
        h, w = a.shape[:2]
        _check_range(h * w, 1, MAX_TILE_PIXELS, "result pixels")
        return _frame(MsgType.RESULT, _RESULT.pack(msg.task_id, w, h) + a.tobytes())
    if isinstance(msg, Return):
        return _frame(MsgType.RETURN, _U32.pack(msg.task_id))
    if isinstance(msg, Error):
        return _frame(MsgType.ERROR, _short_bytes(msg.text.encode()[:MAX_ERROR], MAX_ERROR, "error"))
    raise ProtocolError(f"not a message: {msg!r}")


# -- decoding ------------------------------------------------------------------------
def parse_header(header: bytes, allowed: frozenset[MsgType] | None = None) -> tuple[MsgType, int]:
    """Validate a frame header: (message type, payload length).  ``allowed`` limits the types."""
    if len(header) != HEADER_SIZE:
        raise ProtocolError(f"header must be {HEADER_SIZE} bytes, got {len(header)}")
    magic, version, kind, length = HEADER.unpack(header)
    if magic != MAGIC:
        raise ProtocolError(f"bad magic {magic!r}")
    if version != VERSION:
        raise ProtocolError(f"unsupported protocol version {version} (this is {VERSION})")
    try:
        mtype = MsgType(kind)
    except ValueError:
        raise ProtocolError(f"unknown message type {kind}") from None
    if allowed is not None and mtype not in allowed:
        raise ProtocolError(f"unexpected message type {mtype.name}")
    if length > MAX_PAYLOAD[mtype]:
        raise ProtocolError(f"{mtype.name} payload of {length} bytes exceeds {MAX_PAYLOAD[mtype]}")
    return mtype, length


def decode(mtype: MsgType, payload: bytes) -> Message:
    """Validate and decode one payload of a known type."""
    n = len(payload)
    if n > MAX_PAYLOAD[mtype]:
        raise ProtocolError(f"{mtype.name} payload of {n} bytes exceeds {MAX_PAYLOAD[mtype]}")
    if mtype is MsgType.HELLO:
        token, rest = _read_short(payload, MAX_TOKEN, "token")
        name, rest = _read_short(rest, MAX_NAME, "name")
        _no_trailing(rest, mtype)
        return Hello(token, _text(name, "name", printable=True))
    if mtype is MsgType.JOB:
        if n < _JOB.size:
            raise ProtocolError("JOB payload truncated")
        job_id, width, height, spp, tile, chunk = _JOB.unpack_from(payload)
        msg = Job(job_id, width, height, spp, tile, chunk, _text(payload[_JOB.size:], "scene"))
        _check_job(msg)
        return msg
    if mtype in (MsgType.REQUEST, MsgType.DONE):
        _no_trailing(payload, mtype)
        return Request() if mtype is MsgType.REQUEST else Done()
    if mtype is MsgType.TASK:
        _exact(payload, _TASK.size, mtype)
        task = Task(*_TASK.unpack(payload))
        _check_task(task)
        return task
    if mtype is MsgType.WAIT:
        _exact(payload, _U32.size, mtype)
        return Wait(_check_range(_U32.unpack(payload)[0], 0, MAX_WAIT_MS, "wait"))
    if mtype is MsgType.RESULT:
        if n < _RESULT.size:
            raise ProtocolError("RESULT payload truncated")
        task_id, w, h = _RESULT.unpack_from(payload)
        _check_range(w, 1, MAX_TILE_PIXELS, "result width")
        _check_range(h, 1, MAX_TILE_PIXELS, "result height")
        _check_range(w * h, 1, MAX_TILE_PIXELS, "result pixels")
        _exact(payload, _RESULT.size + w * h * 24, mtype)
        data = np.frombuffer(payload, dtype="<i8", offset=_RESULT.size).reshape(h, w, 3)
        if not (data >= 0).all():
            raise ProtocolError("RESULT data must be non-negative")
        return Result(task_id, data)
    if mtype is MsgType.RETURN:
        _exact(payload, _U32.size, mtype)
        return Return(_U32.unpack(payload)[0])
    text, rest = _read_short(payload, MAX_ERROR, "error")
    _no_trailing(rest, mtype)
    return Error(_text(text, "error"))


def decode_frame(buf: bytes | bytearray, allowed: frozenset[MsgType] | None = None) -> tuple[Message, int] | None:
    """Decode the first frame in ``buf``: (message, bytes used), or None if incomplete."""
    if len(buf) < HEADER_SIZE:
        return None
    mtype, length = parse_header(bytes(buf[:HEADER_SIZE]), allowed)
    end = HEADER_SIZE + length
    if len(buf) < end:
        return None
    return decode(mtype, bytes(buf[HEADER_SIZE:end])), end


# -- field checks ----------------------------------------------------------------------
def _check_range(v: int, lo: int, hi: int, what: str) -> int:
    if not lo <= v <= hi:
        raise ProtocolError(f"{what} {v} outside [{lo}, {hi}]")
    return v


def _check_task(t: Task) -> None:
    _check_range(t.w, 1, MAX_SIDE, "task width")
    _check_range(t.h, 1, MAX_SIDE, "task height")
    _check_range(t.w * t.h, 1, MAX_TILE_PIXELS, "task pixels")
    _check_range(t.x, 0, MAX_SIDE - t.w, "task x")
    _check_range(t.y, 0, MAX_SIDE - t.h, "task y")
    _check_range(t.s1, 1, MAX_SPP, "task sample end")
    _check_range(t.s0, 0, t.s1 - 1, "task sample start")
    _check_range(t.task_id, 0, 2**32 - 1, "task id")


def _check_job(j: Job) -> None:
    if len(j.job_id) != JOB_ID_SIZE:
        raise ProtocolError(f"job id must be {JOB_ID_SIZE} bytes")
    _check_range(j.width, 1, MAX_SIDE, "job width")
    _check_range(j.height, 1, MAX_SIDE, "job height")
    _check_range(j.spp, 1, MAX_SPP, "job spp")
    _check_range(j.tile, 1, 512, "job tile")
    _check_range(j.chunk, 1, j.spp, "job chunk")
    if len(j.scene_text.encode()) > MAX_SCENE:
        raise ProtocolError("job scene too large")


def _read_short(b: bytes, limit: int, what: str) -> tuple[bytes, bytes]:
    if len(b) < 2:
        raise ProtocolError(f"{what} length truncated")
    (n,) = _U16.unpack_from(b)
    if n > limit:
        raise ProtocolError(f"{what} of {n} bytes exceeds {limit}")
    if len(b) < 2 + n:
        raise ProtocolError(f"{what} truncated")
    return b[2:2 + n], b[2 + n:]


def _text(b: bytes, what: str, *, printable: bool = False) -> str:
    try:
        s = b.decode("utf-8")
    except UnicodeDecodeError:
        raise ProtocolError(f"{what} is not UTF-8") from None
    if printable and not s.isprintable():
        raise ProtocolError(f"{what} has unprintable characters")
    return s


def _exact(payload: bytes, size: int, mtype: MsgType) -> None:
    if len(payload) != size:
        raise ProtocolError(f"{mtype.name} payload must be {size} bytes, got {len(payload)}")


def _no_trailing(rest: bytes, mtype: MsgType) -> None:
    if rest:
        raise ProtocolError(f"{len(rest)} trailing bytes after {mtype.name}")
