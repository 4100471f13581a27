"""The embedded cluster's ResourceQuotas: the admission plugin on every pod create, and the quota
controller that keeps `status.used` (a mixin of `LocalCluster`, state.py).

As upstream: admission checks a pod against `status.used` and writes the quota's new `status.used`
before the pod is stored (quota_admission.admit), or refuses the create with the API server's 403
(`QuotaRefused`), which the ReplicaSet and Job controllers turn into a `FailedCreate` Event
(controllers.try_create_pod). The controller recounts a namespace's quotas when one of its pods
changes (a finished or deleted pod frees its share), from a ledger of each pod's usage kept on every
pod write, so no pass over every pod runs per event. **Deviation**: the count is immediate (upstream's
controller resyncs on pod events and every 5 minutes).
"""

from __future__ import annotations

import builtins
import copy
from typing import TYPE_CHECKING

from kubeview.cluster.local import objects as obj
from kubeview.cluster.local import quota_admission as qa
from kubeview.cluster.local.kubelet_status import Key, _key
from kubeview.cluster.source import ActionError

QUOTA = "ResourceQuota"


class Quotas:
    """Quota admission and the quota controller of `LocalCluster`; see the module docstring."""

    _objects: dict[str, dict[Key, dict]]
    # per namespace with a quota: its pods -> what each uses (quota_admission.pod_usage)
    _quota_pods: dict[str, dict[Key, dict[str, int]]]
    _quota_dirty: set[str]  # namespaces whose quotas' status.used may be stale

    if TYPE_CHECKING:  # provided by LocalCluster
        def list(self, kind: str) -> builtins.list[dict]: ...
        def get(self, kind: str, namespace: str, name: str) -> dict | None: ...
        def create(self, kind: str, o: dict) -> dict: ...
        def update(self, kind: str, o: dict) -> dict: ...
        def reconcile(self, rounds: int = 20) -> None: ...

    def _init_quotas(self) -> None:
        self._quota_pods = {}
        self._quota_dirty = set()

    def quotas_of(self, namespace: str) -> builtins.list[dict]:
        """The namespace's quotas (deleted ones are gone: `delete_workload` deletes them like any object)."""
        return [q for (ns, _), q in self._objects[QUOTA].items() if ns == namespace]

    def apply_quota(self, manifest: dict) -> dict:
        """Create or replace a ResourceQuota; its status.used is counted at once."""
        meta = manifest.get("metadata") or {}
        if not (meta.get("name") or "").strip():
            raise ActionError("a ResourceQuota needs metadata.name")
        ns = meta.get("namespace") or "default"
        body = qa.normalize_quota(manifest)
        old = self.get(QUOTA, ns, meta["name"])
        if old is None:
            body["metadata"] = obj.metadata(meta["name"], ns, labels=meta.get("labels"))
            if ns not in self._quota_pods:
                self._quota_pods[ns] = {_key(p): qa.pod_usage(p) for p in self.list("Pod")
                                        if p["metadata"].get("namespace") == ns}
            body["status"]["used"] = qa.used_status(body["status"]["hard"], self._namespace_usage(ns, body))
            made = self.create(QUOTA, body)
        else:
            body["metadata"] = copy.deepcopy(old["metadata"])
            body["status"]["used"] = qa.used_status(body["status"]["hard"], self._namespace_usage(ns, body))
            made = self.update(QUOTA, body)
        self.reconcile()
        return made

    def admit_quota(self, pod: dict) -> None:
        """The admission plugin on a pod create: refuse (QuotaRefused) or charge its quotas."""
        ns = pod["metadata"].get("namespace", "")
        if ns not in self._quota_pods:
            return
        for quota, used in qa.admit(self.quotas_of(ns), pod):
            if (quota.get("status") or {}).get("used") != used:
                fresh = copy.deepcopy(quota)
                fresh["status"]["used"] = used
                self.update(QUOTA, fresh)

    def quota_pod_written(self, deleted: bool, pod: dict) -> None:
        """Every pod write: keep the ledger of a quota namespace's pods, and mark it to recount."""
        key = _key(pod)
        pods = self._quota_pods.get(key[0])
        if pods is None:
            return
        usage = {} if deleted else qa.pod_usage(pod)
        if pods.get(key) != usage:
            if deleted:
                pods.pop(key, None)
            else:
                pods[key] = usage
            self._quota_dirty.add(key[0])

    def _namespace_usage(self, namespace: str, quota: dict) -> dict[str, int]:
        total: dict[str, int] = {}
        hard = (quota.get("status") or {}).get("hard") or {}
        pods = self._objects["Pod"]
        for key, usage in (self._quota_pods.get(namespace) or {}).items():
            if not usage:
                continue
            pod = pods.get(key)
            if pod is None or not qa.matches(quota, pod):
                continue
            for k in hard:
                if k in usage:
                    total[k] = total.get(k, 0) + usage[k]
        return total

    def sync_quotas(self) -> None:
        """The quota controller: recount status.used of the quotas whose namespace's pods changed."""
        dirty, self._quota_dirty = self._quota_dirty, set()
        for ns in sorted(dirty):
            for quota in self.quotas_of(ns):
                used = qa.used_status(quota["status"]["hard"], self._namespace_usage(ns, quota))
                if quota["status"].get("used") != used:
                    fresh = copy.deepcopy(quota)
                    fresh["status"]["used"] = used
                    self.update(QUOTA, fresh)
