"""The CUDA tile kernel (issue 9): same bits as the CPU kernel under numba's CUDA simulator,
and the consumer's ``--kernel auto|cpu|cuda`` choice with its CPU fallback.

The simulator runs the kernel as Python on the CPU (``NUMBA_ENABLE_CUDASIM=1``, which must
be set before numba is imported, hence the subprocess); it needs numba's CUDA target:
numba <= 0.6x still ships one built in, newer ones need the ``numba-cuda`` package (the
``gpu`` extra).  The image is tiny (8x6, 2 samples): a few seconds at most.
"""

from __future__ import annotations

import importlib.util
import logging
import subprocess
import sys
import textwrap

import pytest

from renderer import cli, kernels_cuda
from tests.renderer.testkit import ROOT, env

needs_cuda_target = pytest.mark.skipif(
    importlib.util.find_spec("numba.cuda") is None,
    reason="numba has no CUDA target (pip install numba-cuda, the 'gpu' extra, for the simulator test)")

SIM_SCRIPT = textwrap.dedent("""
    import numpy as np
    from renderer import kernels, kernels_cuda
    from renderer import scene as scene_mod

    assert kernels_cuda.cuda_available()
    assert kernels_cuda.choose_kernel("auto")[0] == "cuda"
    sc = scene_mod.load(scene_mod.bundled("three-spheres"), width=8, height=6, spp=3, chunk=2, tile=4)
    # a whole-image tile over all samples, an offset partial tile, and adding into non-zero sums
    for x0, y0, w, h, s0, s1 in ((0, 0, 8, 6, 0, 3), (3, 2, 5, 3, 2, 3)):
        cpu = kernels.render_chunk(sc, x0, y0, w, h, s0, s1)
        gpu = kernels_cuda.render_chunk(sc, x0, y0, w, h, s0, s1)
        assert gpu.shape == cpu.shape == (h, w, 3) and gpu.dtype == cpu.dtype == np.int64
        assert cpu.min() >= 0 and cpu.max() > 0
        # The simulator runs the same IEEE double operations in the same order: exact.  (On a real
        # GPU, FMA contraction inside trace may change a sample's last bits and so, rarely, its
        # rounding to fixed point: compare there with a tolerance of a few units per sample.)
        assert np.array_equal(gpu, cpu), np.abs(gpu - cpu).max()
    base = kernels.render_chunk(sc, 0, 0, 8, 6, 0, 2)
    cpu, gpu = base.copy(), base.copy()
    kernels.add_samples(sc, cpu, 0, 0, 2, 3)
    kernels_cuda.add_samples(sc, gpu, 0, 0, 2, 3)
    assert np.array_equal(gpu, cpu)
    assert np.array_equal(cpu, kernels.render_chunk(sc, 0, 0, 8, 6, 0, 3))
    print("ok")
""")


def _run(args: list[str], **extra_env: str) -> subprocess.CompletedProcess[str]:
    e = env()
    for k in ("NUMBA_ENABLE_CUDASIM", "NUMBA_DISABLE_CUDA", "RENDERER_KERNEL"):
        e.pop(k, None)
    e.update(extra_env)
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, timeout=120, cwd=ROOT, env=e)


@needs_cuda_target
def test_cuda_kernel_matches_cpu_kernel_bit_for_bit_in_the_simulator() -> None:
    r = _run(["-c", SIM_SCRIPT], NUMBA_ENABLE_CUDASIM="1")
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "ok"


def test_kernel_cuda_without_a_cuda_target_is_one_line_and_exit_2() -> None:
    # NUMBA_DISABLE_CUDA makes numba.cuda report no device, even on a machine with a GPU
    r = _run(["-m", "renderer", "consumer", "--connect", "127.0.0.1:9", "--kernel", "cuda"],
             NUMBA_DISABLE_CUDA="1")
    assert r.returncode == 2, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "cuda" in lines[0] and "not available" in lines[0], r.stderr
    r = _run(["-m", "renderer", "consumer", "--connect", "127.0.0.1:9"], RENDERER_KERNEL="opencl")
    assert r.returncode == 2
    assert len(r.stderr.strip().splitlines()) == 1 and "unknown kernel 'opencl'" in r.stderr


class _FakeConsumer:
    made: list[dict] = []

    def __init__(self, host: str, port: int, **kw: object) -> None:
        _FakeConsumer.made.append(kw)

    def run(self) -> int:
        return 0


@pytest.fixture
def fake_consumer(monkeypatch: pytest.MonkeyPatch) -> list[dict]:
    import renderer.consumer

    _FakeConsumer.made = []
    monkeypatch.setattr(renderer.consumer, "Consumer", _FakeConsumer)
    monkeypatch.delenv("RENDERER_KERNEL", raising=False)
    return _FakeConsumer.made


def test_auto_falls_back_to_cpu_and_says_so(monkeypatch: pytest.MonkeyPatch, fake_consumer: list[dict],
                                             caplog: pytest.LogCaptureFixture) -> None:
    monkeypatch.setattr(kernels_cuda, "cuda_available", lambda: False)
    with caplog.at_level(logging.INFO, logger="renderer.consumer"):
        assert cli.main(["consumer", "--connect", "127.0.0.1:9"]) == 0
    assert fake_consumer[-1]["kernel"] == "cpu"
    assert "kernel: cpu (auto: no CUDA target)" in caplog.text
    monkeypatch.setattr(kernels_cuda, "cuda_available", lambda: True)
    assert cli.main(["consumer", "--connect", "127.0.0.1:9", "--kernel", "auto"]) == 0
    assert fake_consumer[-1]["kernel"] == "cuda"
    monkeypatch.setenv("RENDERER_KERNEL", "cpu")  # the manifests' env var is the default
    assert cli.main(["consumer", "--connect", "127.0.0.1:9"]) == 0
    assert fake_consumer[-1]["kernel"] == "cpu"
    assert cli.main(["consumer", "--connect", "127.0.0.1:9", "--kernel", "cuda"]) == 0  # flag wins
    assert fake_consumer[-1]["kernel"] == "cuda"


def test_choose_kernel(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(kernels_cuda, "cuda_available", lambda: False)
    assert kernels_cuda.choose_kernel("cpu")[0] == "cpu"
    assert kernels_cuda.choose_kernel("auto")[0] == "cpu"
    with pytest.raises(kernels_cuda.KernelUnavailable):
        kernels_cuda.choose_kernel("cuda")
    with pytest.raises(ValueError, match="unknown kernel"):
        kernels_cuda.choose_kernel("gpu")
    monkeypatch.setattr(kernels_cuda, "cuda_available", lambda: True)
    assert kernels_cuda.choose_kernel("auto")[0] == "cuda"
    assert kernels_cuda.tile_renderer("cuda") is kernels_cuda.render_chunk
    assert kernels_cuda.tile_renderer("cpu") is kernels_cuda.kernels.render_chunk
