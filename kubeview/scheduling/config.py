"""What an operator can change about packing, live: the policy, per-resource weights, per-node bias/avoid.

One validated value object shared by the extender (`PUT /config`), the local scheduler and the TUI.
`from_dict` is the only way untrusted JSON becomes a config, and it says in one sentence what is wrong.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Any

from kubeview.scheduling.native_scoring import NativeScoring

POLICIES = ("pack", "spread", "balanced")
GPU = "nvidia.com/gpu"
MAX_SCORE = 10  # kube-scheduler's MaxExtenderPriority
FALLBACK_RESOURCES = ("cpu", "memory")
_FIELDS = ("policy", "weights", "bias", "avoid")
_MAX_NAME = 253  # DNS-1123 subdomain: node names and qualified resource names
MAX_WEIGHT = 1000.0  # weights are relative; a bound keeps every weighted sum finite
MAX_ENTRIES = 10_000  # weights, bias and avoid each: more nodes than a cluster of 5,000 has, bounded


def _frozen(d: dict) -> MappingProxyType:
    return MappingProxyType(dict(d))


@dataclass(frozen=True, slots=True)
class PackingConfig:
    """Scoring settings; immutable, so a reader never sees half of a live change."""

    policy: str = "pack"
    """`pack` (most allocated first), `spread` (least allocated first) or `balanced` (even fractions)."""
    weights: MappingProxyType = field(default_factory=lambda: _frozen({GPU: 1.0}))
    """Resource -> weight (>= 0) in the weighted mean; a pod requesting none of them is scored on cpu+memory."""
    bias: MappingProxyType = field(default_factory=lambda: _frozen({}))
    """Node -> points (-10..10) added to its score; the sum is clipped to 0..10."""
    avoid: frozenset[str] = frozenset()
    """Nodes that score 0 (still feasible: the pod lands there only if nothing else fits)."""
    native: NativeScoring | None = None
    """Set: score as kube-scheduler's own NodeResourcesFit under kubeview's native profile (0..100,
    native_profile.py), not as the extender; bias and avoid then do not apply. Not part of the wire
    form (`to_dict`): the extender has no native mode. `native_profile.native_config` sets it."""

    def __post_init__(self) -> None:
        # Normalise mutable inputs, then validate: direct construction gets the same checks as from_dict.
        object.__setattr__(self, "weights", _frozen(_check_weights(self.weights)))
        object.__setattr__(self, "bias", _frozen(_check_bias(self.bias)))
        object.__setattr__(self, "avoid", frozenset(_check_avoid(self.avoid)))
        _check_policy(self.policy)

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-ready dict; `from_dict(to_dict())` gives an equal config."""
        return {
            "policy": self.policy,
            "weights": dict(sorted(self.weights.items())),
            "bias": dict(sorted(self.bias.items())),
            "avoid": sorted(self.avoid),
        }

    @classmethod
    def from_dict(cls, data: Any) -> PackingConfig:
        """Validate untrusted data (missing fields take defaults); raises ValueError with the reason."""
        if not isinstance(data, dict):
            raise ValueError(f"config must be a JSON object, not {type(data).__name__}")
        unknown = sorted(set(data) - set(_FIELDS))
        if unknown:
            raise ValueError(f"unknown config field {unknown[0]!r} (known: {', '.join(_FIELDS)})")
        kwargs: dict[str, Any] = {k: data[k] for k in _FIELDS if k in data}
        return cls(**kwargs)

    def merged(self, patch: Any) -> PackingConfig:
        """This config with the fields in `patch` replaced (how `PUT /config` applies a partial document);
        a native config stays native, its scoring derived again from the new policy and weights."""
        if not isinstance(patch, dict):
            raise ValueError(f"config must be a JSON object, not {type(patch).__name__}")
        new = PackingConfig.from_dict({**self.to_dict(), **patch})
        if self.native is None:
            return new
        return replace(new, native=NativeScoring.from_policy(new.policy, new.weights, FALLBACK_RESOURCES))


def _check_policy(policy: Any) -> None:
    if policy not in POLICIES:
        raise ValueError(f"policy must be one of {', '.join(POLICIES)}, not {policy!r}")


def _number(value: Any) -> bool:
    if not isinstance(value, int | float) or isinstance(value, bool):
        return False
    try:
        return math.isfinite(value)
    except OverflowError:  # an integer too large for a float (JSON allows 4,000 digits)
        return False


def _bounded(items: Any, what: str) -> None:
    if len(items) > MAX_ENTRIES:
        raise ValueError(f"{what} has {len(items)} entries; at most {MAX_ENTRIES} are accepted")


def _name(value: Any, what: str) -> str:
    if not isinstance(value, str) or not value or len(value) > _MAX_NAME:
        raise ValueError(f"{what} must be a non-empty string of at most {_MAX_NAME} characters, "
                         f"not {_short(value)}")
    return value


def _short(value: Any) -> str:
    """A value for an error message, cut: a 4,000-digit number or a long string stays one line."""
    try:
        text = repr(value)
    except ValueError:  # int repr over sys.int_info.str_digits_check_threshold
        text = f"an integer of about {value.bit_length() * 3 // 10} digits"
    return text if len(text) <= 60 else text[:57] + "..."


def _check_weights(weights: Any) -> dict[str, float]:
    if not isinstance(weights, dict | MappingProxyType):
        raise ValueError(f"weights must be an object of resource -> number, not {type(weights).__name__}")
    _bounded(weights, "weights")
    out: dict[str, float] = {}
    for resource, weight in weights.items():
        _name(resource, "a weights key")
        if not _number(weight) or not 0 <= weight <= MAX_WEIGHT:
            raise ValueError(f"weight of {resource!r} must be a number from 0 to {MAX_WEIGHT:g}, "
                             f"not {_short(weight)}")
        out[resource] = float(weight)
    if not any(w > 0 for w in out.values()):
        raise ValueError("weights must give at least one resource a weight above 0")
    return out


def _check_bias(bias: Any) -> dict[str, float]:
    if not isinstance(bias, dict | MappingProxyType):
        raise ValueError(f"bias must be an object of node -> number, not {type(bias).__name__}")
    _bounded(bias, "bias")
    out: dict[str, float] = {}
    for node, points in bias.items():
        _name(node, "a bias key")
        if not _number(points) or not -MAX_SCORE <= points <= MAX_SCORE:
            raise ValueError(f"bias of node {node!r} must be a number from -10 to 10, not {_short(points)}")
        out[node] = float(points)
    return out


def _check_avoid(avoid: Any) -> list[str]:
    if isinstance(avoid, str) or not isinstance(avoid, list | tuple | set | frozenset):
        raise ValueError(f"avoid must be a list of node names, not {type(avoid).__name__}")
    _bounded(avoid, "avoid")
    return [_name(node, "an avoided node") for node in avoid]
