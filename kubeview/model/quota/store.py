"""The model's quota store (`model.quotas`, kind "ResourceQuota"): every ResourceQuota, by namespace.

A `KindStore` (model/kinds.py): `put`, `delete`, `replace`. Reads: `quotas()` (all, by namespace and
name), `in_namespace(ns)`, `get(ns, name)`, `namespaces()`; `version` rises on every change.
"""

from __future__ import annotations

from kubeview.model.quota.objects import QuotaKey, QuotaView

QUOTA_KIND = "ResourceQuota"


class QuotaStore:
    """ResourceQuotas by (namespace, name); see the module docstring."""

    def __init__(self) -> None:
        self.version = 0
        self.listed = False  # listed at least once (served and readable)
        self._quotas: dict[QuotaKey, QuotaView] = {}
        self._sorted: tuple[int, list[QuotaView]] | None = None

    def put(self, obj: dict) -> bool:
        view = QuotaView.from_api(obj)
        old = self._quotas.get(view.key)
        if old is not None and old.resource_version and old.resource_version == view.resource_version:
            return False
        self._quotas[view.key] = view
        self.version += 1
        return True

    def delete(self, obj: dict) -> bool:
        meta = obj.get("metadata") or {}
        if self._quotas.pop((meta.get("namespace", ""), meta.get("name", "")), None) is None:
            return False
        self.version += 1
        return True

    def replace(self, objects: list[dict]) -> None:
        self.listed = True
        self._quotas = {}
        for obj in objects:
            view = QuotaView.from_api(obj)
            self._quotas[view.key] = view
        self.version += 1

    # -- reads ---------------------------------------------------------------------------------
    def __len__(self) -> int:
        return len(self._quotas)

    def quotas(self) -> list[QuotaView]:
        """Every quota, by (namespace, name); cached per `version`."""
        if self._sorted is None or self._sorted[0] != self.version:
            self._sorted = (self.version, sorted(self._quotas.values(), key=lambda q: q.key))
        return self._sorted[1]

    def get(self, namespace: str, name: str) -> QuotaView | None:
        return self._quotas.get((namespace, name))

    def in_namespace(self, namespace: str) -> list[QuotaView]:
        return [q for q in self.quotas() if q.namespace == namespace]

    def namespaces(self) -> list[str]:
        """Namespaces with at least one quota, sorted."""
        return sorted({q.namespace for q in self._quotas.values()})
