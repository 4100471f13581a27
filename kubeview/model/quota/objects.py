"""A ResourceQuota object read into a view: hard and used per key, in model units and as written.

Keys are the API's (`requests.nvidia.com/gpu`, `cpu`, `limits.memory`, `pods`, `count/jobs.batch`,
`gpu.deviceclass.resource.k8s.io/devices`); amounts are model units (cpu keys in millicores, the rest
plain integers, rounded up: model/quantity.py), with the object's own strings kept for display.
"""

from __future__ import annotations

from dataclasses import dataclass

from kubeview.model.quantity import CPU, QuantityError, to_units

QuotaKey = tuple[str, str]  # (namespace, name)
CPU_KEYS = frozenset({"cpu", "requests.cpu", "limits.cpu"})
BYTE_KEYS = frozenset({"memory", "requests.memory", "limits.memory", "ephemeral-storage",
                       "requests.ephemeral-storage", "limits.ephemeral-storage", "requests.storage"})
DEVICES_SUFFIX = ".deviceclass.resource.k8s.io/devices"


@dataclass(frozen=True, slots=True)
class ScopeRequirement:
    """One entry of `spec.scopeSelector.matchExpressions` (`PriorityClass In [high]`)."""

    scope: str
    operator: str
    values: tuple[str, ...] = ()

    def __str__(self) -> str:
        values = f" [{', '.join(self.values)}]" if self.values else ""
        return f"{self.scope} {self.operator}{values}"


def units(key: str, text: object) -> int | None:
    """A quota amount in model units (millicores for cpu keys); None for one that does not parse."""
    try:
        return to_units(CPU if key in CPU_KEYS else "", str(text))
    except (QuantityError, ValueError):
        return None


def amount_text(key: str, value: int) -> str:
    """A counted amount as the API server would write it: `2`, `500m`, `16Gi`, `3`."""
    if key in CPU_KEYS:
        return str(value // 1000) if value % 1000 == 0 else f"{value}m"
    if key in BYTE_KEYS and value:
        for suffix, size in (("Ti", 2**40), ("Gi", 2**30), ("Mi", 2**20), ("Ki", 2**10)):
            if value % size == 0:
                return f"{value // size}{suffix}"
    return str(value)


def _amounts(raw: object) -> tuple[dict[str, int], dict[str, str]]:
    amounts, texts = {}, {}
    for key, text in (raw if isinstance(raw, dict) else {}).items():
        value = units(str(key), text)
        if value is not None:
            amounts[str(key)], texts[str(key)] = value, str(text)
    return amounts, texts


@dataclass(frozen=True, slots=True)
class QuotaView:
    """One ResourceQuota: `hard` is spec.hard; `used` the quota controller's status.used (absent before
    the controller first wrote it: `reported` False)."""

    namespace: str
    name: str
    uid: str
    hard: dict[str, int]
    used: dict[str, int]
    hard_text: dict[str, str]
    used_text: dict[str, str]
    scopes: tuple[str, ...]
    scope_selector: tuple[ScopeRequirement, ...]
    reported: bool
    resource_version: str = ""

    @classmethod
    def from_api(cls, obj: dict) -> QuotaView:
        meta, spec, status = obj.get("metadata") or {}, obj.get("spec") or {}, obj.get("status") or {}
        hard, hard_text = _amounts(spec.get("hard"))
        used, used_text = _amounts(status.get("used"))
        selector = tuple(
            ScopeRequirement(str(e.get("scopeName", "")), str(e.get("operator", "")),
                             tuple(str(v) for v in e.get("values") or ()))
            for e in (spec.get("scopeSelector") or {}).get("matchExpressions") or ())
        return cls(
            namespace=meta.get("namespace", ""),
            name=meta.get("name", ""),
            uid=meta.get("uid", ""),
            hard=hard,
            used=used,
            hard_text=hard_text,
            used_text=used_text,
            scopes=tuple(str(s) for s in spec.get("scopes") or ()),
            scope_selector=selector,
            reported="used" in status,
            resource_version=meta.get("resourceVersion", ""),
        )

    @property
    def key(self) -> QuotaKey:
        return (self.namespace, self.name)

    def full(self, key: str) -> bool:
        """Is `key` at (or over) its hard limit by the controller's count?"""
        return key in self.hard and self.used.get(key, 0) >= self.hard[key]

    def room(self, key: str) -> int | None:
        """How much of `key` the controller's count leaves (None: not limited here)."""
        if key not in self.hard:
            return None
        return self.hard[key] - self.used.get(key, 0)
