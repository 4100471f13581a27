"""Issue 16 item 14: with verification on, a consumer that returns made-up sums is caught, refused
and reported, its results are discarded, and the image is still the reference, bit for bit."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import numpy as np
import pytest

from renderer import protocol as proto
from renderer import scene as scene_mod
from renderer.tasks import TaskBook
from renderer.verify import Verifier
from tests.renderer.test_renderer_producer import Client, run_consumer
from tests.renderer.testkit import THREE, InProcessProducer, get_status, reference, wait_for


def test_verifier_needs_two_agreeing_consumers() -> None:
    v = Verifier(1.0)
    good, bad = np.ones((2, 2, 3), dtype=np.int64), np.full((2, 2, 3), 2, dtype=np.int64)
    assert v.result(5, "a", good) == (v_ := v.result(5, "a", good)) and not v_.accepted  # one opinion each
    d = v.result(5, "b", bad)
    assert not d.accepted and d.exclude == {"a", "b"} and v.disputes == 1
    assert v.result(5, "c", good.copy()).guilty == ("b",)
    assert 0.2 < sum(Verifier(0.3).sampled(t) for t in range(10_000)) / 10_000 < 0.4


def test_discard_empties_the_tiles_a_consumer_touched() -> None:
    sc = scene_mod.load(THREE, width=24, height=16, spp=8, chunk=2, tile=8)  # 6 tiles x 4 chunks
    book = TaskBook(sc)
    book.lease("a", 0.0, 10.0)
    for _ in range(6):
        book.lease("b", 0.0, 10.0)
    for owner, tid in (("a", 0), ("b", 6), ("b", 1)):  # tile 0 chunks 0 and 1, tile 1 chunk 0
        spec = book.spec(tid)
        assert book.complete(owner, tid, np.ones((spec.h, spec.w, 3), dtype=np.int64))
    assert book.done == 3 and book.tile_samples[0] == 4
    assert book.discard("b") == 3  # tile 0 (a's chunk 0 too) and tile 1
    assert book.done == 0 and not book.acc.any() and not book.tile_samples.any() and not book.done_mask.any()
    assert book.queued == book.total - 4  # tasks 2..5 are still leased to b


def poisoner(port: int, stop: threading.Event, got: list[proto.Message | Exception]) -> None:
    """A consumer with the token that returns made-up sums for every task it gets."""
    c = Client(port)
    c.hello(name="poisoner")
    try:
        while not stop.is_set():
            c.send(proto.Request())
            msg = c.recv(120)  # parked while every queued task excludes it: under load that outlasted 10 s
            if isinstance(msg, proto.Task):
                c.send(proto.Result(msg.task_id, np.full((msg.h, msg.w, 3), 1 << 31, dtype=np.int64)))
            elif isinstance(msg, proto.Wait):
                time.sleep(msg.milliseconds / 1000)
            else:
                got.append(msg)
                return
    except (EOFError, OSError) as e:  # what happened, not a Done it never received
        got.append(e)
    finally:
        c.close()


@pytest.mark.parametrize("fraction", [1.0, 0.5])
def test_poisoning_consumer_is_caught_and_the_image_is_the_reference(tmp_path: Path, fraction: float) -> None:
    sc = scene_mod.load(THREE, width=32, height=32, spp=16, chunk=2, tile=8)  # 16 tiles x 8 chunks
    raw = tmp_path / "o.npy"
    with InProcessProducer(sc, raw=raw, verify=fraction, serve_after_done=True) as p:  # still there to refuse it again
        stop, got = threading.Event(), []
        bad = threading.Thread(target=poisoner, args=(p.port, stop, got), daemon=True)
        bad.start()  # first: it gets the first tasks, seen on the producer, not hoped for after a sleep
        wait_for(lambda: p.call(lambda: any(c.info.id == "poisoner" and p.producer.book.history.get(c.owner)
                                            for c in p.producer.conns.values())), 30, "the poisoner's first task")
        honest = [run_consumer(p.port, f"honest{i}") for i in range(2)]
        for t, _ in honest:
            t.join(60)
        stop.set()
        bad.join(150)
        assert [rc for _, rc in honest] == [[0], [0]]
        assert got and isinstance(got[0], proto.Error) and "refused" in got[0].text, got
        st = get_status(p.status_port)
        states = {c["id"]: c["state"] for c in st["consumers"]}
        assert states["poisoner"] == "refused"
        assert p.call(lambda: p.producer.verifier.checked) > 0
        again = Client(p.port)  # and it stays refused
        again.send(proto.Hello(b"", "poisoner"))
        assert again.recv() == proto.Error("refused: this consumer returned wrong results")
        again.close()
    assert np.load(raw).tobytes() == reference(sc).tobytes()
