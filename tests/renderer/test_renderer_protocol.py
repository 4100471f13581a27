"""Wire format: every message round-trips; truncated, oversized, bad-version, bad-type,
bad-field and bad-token frames are rejected."""

from __future__ import annotations

import struct

import numpy as np
import pytest

from renderer import protocol as proto
from renderer.protocol import MsgType, ProtocolError

DATA = np.arange(2 * 3 * 3, dtype=np.int64).reshape(2, 3, 3) * (1 << 40)

MESSAGES = [
    proto.Hello(b"s3cret", "consumer-7"),
    proto.Hello(b"", ""),
    proto.Job(bytes(range(32)), 48, 32, 16, 16, 4, "name: x\nseed: 1\n"),
    proto.Request(),
    proto.Task(5, 16, 0, 16, 16, 4, 8),
    proto.Wait(500),
    proto.Done(),
    proto.Return(12),
    proto.Error("bad token"),
]


@pytest.mark.parametrize("msg", MESSAGES, ids=lambda m: type(m).__name__)
def test_round_trip(msg: proto.Message) -> None:
    frame = proto.encode(msg)
    got, used = proto.decode_frame(frame)
    assert used == len(frame) and got == msg


def test_result_round_trip_keeps_every_bit() -> None:
    data = DATA.copy()
    data[0, 0, 0] = 2**63 - 1
    frame = proto.encode(proto.Result(3, data))
    got, _ = proto.decode_frame(frame)
    assert isinstance(got, proto.Result) and got.task_id == 3
    assert got.data.dtype == np.int64 and got.data.shape == (2, 3, 3) and np.array_equal(got.data, data)
    with pytest.raises(ProtocolError, match="int64 fixed-point"):  # float sums are never cast silently
        proto.encode(proto.Result(3, DATA / 7.0))


def test_incomplete_frames_wait_for_more() -> None:
    frame = proto.encode(proto.Task(1, 0, 0, 4, 4, 0, 1))
    for n in range(len(frame)):
        assert proto.decode_frame(frame[:n]) is None
    two = frame + proto.encode(proto.Done())
    msg, used = proto.decode_frame(two)
    assert msg == proto.Task(1, 0, 0, 4, 4, 0, 1) and proto.decode_frame(two[used:])[0] == proto.Done()


def _header(kind: int, length: int, magic: bytes = b"KR", version: int = proto.VERSION) -> bytes:
    return struct.pack(">2sBBI", magic, version, kind, length)


BAD_HEADERS = [
    (_header(MsgType.REQUEST, 0, magic=b"HT"), "magic"),
    (_header(MsgType.REQUEST, 0, version=1), "version"),  # 1: float64 results, before fixed point
    (_header(0, 0), "unknown message type"),
    (_header(200, 0), "unknown message type"),
    (_header(MsgType.RESULT, 2**32 - 1), "exceeds"),
    (_header(MsgType.JOB, proto.MAX_PAYLOAD[MsgType.JOB] + 1), "exceeds"),
    (_header(MsgType.HELLO, 10_000), "exceeds"),
    (_header(MsgType.REQUEST, 1), "exceeds"),
]


@pytest.mark.parametrize(("header", "words"), BAD_HEADERS, ids=[w for _, w in BAD_HEADERS])
def test_bad_headers_are_rejected_before_the_payload(header: bytes, words: str) -> None:
    with pytest.raises(ProtocolError, match=words):
        proto.parse_header(header)
    with pytest.raises(ProtocolError):
        proto.decode_frame(header)  # no payload needed to reject it


def test_types_are_checked_against_the_direction() -> None:
    frame = proto.encode(proto.Task(1, 0, 0, 1, 1, 0, 1))
    with pytest.raises(ProtocolError, match="unexpected message type TASK"):
        proto.decode_frame(frame, proto.FROM_CONSUMER)
    with pytest.raises(ProtocolError, match="unexpected"):
        proto.decode_frame(proto.encode(proto.Request()), proto.FROM_PRODUCER)


def _frame(kind: MsgType, payload: bytes) -> bytes:
    return _header(kind, len(payload)) + payload


BAD_FIELDS = [
    (_frame(MsgType.TASK, struct.pack(">7I", 1, 0, 0, 4, 4, 0, 1)[:-1]), "must be 28 bytes"),
    (_frame(MsgType.TASK, struct.pack(">7I", 1, 0, 0, 4, 4, 3, 3)), "sample start"),
    (_frame(MsgType.TASK, struct.pack(">7I", 1, 0, 0, 0, 4, 0, 1)), "width"),
    (_frame(MsgType.TASK, struct.pack(">7I", 1, 0, 0, 600, 600, 0, 1)), "pixels"),
    (_frame(MsgType.TASK, struct.pack(">7I", 1, 16380, 0, 8, 8, 0, 1)), "task x"),
    (_frame(MsgType.RESULT, struct.pack(">3I", 1, 2, 2) + bytes(8 * 11)), "must be"),
    (_frame(MsgType.RESULT, struct.pack(">3I", 1, 2, 2) + bytes(8 * 13)), "must be"),
    (_frame(MsgType.RESULT, struct.pack(">3I", 1, 0, 2)), "width"),
    (_frame(MsgType.RESULT, struct.pack(">3I", 1, 1, 1) + struct.pack("<3q", 1, -1, 0)), "non-negative"),
    (_frame(MsgType.RESULT, b"\x00\x01"), "truncated"),
    (_frame(MsgType.HELLO, b"\x00\x05abc"), "truncated"),
    (_frame(MsgType.HELLO, b"\x00\x00\x00\x02\xff\xfe"), "UTF-8"),
    (_frame(MsgType.HELLO, b"\x00\x00\x00\x02a\n"), "unprintable"),
    (_frame(MsgType.HELLO, b"\x00\x00\x00\x01ab"), "trailing"),
    (_frame(MsgType.HELLO, b"\x01\x2c" + b"x" * 300), "token of 300 bytes"),
    (_frame(MsgType.JOB, bytes(32) + struct.pack(">5I", 4, 4, 4, 4, 8)), "chunk"),
    (_frame(MsgType.JOB, bytes(20)), "truncated"),
    (_frame(MsgType.WAIT, struct.pack(">I", 10**9)), "wait"),
    (_frame(MsgType.RETURN, b"\x00"), "must be 4 bytes"),
]


@pytest.mark.parametrize(("frame", "words"), BAD_FIELDS, ids=[w for _, w in BAD_FIELDS])
def test_bad_fields_are_rejected(frame: bytes, words: str) -> None:
    with pytest.raises(ProtocolError, match=words):
        proto.decode_frame(frame)


def test_encode_refuses_what_decode_would_refuse() -> None:
    with pytest.raises(ProtocolError):
        proto.encode(proto.Hello(b"x" * 300, "n"))
    with pytest.raises(ProtocolError):
        proto.encode(proto.Task(1, 0, 0, 4, 4, 5, 5))
    with pytest.raises(ProtocolError):
        proto.encode(proto.Result(1, np.zeros((600, 600, 3))))


def test_token_check() -> None:
    assert proto.token_ok(None, b"anything")
    assert proto.token_ok(b"s3cret", b"s3cret")
    assert not proto.token_ok(b"s3cret", b"s3cre")
    assert not proto.token_ok(b"s3cret", b"")


def test_random_bytes_never_crash_the_decoder() -> None:
    rng = np.random.default_rng(0)
    valid = b"".join(proto.encode(m) for m in MESSAGES) + proto.encode(proto.Result(1, DATA))
    for _ in range(3000):
        buf = bytearray(valid)
        for i in rng.integers(0, len(buf), size=int(rng.integers(1, 6))):
            buf[i] = int(rng.integers(0, 256))
        buf = buf[: int(rng.integers(0, len(buf) + 1))]
        try:
            while (got := proto.decode_frame(bytes(buf))) is not None:
                buf = buf[got[1]:]
        except ProtocolError:
            pass
