"""Fixed-point radiance: why the image does not depend on how samples are grouped into tasks.

Every sample's radiance (per channel) is clamped to ``[0, CLAMP]`` and rounded to the nearest
multiple of ``1 / SCALE``; a pixel's value is the int64 sum of those integers over its samples.
Integer addition is exact and associative, so any tiling, any samples per task and any order in
which results arrive give the same sums, hence the same image ``sums / (SCALE * samples)``.

Bounds (checked below at import): a valid scene's radiance is at most its brightest background
channel (albedos are <= 1, ``scene.py`` caps the background at 1000), so ``CLAMP = 1024`` never
changes a valid scene's samples; ``MAX_SPP * CLAMP * SCALE = 10^6 * 2^10 * 2^32 < 2^62``, so no sum
over a whole job overflows int64.  Rounding moves each sample by at most ``2^-33`` (~1.2e-10), so
the image differs from the exact float mean by at most that, far below one 8-bit level (1/256).

Pure: no I/O, no numba (the kernels import these constants; the producer and checkpoints check
results against the bounds without compiling anything).
"""

from __future__ import annotations

import numpy as np

from renderer.protocol import MAX_SPP

SCALE_BITS = 32
SCALE = 1 << SCALE_BITS
"""Quantization steps per unit of radiance (a power of two: ``c * SCALE`` is exact in float64)."""
CLAMP = 1024.0
"""Largest radiance one sample contributes (above the brightest background a scene may have)."""
MAX_SAMPLE = int(CLAMP) * SCALE
"""The largest quantized sample: a task's sum per pixel and channel is at most samples x this."""
MAX_SUM = MAX_SPP * MAX_SAMPLE
"""The largest sum a whole job can reach per pixel and channel (fits int64, with room to spare)."""

assert MAX_SUM < 2**62, "fixed-point sums could overflow int64"


def to_image(sums: np.ndarray, samples: int) -> np.ndarray:
    """Fixed-point sums over ``samples`` (> 0) samples per pixel -> linear float64 radiance.

    One definition for every path (one-process render, producer, PNG of the image so far), so
    the same sums always give the same float bits."""
    out = sums.astype(np.float64)  # divided in place: one float image, as the memory bound counts
    out /= float(samples * SCALE)  # the divisor is exact: < 2^53
    return out
