"""The tile kernel on numba's CUDA target: one thread per pixel, the same physics.

The device functions are the *same* Python functions as the CPU kernels
(``renderer.kernels.pcg_hash.py_func`` and so on), compiled a second time with
``cuda.jit(device=True)``: there is one implementation of the RNG and of ``trace``.  Each
clone gets a globals mapping in which the names of the other kernels point at their device
versions, so ``trace`` calls the device ``_closest_hit``, not the CPU dispatcher.

Only the loop over pixels differs (``cuda.grid`` instead of ``prange``, a local array for the
BVH stack); each pixel runs the shared ``kernels.pixel_samples``: every sample quantized to
int64 fixed point and added to ``out``.  Under the CUDA simulator (``NUMBA_ENABLE_CUDASIM=1``) the
result is bit-identical to the CPU kernel; a real GPU may contract ``a * b + c`` into an FMA inside
``trace``, which can change a sample's last float bits and so, rarely, its rounding (the tests
compare with the simulator).

``numba.cuda`` is imported lazily: ``renderer`` imports, and the CPU kernel runs, without
a CUDA toolkit, a GPU, or the ``numba-cuda`` package.
"""

from __future__ import annotations

import types
from collections.abc import Callable
from typing import Any

import numpy as np

from renderer import kernels
from renderer.scene import Scene

THREADS_PER_BLOCK = 64
STACK_SIZE = 64  # > renderer.bvh.MAX_DEPTH, as in the CPU kernel

# the njit functions, in call order (callees first)
_DEVICE_FUNCTIONS = ("pcg_hash", "sample_state", "next_float", "_in_unit_sphere", "_in_unit_disk",
                     "_closest_hit", "trace", "quantize", "pixel_samples")

_compiled: dict[str, Any] = {}


def cuda_available() -> bool:
    """True when numba's CUDA target can run kernels here (a GPU, or the simulator)."""
    try:
        from numba import cuda
    except Exception:  # numba without a CUDA target, a broken toolkit, ...
        return False
    try:
        return bool(cuda.is_available())
    except Exception:
        return False


def _rebind(f: Callable[..., object], namespace: dict[str, Any]) -> types.FunctionType:
    """``f``'s code with ``namespace`` as its globals (so callees resolve to device versions)."""
    assert isinstance(f, types.FunctionType)  # a plain `def`
    g = types.FunctionType(f.__code__, namespace, f.__name__, f.__defaults__, f.__closure__)
    g.__qualname__ = f.__qualname__
    g.__doc__ = f.__doc__
    return g


def _tile_kernel(out, x0, y0, w, h, s0, s1, width, height, max_depth, seed, cam,  # noqa: ANN001
                 spheres, smat, mats, bounds, info, bg):
    """One thread per pixel of the tile: ``kernels._render_tile``'s prange loop, on the GPU."""
    p = cuda.grid(1)  # noqa: F821 -- bound by _build
    if p >= w * h:
        return
    stack = cuda.local.array(64, np.int64)  # noqa: F821 -- STACK_SIZE
    ty = p // w
    pixel_samples(out, p - ty * w, ty, x0, y0, s0, s1, width, height, max_depth, seed, cam,  # noqa: F821
                  spheres, smat, mats, bounds, info, bg, stack)


def _build() -> Any:
    """Compile (once) the device functions and the tile kernel; returns the kernel."""
    if "tile" in _compiled:
        return _compiled["tile"]
    from numba import cuda

    namespace: dict[str, Any] = dict(vars(kernels))  # np, math, ... as the CPU kernels see them
    namespace["cuda"] = cuda
    for name in _DEVICE_FUNCTIONS:
        py_func = getattr(kernels, name).py_func
        namespace[name] = cuda.jit(device=True)(_rebind(py_func, namespace))
    _compiled["tile"] = cuda.jit(_rebind(_tile_kernel, namespace))
    return _compiled["tile"]


def add_samples(scene: Scene, out: np.ndarray, x0: int, y0: int, s0: int, s1: int) -> None:
    """:func:`renderer.kernels.add_samples` on the CUDA target (same bits modulo FMA, see above)."""
    from numba import cuda

    kernel = _build()
    h, w = out.shape[:2]
    d_out = cuda.to_device(np.ascontiguousarray(out))
    arrays = [cuda.to_device(np.ascontiguousarray(a)) for a in (
        scene.camera, scene.spheres, scene.sphere_material, scene.materials,
        scene.bvh_bounds, scene.bvh_info, scene.background)]
    blocks = -(-(w * h) // THREADS_PER_BLOCK)
    kernel[blocks, THREADS_PER_BLOCK](
        d_out, x0, y0, w, h, s0, s1, scene.width, scene.height, scene.max_depth, scene.seed,
        *arrays)
    out[...] = d_out.copy_to_host()


def render_chunk(scene: Scene, x0: int, y0: int, w: int, h: int, s0: int, s1: int,
                 **_: object) -> np.ndarray:
    """:func:`renderer.kernels.render_chunk` on the CUDA target: (h, w, 3) int64 fixed-point sums."""
    out = np.zeros((h, w, 3), dtype=np.int64)
    add_samples(scene, out, x0, y0, s0, s1)
    return out


KERNELS = ("auto", "cpu", "cuda")


class KernelUnavailable(Exception):
    """``cuda`` was asked for where numba's CUDA target cannot run."""


def choose_kernel(requested: str) -> tuple[str, str]:
    """``auto``/``cpu``/``cuda`` -> (``"cpu"`` or ``"cuda"``, why).  ``auto`` is ``cuda`` when
    :func:`cuda_available`, else ``cpu``.  Raises ValueError for another name and
    :class:`KernelUnavailable` for ``cuda`` without a CUDA target."""
    if requested not in KERNELS:
        raise ValueError(f"unknown kernel {requested!r} (expected one of {', '.join(KERNELS)})")
    if requested == "cpu":
        return "cpu", "requested"
    available = cuda_available()
    if requested == "cuda":
        if not available:
            raise KernelUnavailable("--kernel cuda: numba's CUDA target is not available here "
                                    "(no GPU/driver, or numba-cuda not installed)")
        return "cuda", "requested"
    return ("cuda", "auto: CUDA target available") if available else ("cpu", "auto: no CUDA target")


def tile_renderer(kernel: str) -> Callable[..., np.ndarray]:
    """``render_chunk`` of the named kernel, ``"cpu"`` or ``"cuda"``."""
    if kernel == "cuda":
        return render_chunk
    return kernels.render_chunk
