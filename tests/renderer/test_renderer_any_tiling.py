"""The image does not depend on how the job is cut into tasks, nor on the order results arrive.

Every sample is summed as int64 fixed point (renderer/fixed.py), so samples per task 1, 3 or all
of them, tiles of 8, 16 or 37 pixels (37 leaves ragged edge tiles), serial or parallel kernels and
any completion order give the bits of ``python -m renderer render`` with the scene's own task size
(what ``kubeview tune`` relies on: it varies exactly these and checks each trial bit for bit).
"""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pytest

from renderer import kernels
from renderer import scene as scene_mod
from renderer.tasks import TaskBook
from tests.renderer.testkit import THREE, Procs, free_port, run_cli

SIZE = {"width": 48, "height": 40, "spp": 12}  # three-spheres' own task size: tile 16, 4 samples
ARGS = ["--width", "48", "--height", "40", "--spp", "12"]


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory, warm_kernels: None) -> bytes:
    out = tmp_path_factory.mktemp("ref") / "ref.npy"
    r = run_cli("render", str(THREE), *ARGS, "--raw", str(out), "--no-progress")
    assert r.returncode == 0, r.stderr
    image = np.load(out)
    assert image.dtype == np.float64 and image.shape == (40, 48, 3) and image.max() > 0
    return image.tobytes()


@pytest.mark.parametrize(("chunk", "tile"), list(itertools.product((1, 3, 12), (8, 16, 37))))
def test_any_task_size_and_result_order_gives_the_one_process_bits(reference: bytes, chunk: int, tile: int) -> None:
    scene = scene_mod.load(THREE, chunk=chunk, tile=tile, **SIZE)
    book = TaskBook(scene)
    results = {}
    for tid in range(book.total):  # alternate the serial and prange kernels: the same bits
        t = book.spec(tid)
        results[tid] = kernels.render_chunk(scene, t.x, t.y, t.w, t.h, t.s0, t.s1, parallel=tid % 2 == 1)
    for seed in range(3):
        book = TaskBook(scene)
        while book.lease("a", 0.0, 10.0) is not None:
            pass
        for tid in np.random.default_rng(seed).permutation(book.total).tolist():
            assert book.complete("a", tid, results[tid])
        assert book.final_image().tobytes() == reference, (chunk, tile, seed)
        assert book.image_so_far().tobytes() == reference


@pytest.mark.slow
@pytest.mark.timeout(120)
def test_producer_and_consumer_processes_with_another_task_size(procs: Procs, reference: bytes) -> None:
    port = free_port()
    out = procs.tmp / "out.npy"
    producer = procs.start("producer", str(THREE), *ARGS, "--chunk", "5", "--tile", "37",
                           "--listen", f"127.0.0.1:{port}", "--raw", str(out), log="producer.log")
    consumer = procs.start("consumer", "--connect", f"127.0.0.1:{port}", "--name", "c0", log="c0.log")
    assert producer.wait(90) == 0, procs.log("producer.log")
    assert consumer.wait(30) == 0, procs.log("c0.log")
    assert Path(out).is_file() and np.load(out).tobytes() == reference
