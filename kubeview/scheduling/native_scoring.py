"""NodeResourcesFit's scoring strategy as kubeview's native profile writes it and the what-if computes it.

Apart from native_profile.py (which turns a PackingConfig into a profile) so that config.py can hold a
`NativeScoring` without importing back: this file knows policies and weights, not PackingConfig.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

NATIVE_POLICIES = ("pack", "spread")  # the policies with a native form
STRATEGIES = ("MostAllocated", "LeastAllocated", "RequestedToCapacityRatio")
MAX_RESOURCE_WEIGHT = 100  # kube-scheduler's validation: a resource weight is 1..100
MAX_SHAPE_SCORE = 10  # config.MaxCustomPriorityScore: shape scores are 0..10, scaled x10 by the plugin
PACK_SHAPE = ((0, 0), (100, MAX_SHAPE_SCORE))  # RequestedToCapacityRatio's form of MostAllocated


@dataclass(frozen=True, slots=True)
class NativeScoring:
    """NodeResourcesFit's scoring strategy as the profile writes it and the what-if computes it."""

    strategy: str = "MostAllocated"
    resources: tuple[tuple[str, int], ...] = (("nvidia.com/gpu", 100), ("cpu", 1), ("memory", 1))
    """(resource, integer weight 1..100), in the profile's order."""
    shape: tuple[tuple[int, int], ...] = ()
    """(utilization 0..100, score 0..10) points, RequestedToCapacityRatio only."""

    def __post_init__(self) -> None:
        if self.strategy not in STRATEGIES:
            raise ValueError(f"strategy must be one of {', '.join(STRATEGIES)}, not {self.strategy!r}")
        if not self.resources or any(not 1 <= w <= MAX_RESOURCE_WEIGHT for _, w in self.resources):
            raise ValueError(f"resource weights must be integers 1..{MAX_RESOURCE_WEIGHT}")
        if (self.strategy == "RequestedToCapacityRatio") != bool(self.shape):
            raise ValueError("a shape goes with RequestedToCapacityRatio, and only with it")
        utils = [u for u, _ in self.shape]
        if utils != sorted(set(utils)) or any(not 0 <= u <= 100 or not 0 <= s <= MAX_SHAPE_SCORE
                                              for u, s in self.shape):
            raise ValueError("shape points need increasing utilization 0..100 and scores 0..10")

    @classmethod
    def from_policy(cls, policy: str, weights: Mapping[str, float], fallback: tuple[str, ...],
                    strategy: str | None = None) -> NativeScoring:
        """The policy's native form (`fallback`: resources joining at weight 1, config.FALLBACK_RESOURCES);
        `strategy` picks RequestedToCapacityRatio over MostAllocated for `pack`. Raises ValueError where
        the policy has none (`balanced`, or spread with a shape)."""
        if policy == "balanced":
            raise ValueError("policy balanced has no native form (kube-scheduler's BalancedAllocation is not "
                             "kubeview's); use pack or spread, or the extender")
        chosen = strategy or ("MostAllocated" if policy == "pack" else "LeastAllocated")
        wanted = {"pack": ("MostAllocated", "RequestedToCapacityRatio"), "spread": ("LeastAllocated",)}
        if chosen not in wanted[policy]:
            raise ValueError(f"policy {policy} is {' or '.join(wanted[policy])} natively, not {chosen}")
        return cls(strategy=chosen, resources=integer_weights(weights, fallback),
                   shape=PACK_SHAPE if chosen == "RequestedToCapacityRatio" else ())

    def fit_args(self) -> dict:
        """NodeResourcesFitArgs with this scoring strategy."""
        strategy: dict = {"type": self.strategy,
                          "resources": [{"name": name, "weight": w} for name, w in self.resources]}
        if self.shape:
            strategy["requestedToCapacityRatio"] = {"shape": [{"utilization": u, "score": s} for u, s in self.shape]}
        return {"scoringStrategy": strategy}


def integer_weights(weights: Mapping[str, float], fallback: tuple[str, ...]) -> tuple[tuple[str, int], ...]:
    """The policy's weights as kube-scheduler's integers 1..100 (largest 100, the rest in proportion,
    none below 1; weight 0 left out), the `fallback` resources (cpu, memory) at 1 where the policy
    leaves them out; heaviest first, then by name."""
    items = [(name, float(w)) for name, w in sorted(weights.items()) if w > 0]
    top = max(w for _, w in items)
    out = [(name, max(1, round(MAX_RESOURCE_WEIGHT * w / top))) for name, w in items]
    out += [(name, 1) for name in fallback if name not in dict(out)]
    return tuple(sorted(out, key=lambda item: (-item[1], item[0])))  # one order: reading back writes the same
