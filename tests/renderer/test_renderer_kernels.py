"""Kernels: the RNG hash is the documented PCG, the serial and prange variants give the same
bits, the BVH gives the same bits as brute force, and int64 fixed-point sums reduce exactly."""

from __future__ import annotations

import numpy as np
import pytest
import yaml

from renderer import bvh, kernels
from renderer import scene as scene_mod
from renderer.fixed import CLAMP, MAX_SAMPLE, SCALE
from tests.renderer.testkit import SPHERES, THREE

M32 = 0xFFFFFFFF


def pcg_reference(x: int) -> int:
    """PCG-RXS-M-XS 32 (Jarzynski & Olano 2020), in plain Python integers."""
    s = (x * 747796405 + 2891336453) & M32
    w = (((s >> ((s >> 28) + 4)) ^ s) * 277803737) & M32
    return (w >> 22) ^ w


@pytest.fixture(scope="module")
def three() -> scene_mod.Scene:
    return scene_mod.load(THREE)


def test_hash_matches_reference_and_is_stable() -> None:
    for x in (0, 1, 2, 12345, 2**31, M32):
        assert int(kernels.pcg_hash(np.uint64(x))) == pcg_reference(x)
    assert pcg_reference(0) == 129708002  # pinned: changing the RNG changes every image
    state = kernels.sample_state(7, 100, 3)
    assert int(state) == pcg_reference(pcg_reference(pcg_reference(7) ^ 100) ^ 3)
    assert int(kernels.sample_state(7, 100, 3)) == int(state)
    assert int(kernels.sample_state(7, 100, 4)) != int(state)
    assert int(kernels.sample_state(8, 100, 3)) != int(state)


def test_next_float_is_uniform_in_unit_interval() -> None:
    state = kernels.sample_state(1, 2, 3)
    xs = []
    for _ in range(20000):
        state, x = kernels.next_float(state)
        xs.append(x)
    a = np.array(xs)
    assert a.min() >= 0.0 and a.max() < 1.0
    assert abs(a.mean() - 0.5) < 0.01 and abs(a.var() - 1 / 12) < 0.005


def test_serial_and_parallel_are_bit_identical(three: scene_mod.Scene) -> None:
    serial = kernels.render_chunk(three, 0, 0, three.width, three.height, 0, 6, parallel=False)
    parallel = kernels.render_chunk(three, 0, 0, three.width, three.height, 0, 6, parallel=True)
    assert serial.dtype == np.int64 and serial.shape == (32, 48, 3)
    assert np.array_equal(serial, parallel)
    assert serial.min() >= 0 and serial.max() > 0


def test_a_pixel_does_not_depend_on_its_tile(three: scene_mod.Scene) -> None:
    full = kernels.render_chunk(three, 0, 0, three.width, three.height, 4, 8)
    tile = kernels.render_chunk(three, 16, 16, 16, 16, 4, 8)
    assert np.array_equal(full[16:32, 16:32], tile)


def test_bvh_is_bit_identical_to_brute_force(three: scene_mod.Scene) -> None:
    brute = three.brute_force()
    assert brute.bvh_info.shape == (1, 3)
    a = kernels.render_chunk(three, 0, 0, three.width, three.height, 0, 4)
    b = kernels.render_chunk(brute, 0, 0, three.width, three.height, 0, 4)
    assert np.array_equal(a, b)


def test_bvh_is_bit_identical_to_brute_force_on_480_spheres() -> None:
    s = scene_mod.load(SPHERES, width=40, height=24, spp=1)
    a = kernels.render_chunk(s, 0, 0, s.width, s.height, 0, 1)
    b = kernels.render_chunk(s.brute_force(), 0, 0, s.width, s.height, 0, 1)
    assert np.array_equal(a, b)


def test_bvh_structure() -> None:
    s = scene_mod.load(SPHERES)
    info, bounds = s.bvh_info, s.bvh_bounds
    leaves = info[info[:, 1] > 0]
    covered = np.concatenate([np.arange(a, a + n) for a, n, _ in leaves])
    assert np.array_equal(np.sort(covered), np.arange(len(s.spheres)))  # every sphere exactly once
    assert bvh.depth(info) <= bvh.MAX_DEPTH
    boxes = bvh.sphere_boxes(s.spheres)
    for i, (a, n, _) in enumerate(info):
        if n:
            assert (bounds[i, :3] <= boxes[a:a + n, :3]).all() and (bounds[i, 3:] >= boxes[a:a + n, 3:]).all()
        else:
            for child in (i + 1, a):
                assert (bounds[i, :3] <= bounds[child, :3]).all() and (bounds[i, 3:] >= bounds[child, 3:]).all()


def test_image_is_the_fixed_point_sum_however_samples_are_grouped(three: scene_mod.Scene) -> None:
    s = scene_mod.load(THREE, spp=10, chunk=4)
    assert scene_mod.chunk_ranges(10, 4) == [(0, 4), (4, 8), (8, 10)]
    acc = np.zeros((s.height, s.width, 3), dtype=np.int64)
    for s0, s1 in reversed(scene_mod.chunk_ranges(10, 4)):  # any grouping, any order
        acc += kernels.render_chunk(s, 0, 0, s.width, s.height, s0, s1)
    assert np.array_equal(kernels.render_chunk(s, 0, 0, s.width, s.height, 0, 10), acc)
    ref = acc.astype(np.float64) / (10 * SCALE)
    assert np.array_equal(kernels.accumulate_image(s, parallel=False), ref)
    for steps in (1, 3, 25):  # one kernel call over all samples, or several: the same bits
        assert np.array_equal(kernels.accumulate_image(s, parallel=True, steps=steps), ref)


def test_quantize_rounds_clamps_and_bounds() -> None:
    assert kernels.quantize(0.0) == 0 and kernels.quantize(-1.0) == 0 and kernels.quantize(float("nan")) == 0
    assert kernels.quantize(1.0) == SCALE and kernels.quantize(0.5 / SCALE) == 1  # half a step rounds up
    assert kernels.quantize(0.49 / SCALE) == 0 and kernels.quantize(3.0 / SCALE) == 3
    assert kernels.quantize(CLAMP) == kernels.quantize(1e9) == MAX_SAMPLE
    # a valid scene's radiance is at most its brightest background channel, which is below the
    # clamp (so the clamp never changes a valid scene's samples), and a whole job's sums fit int64
    assert scene_mod.MAX_SPP * MAX_SAMPLE < 2**62
    doc = yaml.safe_load(THREE.read_text())
    doc["background"] = {"top": [1.0e3, 0.0, 0.0]}
    scene_mod.parse(yaml.safe_dump(doc), "bright.yaml")
    doc["background"] = {"top": [CLAMP, 0.0, 0.0]}
    with pytest.raises(scene_mod.SceneError, match="background.top"):
        scene_mod.parse(yaml.safe_dump(doc), "bright.yaml")
