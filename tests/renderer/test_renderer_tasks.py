"""The task book and checkpoints: nothing lost, nothing counted twice, exact order-free reduction."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from renderer import checkpoint as ckpt
from renderer import kernels
from renderer import scene as scene_mod
from renderer.fixed import MAX_SAMPLE, SCALE
from renderer.image import to_8bit
from renderer.png_cache import tile_row_8bit
from renderer.tasks import TaskBook
from tests.renderer.testkit import THREE


@pytest.fixture(scope="module")
def scene() -> scene_mod.Scene:
    return scene_mod.load(THREE, width=20, height=12, spp=10, chunk=3, tile=8)  # 3x2 tiles, 4 chunks


@pytest.fixture(scope="module")
def results(scene: scene_mod.Scene) -> dict[int, np.ndarray]:
    book = TaskBook(scene)
    out = {}
    for tid in range(book.total):
        t = book.spec(tid)
        out[tid] = kernels.render_chunk(scene, t.x, t.y, t.w, t.h, t.s0, t.s1)
    return out


def test_tasks_cover_the_job(scene: scene_mod.Scene) -> None:
    book = TaskBook(scene)
    assert (book.n_tiles, book.n_chunks, book.total) == (6, 4, 24)
    assert [book.spec(i).tile for i in range(7)] == [0, 1, 2, 3, 4, 5, 0]  # chunk-major ids
    samples = sum(book.spec(i).samples for i in range(book.total))
    assert samples == book.samples_total == 20 * 12 * 10
    assert book.spec(5) == book.spec(5) and (book.spec(5).w, book.spec(5).h) == (4, 4)  # edge tile


def test_any_completion_order_gives_the_reference_bits(scene: scene_mod.Scene, results: dict) -> None:
    ref = kernels.accumulate_image(scene, parallel=False)
    for seed in range(3):
        book = TaskBook(scene)
        order = np.random.default_rng(seed).permutation(book.total)
        for _ in order:
            assert book.lease("a", 0.0, 10.0) is not None
        for tid in order:
            assert book.complete("a", int(tid), results[int(tid)])
        assert book.finished and book.done_mask.all()
        assert np.array_equal(book.final_image(), ref)


def test_leases_requeue_and_duplicates(scene: scene_mod.Scene, results: dict) -> None:
    book = TaskBook(scene)
    a1, a2 = book.lease("a", 0.0, 10.0), book.lease("a", 0.0, 10.0)
    b1 = book.lease("b", 0.0, 10.0)
    assert (a1.task_id, a2.task_id, b1.task_id) == (0, 1, 2)
    assert not book.complete("b", 0, results[0])  # never leased to b: refused
    assert book.release("a") == 2 and book.requeued == 2 and book.queued == book.total - 1
    assert book.lease("c", 0.0, 10.0).task_id == 0  # requeued tasks go out first
    assert book.complete("c", 0, results[0])
    assert not book.complete("c", 0, results[0])  # duplicate ignored
    assert book.done == 1 and book.samples_done == book.spec(0).samples
    # expiry: b's lease runs out, the task is requeued; b's late result still counts once
    assert book.expire(5.0) == [] and book.expire(10.0) == [(2, "b")]
    d = book.lease("d", 10.0, 10.0)
    assert d.task_id == 1
    assert book.lease("d", 10.0, 10.0).task_id == 2
    assert book.complete("b", 2, results[2]) and not book.complete("d", 2, results[2])
    assert 2 not in book.leases and book.done == 2
    assert book.give_back("d", 1) and not book.give_back("d", 1) and book.queued == book.total - 2


def test_image_so_far_shows_each_tiles_done_samples(scene: scene_mod.Scene, results: dict) -> None:
    book = TaskBook(scene)
    for _ in range(8):
        book.lease("a", 0.0, 1.0)
    for tid in (0, 7, 6):  # tile 0 chunk 0, tile 1 chunk 1 (before its chunk 0), tile 0 chunk 1
        book.complete("a", tid, results[tid])
    assert list(book.tile_samples[:3]) == [6, 3, 0]
    img = book.image_so_far()
    assert np.array_equal(img[:8, :8], (results[0] + results[6]) / (6 * SCALE))
    assert np.array_equal(img[:8, 8:16], results[7] / (3 * SCALE))  # tile 1: its chunk 1 alone
    assert not img[:8, 16:].any()
    # /image.png builds the 8-bit image tile by tile: the same bits as converting the float image
    pixels = np.zeros((book.height, book.width, 3), dtype=np.uint8)
    tile_row_8bit(book, pixels, list(range(book.n_tiles)))
    assert np.array_equal(pixels, to_8bit(img))


def test_checkpoint_round_trip(tmp_path: Path, scene: scene_mod.Scene, results: dict) -> None:
    fp = scene.fingerprint()
    book = TaskBook(scene)
    for _ in range(10):
        book.lease("a", 0.0, 1.0)
    for tid in (0, 1, 7, 9):
        book.complete("a", tid, results[tid])
    path = tmp_path / "job.ckpt"
    assert ckpt.load(path, book, fp) is None
    ckpt.save(path, ckpt.snapshot(book, fp))
    fresh = TaskBook(scene)
    snap = ckpt.load(path, fresh, fp)
    fresh.restore(snap.acc, snap.done)
    assert fresh.done == 4 and fresh.samples_done == book.samples_done
    assert np.array_equal(fresh.acc, book.acc) and np.array_equal(fresh.tile_samples, book.tile_samples)
    assert fresh.lease("b", 0.0, 1.0).task_id == 2
    for tid in range(fresh.total):  # finish from the checkpoint, in some other order
        if not fresh.is_done(tid):
            fresh.history["b"].add(tid)
            assert fresh.complete("b", tid, results[tid])
    assert np.array_equal(fresh.final_image(), kernels.accumulate_image(scene, parallel=False))
    assert [p.name for p in tmp_path.iterdir()] == ["job.ckpt"]  # no temporary files left


def test_bad_checkpoints_are_refused(tmp_path: Path, scene: scene_mod.Scene) -> None:
    book = TaskBook(scene)
    good = ckpt.encode(ckpt.snapshot(book, scene.fingerprint()))
    path = tmp_path / "c"
    path.write_bytes(good)
    other = scene_mod.load(THREE, width=20, height=12, spp=11, chunk=3, tile=8)
    with pytest.raises(ckpt.CheckpointError, match="different job"):
        ckpt.load(path, TaskBook(other), other.fingerprint())
    for damaged in (good[: len(good) // 2], b"garbage", good[:100] + bytes(50) + good[150:]):
        path.write_bytes(damaged)
        with pytest.raises(ckpt.CheckpointError):
            ckpt.load(path, book, scene.fingerprint())


def _npz(path: Path, **arrays: np.ndarray) -> None:
    with path.open("wb") as f:
        np.savez(f, **arrays)


def test_old_and_inconsistent_checkpoints_are_refused(tmp_path: Path, scene: scene_mod.Scene,
                                                       results: dict) -> None:
    book = TaskBook(scene)
    fp = np.frombuffer(scene.fingerprint().encode(), dtype=np.uint8)
    path = tmp_path / "c"
    # format 1 (no version member, float64 sums folded in chunk order): refused in one line, never read
    _npz(path, fingerprint=fp, acc=np.zeros(book.acc.shape), folded=np.zeros(book.n_tiles, dtype=np.int64),
         pending_ids=np.zeros(0, dtype=np.int64), pending_data=np.zeros(0))
    with pytest.raises(ckpt.CheckpointError, match=r"^[^\n]*format 1 \(float sums\).*delete it") as e:
        ckpt.load(path, book, scene.fingerprint())
    assert "\n" not in str(e.value)
    done = np.zeros(book.total, dtype=bool)
    fmt = np.array([ckpt.FORMAT], dtype=np.int64)
    for bad, why in (
        (dict(format=np.array([3]), acc=book.acc, done=done), "format \\[3\\] is not 2"),
        (dict(format=fmt, acc=book.acc.astype(np.float64), done=done), "accumulator"),
        (dict(format=fmt, acc=book.acc - 1, done=done), "accumulator"),  # negative sums
        (dict(format=fmt, acc=book.acc + 1, done=done), "accumulator"),  # sums in tiles with no done task
        (dict(format=fmt, acc=book.acc, done=done[:-1]), "done tasks"),
    ):
        _npz(path, fingerprint=fp, **bad)
        with pytest.raises(ckpt.CheckpointError, match=why):
            ckpt.load(path, book, scene.fingerprint())
    # one done chunk of 3 samples in tile 0: sums up to 3 x MAX_SAMPLE there pass, one more does not
    done[0] = True
    acc = book.acc.copy()
    acc[:8, :8] = 3 * MAX_SAMPLE
    _npz(path, fingerprint=fp, format=fmt, acc=acc, done=done)
    assert ckpt.load(path, book, scene.fingerprint()) is not None
    acc[7, 7, 2] += 1
    _npz(path, fingerprint=fp, format=fmt, acc=acc, done=done)
    with pytest.raises(ckpt.CheckpointError, match="accumulator"):
        ckpt.load(path, book, scene.fingerprint())
