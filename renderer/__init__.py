"""Deterministic numba path tracer, distributed by a producer/consumer protocol that loses nothing.

Modules: :mod:`renderer.scene` (YAML -> arrays), :mod:`renderer.kernels` (numba),
:mod:`renderer.protocol` (wire format), :mod:`renderer.producer`, :mod:`renderer.consumer`,
:mod:`renderer.cli`.  Never imports ``kubeview`` or ``textual``.
"""

from renderer.scene import Scene, SceneError

__all__ = ["Scene", "SceneError"]
