"""Shared counters of partitionable devices (MIG, KEP-4815): a device consumes amounts of its pool's
counter sets; a free device whose counters its allocated siblings used up cannot be handed out. Pure.
"""

from __future__ import annotations

from kubeview.model.gpus.dra import Device


def fits(counters: dict[str, dict[str, int]], device: Device) -> bool:
    for cset, need in device.consumes.items():
        have = counters.get(cset)
        if have is None:
            continue  # a counter set nobody published: nothing to run out of
        if any(have.get(c, 0) < amount for c, amount in need.items()):
            return False
    return True


def consume(counters: dict[str, dict[str, int]], device: Device) -> None:
    for cset, need in device.consumes.items():
        have = counters.get(cset)
        if have is not None:
            for c, amount in need.items():
                have[c] = have.get(c, 0) - amount


def size(device: Device, counters: dict[str, dict[str, int]]) -> float:
    """How much of its counter sets a device takes (0 for a device that consumes none)."""
    share = 0.0
    for cset, need in device.consumes.items():
        have = counters.get(cset) or {}
        share += sum(amount / have[c] for c, amount in need.items() if have.get(c))
    return share
