"""numba path-tracing kernels (pure: no I/O, no globals read at run time).

Everything a kernel needs is an argument.  Random numbers come from a stateless
counter-based hash: the stream of sample ``s`` of pixel ``p`` starts from
``pcg(pcg(pcg(seed) ^ p) ^ s)`` and advances with the PCG-RXS-M-XS 32-bit step, so a
pixel's value never depends on which process, thread or task computed it.

:func:`render_tile` adds, for every pixel of a tile, the int64 fixed-point *sum* of samples
``s0 .. s1-1`` (each sample's radiance quantized by :func:`quantize`, see ``renderer/fixed.py``).
Integer sums are exact and associative, so the image ``sums / (SCALE * spp)`` is the same bits
however the samples are cut into tasks, tiled, or added up (:func:`accumulate_image`, the producer).

The tile function is written once and compiled twice (umap style): serially and with
``prange`` over pixels.  Both give the same bits because every pixel is independent and
fastmath is off.  Brute force is the same kernel over a one-leaf BVH.  The arithmetic is
only + - * / and sqrt (no libm sin/cos/pow), so results are IEEE-exact and do not depend on
the C library of the machine that computed them.
"""

from __future__ import annotations

import itertools
import math
import types
from collections.abc import Callable
from typing import Any

import numpy as np
from numba import njit, prange

from renderer.fixed import CLAMP, MAX_SAMPLE, SCALE, to_image
from renderer.scene import Scene

_OPTS: dict[str, Any] = {"cache": True, "nogil": True, "fastmath": False, "error_model": "numpy"}


@njit(**_OPTS)
def pcg_hash(x: np.uint64) -> np.uint64:
    """PCG-RXS-M-XS hash of a 32-bit value held in a uint64 (result < 2**32)."""
    m = np.uint64(0xFFFFFFFF)
    s = (x * np.uint64(747796405) + np.uint64(2891336453)) & m
    w = (((s >> ((s >> np.uint64(28)) + np.uint64(4))) ^ s) * np.uint64(277803737)) & m
    return (w >> np.uint64(22)) ^ w


@njit(**_OPTS)
def sample_state(seed: int, pixel: int, sample: int) -> np.uint64:
    """Initial RNG state of one sample of one pixel."""
    h = pcg_hash(np.uint64(seed) & np.uint64(0xFFFFFFFF))
    h = pcg_hash(h ^ (np.uint64(pixel) & np.uint64(0xFFFFFFFF)))
    return pcg_hash(h ^ (np.uint64(sample) & np.uint64(0xFFFFFFFF)))


@njit(**_OPTS)
def next_float(state: np.uint64) -> tuple[np.uint64, float]:
    """Advance the state; return (new state, uniform float in [0, 1) with 24 bits)."""
    m = np.uint64(0xFFFFFFFF)
    s = (state * np.uint64(747796405) + np.uint64(2891336453)) & m
    w = (((s >> ((s >> np.uint64(28)) + np.uint64(4))) ^ s) * np.uint64(277803737)) & m
    w = (w >> np.uint64(22)) ^ w
    return s, float(w >> np.uint64(8)) * (1.0 / 16777216.0)


@njit(**_OPTS)
def _in_unit_sphere(state: np.uint64) -> tuple[np.uint64, float, float, float]:
    """Uniform point inside the unit ball (rejection; never the origin)."""
    while True:
        state, a = next_float(state)
        state, b = next_float(state)
        state, c = next_float(state)
        x, y, z = 2.0 * a - 1.0, 2.0 * b - 1.0, 2.0 * c - 1.0
        d = x * x + y * y + z * z
        if 1e-12 < d < 1.0:
            return state, x, y, z


@njit(**_OPTS)
def _in_unit_disk(state: np.uint64) -> tuple[np.uint64, float, float]:
    """Uniform point inside the unit disk (rejection)."""
    while True:
        state, a = next_float(state)
        state, b = next_float(state)
        x, y = 2.0 * a - 1.0, 2.0 * b - 1.0
        if x * x + y * y < 1.0:
            return state, x, y


@njit(**_OPTS)
def _closest_hit(ox: float, oy: float, oz: float, dx: float, dy: float, dz: float, t_min: float,
                 spheres: np.ndarray, bounds: np.ndarray, info: np.ndarray, stack: np.ndarray,
                 ) -> tuple[int, float]:
    """Index of the nearest sphere hit with t > t_min (or -1) and its t, via the BVH."""
    ix, iy, iz = 1.0 / dx, 1.0 / dy, 1.0 / dz
    a = dx * dx + dy * dy + dz * dz
    closest = np.inf
    hit = -1
    sp = 0
    node = 0
    while True:
        t0 = (bounds[node, 0] - ox) * ix
        t1 = (bounds[node, 3] - ox) * ix
        tn, tf = min(t0, t1), max(t0, t1)
        t0 = (bounds[node, 1] - oy) * iy
        t1 = (bounds[node, 4] - oy) * iy
        tn, tf = max(tn, min(t0, t1)), min(tf, max(t0, t1))
        t0 = (bounds[node, 2] - oz) * iz
        t1 = (bounds[node, 5] - oz) * iz
        tn, tf = max(tn, min(t0, t1)), min(tf, max(t0, t1))
        if tn <= tf and tf > t_min and tn < closest:
            count = info[node, 1]
            if count == 0:
                axis = info[node, 2]
                d = dx if axis == 0 else (dy if axis == 1 else dz)
                if d < 0.0:
                    stack[sp] = node + 1
                    node = info[node, 0]
                else:
                    stack[sp] = info[node, 0]
                    node = node + 1
                sp += 1
                continue
            start = info[node, 0]
            for k in range(start, start + count):
                cx = ox - spheres[k, 0]
                cy = oy - spheres[k, 1]
                cz = oz - spheres[k, 2]
                r = spheres[k, 3]
                hb = cx * dx + cy * dy + cz * dz
                c = cx * cx + cy * cy + cz * cz - r * r
                disc = hb * hb - a * c
                if disc < 0.0:
                    continue
                sq = math.sqrt(disc)
                root = (-hb - sq) / a
                if root <= t_min or root >= closest:
                    root = (-hb + sq) / a
                    if root <= t_min or root >= closest:
                        continue
                closest = root
                hit = k
        if sp == 0:
            return hit, closest
        sp -= 1
        node = stack[sp]


@njit(**_OPTS)
def trace(ox: float, oy: float, oz: float, dx: float, dy: float, dz: float, state: np.uint64,
          max_depth: int, spheres: np.ndarray, smat: np.ndarray, mats: np.ndarray, bounds: np.ndarray,
          info: np.ndarray, bg: np.ndarray, stack: np.ndarray) -> tuple[float, float, float, np.uint64]:
    """Radiance along one camera ray: (r, g, b, new RNG state)."""
    ar, ag, ab = 1.0, 1.0, 1.0
    for _ in range(max_depth):
        k, t = _closest_hit(ox, oy, oz, dx, dy, dz, 1e-3, spheres, bounds, info, stack)
        if k < 0:
            f = 0.5 * (dy / math.sqrt(dx * dx + dy * dy + dz * dz) + 1.0)
            return (ar * ((1.0 - f) * bg[0] + f * bg[3]), ag * ((1.0 - f) * bg[1] + f * bg[4]),
                    ab * ((1.0 - f) * bg[2] + f * bg[5]), state)
        px, py, pz = ox + t * dx, oy + t * dy, oz + t * dz
        r = spheres[k, 3]
        nx, ny, nz = (px - spheres[k, 0]) / r, (py - spheres[k, 1]) / r, (pz - spheres[k, 2]) / r
        front = dx * nx + dy * ny + dz * nz < 0.0
        if not front:
            nx, ny, nz = -nx, -ny, -nz
        m = smat[k]
        kind = mats[m, 0]
        if kind == 0.0:  # lambertian: normal + random unit vector
            state, qx, qy, qz = _in_unit_sphere(state)
            il = 1.0 / math.sqrt(qx * qx + qy * qy + qz * qz)
            sx, sy, sz = nx + qx * il, ny + qy * il, nz + qz * il
            if abs(sx) < 1e-8 and abs(sy) < 1e-8 and abs(sz) < 1e-8:
                sx, sy, sz = nx, ny, nz
            dx, dy, dz = sx, sy, sz
            ar, ag, ab = ar * mats[m, 1], ag * mats[m, 2], ab * mats[m, 3]
        elif kind == 1.0:  # metal: mirror reflection + fuzz
            il = 1.0 / math.sqrt(dx * dx + dy * dy + dz * dz)
            ux, uy, uz = dx * il, dy * il, dz * il
            dn = 2.0 * (ux * nx + uy * ny + uz * nz)
            fuzz = mats[m, 4]
            state, qx, qy, qz = _in_unit_sphere(state)
            dx, dy, dz = ux - dn * nx + fuzz * qx, uy - dn * ny + fuzz * qy, uz - dn * nz + fuzz * qz
            if dx * nx + dy * ny + dz * nz <= 0.0:
                return 0.0, 0.0, 0.0, state
            ar, ag, ab = ar * mats[m, 1], ag * mats[m, 2], ab * mats[m, 3]
        else:  # dielectric: refract or reflect (Schlick)
            ior = mats[m, 4]
            ratio = 1.0 / ior if front else ior
            il = 1.0 / math.sqrt(dx * dx + dy * dy + dz * dz)
            ux, uy, uz = dx * il, dy * il, dz * il
            cos_t = min(-(ux * nx + uy * ny + uz * nz), 1.0)
            sin_t = math.sqrt(max(0.0, 1.0 - cos_t * cos_t))
            r0 = (1.0 - ratio) / (1.0 + ratio)
            r0 = r0 * r0
            c1 = 1.0 - cos_t
            c2 = c1 * c1
            schlick = r0 + (1.0 - r0) * (c2 * c2 * c1)
            state, u = next_float(state)
            if ratio * sin_t > 1.0 or schlick > u:
                dn = 2.0 * (ux * nx + uy * ny + uz * nz)
                dx, dy, dz = ux - dn * nx, uy - dn * ny, uz - dn * nz
            else:
                px_, py_, pz_ = ratio * (ux + cos_t * nx), ratio * (uy + cos_t * ny), ratio * (uz + cos_t * nz)
                par = -math.sqrt(abs(1.0 - (px_ * px_ + py_ * py_ + pz_ * pz_)))
                dx, dy, dz = px_ + par * nx, py_ + par * ny, pz_ + par * nz
        ox, oy, oz = px, py, pz
    return 0.0, 0.0, 0.0, state


@njit(**_OPTS)
def quantize(c: float) -> np.int64:
    """One sample's radiance as fixed point: clamp to [0, CLAMP], round to a multiple of 1/SCALE.

    ``c * SCALE`` is exact (SCALE is a power of two), so even an FMA-contracting GPU rounds the
    same way; NaN (never produced by a valid scene) counts as 0."""
    if not c > 0.0:
        return np.int64(0)
    if c >= CLAMP:
        return np.int64(MAX_SAMPLE)
    return np.int64(c * SCALE + 0.5)


@njit(**_OPTS)
def pixel_samples(out: np.ndarray, tx: int, ty: int, x0: int, y0: int, s0: int, s1: int,
                  width: int, height: int, max_depth: int, seed: int, cam: np.ndarray, spheres: np.ndarray,
                  smat: np.ndarray, mats: np.ndarray, bounds: np.ndarray, info: np.ndarray, bg: np.ndarray,
                  stack: np.ndarray) -> None:
    """Add samples s0..s1-1 of the tile pixel (tx, ty) to out[ty, tx] (int64 fixed point; the
    tile starts at x0, y0).  The CPU tile loop below and the CUDA kernel (kernels_cuda.py) both
    call this one function.
    """
    lens = cam[18]
    x = x0 + tx
    y = y0 + ty
    row = height - 1 - y  # the camera's v axis points up, image rows go down
    ar, ag, ab = out[ty, tx, 0], out[ty, tx, 1], out[ty, tx, 2]
    for s in range(s0, s1):
        state = sample_state(seed, y * width + x, s)
        state, ju = next_float(state)
        state, jv = next_float(state)
        u = (x + ju) / width
        v = (row + jv) / height
        ox, oy, oz = cam[0], cam[1], cam[2]
        if lens > 0.0:
            state, lx, ly = _in_unit_disk(state)
            lx, ly = lens * lx, lens * ly
            ox += cam[12] * lx + cam[15] * ly
            oy += cam[13] * lx + cam[16] * ly
            oz += cam[14] * lx + cam[17] * ly
        dx = cam[3] + u * cam[6] + v * cam[9] - ox
        dy = cam[4] + u * cam[7] + v * cam[10] - oy
        dz = cam[5] + u * cam[8] + v * cam[11] - oz
        cr, cg, cb, state = trace(ox, oy, oz, dx, dy, dz, state, max_depth,
                                  spheres, smat, mats, bounds, info, bg, stack)
        ar += quantize(cr)
        ag += quantize(cg)
        ab += quantize(cb)
    out[ty, tx, 0] = ar
    out[ty, tx, 1] = ag
    out[ty, tx, 2] = ab


def _render_tile(out: np.ndarray, x0: int, y0: int, w: int, h: int, s0: int, s1: int,
                 width: int, height: int, max_depth: int, seed: int, cam: np.ndarray, spheres: np.ndarray,
                 smat: np.ndarray, mats: np.ndarray, bounds: np.ndarray, info: np.ndarray,
                 bg: np.ndarray) -> None:
    """Add samples s0..s1-1 of each pixel of the tile at (x0, y0), size w x h, to out (h, w, 3)."""
    for p in prange(w * h):
        stack = np.empty(64, dtype=np.int64)  # > renderer.bvh.MAX_DEPTH
        ty = p // w
        pixel_samples(out, p - ty * w, ty, x0, y0, s0, s1, width, height, max_depth, seed, cam,
                      spheres, smat, mats, bounds, info, bg, stack)


def _clone(f: Callable[..., object], suffix: str) -> types.FunctionType:
    """A copy of ``f`` under another name, so numba's on-disk cache keeps the variants apart."""
    assert isinstance(f, types.FunctionType)  # a plain `def`
    g = types.FunctionType(f.__code__, f.__globals__, f.__name__ + suffix, f.__defaults__, f.__closure__)
    g.__qualname__ = f.__qualname__ + suffix
    g.__module__ = f.__module__
    g.__doc__ = f.__doc__
    return g


render_tile_serial = njit(**_OPTS)(_clone(_render_tile, "_serial"))
render_tile_parallel = njit(parallel=True, **_OPTS)(_clone(_render_tile, "_parallel"))


def tile_function(parallel: bool) -> Callable[..., None]:
    """The serial or the prange variant of the same tile kernel."""
    return render_tile_parallel if parallel else render_tile_serial


def cache_is_cold(parallel: bool = False) -> bool | None:
    """True when numba's on-disk cache holds no compiled tile kernel for this source and Python, so
    the first task waits for the compiler (tens of seconds); None when the cache cannot be asked."""
    try:
        dispatcher: Any = tile_function(parallel)  # a numba Dispatcher; its cache is not in numba's types
        return not dispatcher._cache._cache_file._load_index()  # numba checks the source stamp
    except Exception:  # noqa: BLE001 - numba internals: no answer rather than a wrong one
        return None


def add_samples(scene: Scene, out: np.ndarray, x0: int, y0: int, s0: int, s1: int,
                *, parallel: bool = False) -> None:
    """Add samples s0..s1-1 into ``out``, the tile's (h, w, 3) int64 fixed-point sums."""
    h, w = out.shape[:2]
    tile_function(parallel)(
        out, x0, y0, w, h, s0, s1, scene.width, scene.height, scene.max_depth, scene.seed,
        scene.camera, scene.spheres, scene.sphere_material, scene.materials,
        scene.bvh_bounds, scene.bvh_info, scene.background,
    )


def render_chunk(scene: Scene, x0: int, y0: int, w: int, h: int, s0: int, s1: int,
                 *, parallel: bool = False) -> np.ndarray:
    """Per-pixel int64 fixed-point sums of samples s0..s1-1 over a tile: array (h, w, 3)."""
    out = np.zeros((h, w, 3), dtype=np.int64)
    add_samples(scene, out, x0, y0, s0, s1, parallel=parallel)
    return out


def accumulate_image(scene: Scene, *, parallel: bool = True, steps: int = 25,
                     progress: Callable[[int], None] | None = None) -> np.ndarray:
    """The reference image: every sample's fixed-point sum / (SCALE * spp).  (H, W, 3) float64.

    Computed in at most ``steps`` kernel calls (for the progress bar); the bits do not depend on
    ``steps``, ``parallel``, the tile or the samples per task."""
    acc = np.zeros((scene.height, scene.width, 3), dtype=np.int64)
    n = max(1, min(steps, scene.spp))
    edges = [scene.spp * i // n for i in range(n + 1)]
    for s0, s1 in itertools.pairwise(edges):
        add_samples(scene, acc, 0, 0, s0, s1, parallel=parallel)
        if progress is not None:
            progress(s1 - s0)
    return to_image(acc, scene.spp)
