"""Deterministic numba path tracer, distributed by a producer/consumer protocol that loses nothing.

Modules: :mod:`renderer.scene` (YAML -> arrays), :mod:`renderer.kernels` (numba),
:mod:`renderer.protocol` (wire format), :mod:`renderer.producer`, :mod:`renderer.consumer`,
:mod:`renderer.cli`.  Never imports ``kubeview`` or ``textual``.
"""

from __future__ import annotations

from typing import Any

__all__ = ["Scene", "SceneError"]


def __getattr__(name: str) -> Any:
    """``renderer.Scene`` on first use: importing the package stays light (kubeview loads
    ``renderer.bounded_yaml`` for its config files without numpy and the BVH builder)."""
    if name in __all__:
        from renderer import scene

        return getattr(scene, name)
    raise AttributeError(f"module 'renderer' has no attribute {name!r}")
