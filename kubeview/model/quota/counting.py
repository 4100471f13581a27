"""What kubeview counts against a quota from the model's pods, beside what the quota controller reports.

The quota controller (pkg/quota/v1/evaluator/core/pods.go) counts every pod of the namespace that is
not Succeeded or Failed: `pods` one each, `cpu`/`requests.cpu` and the other `requests.*` keys from the
pod's effective requests (the scheduler's arithmetic, `PodView.requests`), `limits.*` from its limits.
kubeview does the same from the pods it holds; a key it cannot count (object counts `count/...`,
storage, DRA `<class>.deviceclass.resource.k8s.io/devices`) and a quota with a scope kubeview does not
evaluate (`Terminating`, `PriorityClass`, ...: the pod view does not carry what they read) are None:
only the controller's figure is shown. DRA device quota (`<class>.deviceclass.resource.k8s.io/devices`) and
`count/resourceclaims.resource.k8s.io` are counted from the namespace's ResourceClaims as the claim
evaluator does (pkg/quota/v1/evaluator/core/resource_claims.go): per request its count (All: 32, the most
an allocation holds), per prioritized list the largest of its subrequests per class.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from kubeview.model.gpus.dra import ClaimView
from kubeview.model.quota.objects import DEVICES_SUFFIX, QuotaView, amount_text
from kubeview.model.views import TERMINAL_PHASES, PodView

COUNTED_SCOPES = frozenset({"BestEffort", "NotBestEffort"})
CLAIM_COUNT = "count/resourceclaims.resource.k8s.io"
ALLOCATION_RESULTS_MAX = 32  # resource.k8s.io/v1 AllocationResultsMaxSize: what an All request is charged
_REQUESTS = {"cpu": "cpu", "memory": "memory", "ephemeral-storage": "ephemeral-storage"}


def pod_amount(key: str, pod: PodView) -> int | None:
    """The pod's share of quota key `key` (None: kubeview cannot count this key)."""
    if key == "pods":
        return 1
    if key in _REQUESTS:
        return pod.requests.get(key, 0)
    if key.startswith("requests."):
        name = key[len("requests."):]
        return None if name == "storage" else pod.requests.get(name, 0)
    if key.startswith("limits."):
        return pod.limits.get(key[len("limits."):], 0)
    if key.startswith("hugepages-"):
        return pod.requests.get(key, 0)
    return None


def best_effort(pod: PodView) -> bool:
    """No cpu or memory request or limit in any container (QoS class BestEffort)."""
    return not any(r in amounts for amounts in (pod.requests, pod.limits) for r in ("cpu", "memory"))


def unevaluated_scopes(quota: QuotaView) -> list[str]:
    """The scopes of `quota` kubeview cannot evaluate on its pod views."""
    scopes = [*quota.scopes, *(r.scope for r in quota.scope_selector)]
    return [s for s in scopes if s not in COUNTED_SCOPES]


def matches(quota: QuotaView, pod: PodView) -> bool:
    """Does `pod` fall under `quota`'s BestEffort / NotBestEffort scopes (the only ones evaluated)?"""
    for scope in quota.scopes:
        if scope == "BestEffort" and not best_effort(pod):
            return False
        if scope == "NotBestEffort" and best_effort(pod):
            return False
    return True


class NamespacePods:
    """A namespace's unfinished pods, grouped by their (shared) amount dicts: pods whose containers ask
    alike share `requests`/`limits` (model/requests.py caches them by content), so the sums are a count
    per group, and a pass over 150,000 pods is one dict lookup each."""

    __slots__ = ("groups", "_sums")

    def __init__(self) -> None:
        self.groups: dict[tuple[int, int], list] = {}  # (id(requests), id(limits)) -> [a pod, how many]
        self._sums: tuple[dict[str, int], dict[str, int], int] | None = None

    @property
    def pods(self) -> list[PodView]:
        """One pod of each group, repeated as many times as the group has pods (same amounts)."""
        return [pod for pod, n in self.groups.values() for _ in range(n)]

    def sums(self) -> tuple[dict[str, int], dict[str, int], int]:
        """(requests, limits, pods) summed over the pods."""
        if self._sums is None:
            requests: dict[str, int] = {}
            limits: dict[str, int] = {}
            count = 0
            for pod, n in self.groups.values():
                count += n
                for total, amounts in ((requests, pod.requests), (limits, pod.limits)):
                    for r, v in amounts.items():
                        total[r] = total.get(r, 0) + v * n
            self._sums = (requests, limits, count)
        return self._sums


def _is_claim_key(key: str) -> bool:
    return key == CLAIM_COUNT or key.endswith(DEVICES_SUFFIX)


def _claim_amount(key: str, claims: Mapping[str, int] | None) -> int | None:
    return None if claims is None else claims.get(key, 0)


def _sum_amount(key: str, pods: NamespacePods) -> int | None:
    """`pod_amount` summed over the namespace's pods, from the sums."""
    requests, limits, count = pods.sums()
    if key == "pods":
        return count
    if key in _REQUESTS:
        return requests.get(key, 0)
    if key.startswith("requests."):
        name = key[len("requests."):]
        return None if name == "storage" else requests.get(name, 0)
    if key.startswith("limits."):
        return limits.get(key[len("limits."):], 0)
    if key.startswith("hugepages-"):
        return requests.get(key, 0)
    return None


def _devices(mode: str, count: int) -> int:
    return count if mode == "ExactCount" else ALLOCATION_RESULTS_MAX if mode == "All" else 0


def claim_usage(claims: list[ClaimView]) -> dict[str, int]:
    """What a namespace's ResourceClaims add up to: `count/resourceclaims.resource.k8s.io` and, per
    device class, `<class>.deviceclass.resource.k8s.io/devices`."""
    out = {CLAIM_COUNT: len(claims)}
    for claim in claims:
        for r in claim.requests:
            worst: dict[str, int] = {}
            if r.alternative_classes:
                for cls, mode, count in r.alternative_classes:
                    worst[cls] = max(worst.get(cls, 0), _devices(mode, count))
            else:
                worst[r.device_class] = _devices(r.mode, r.count)
            for cls, n in worst.items():
                key = cls + DEVICES_SUFFIX
                out[key] = out.get(key, 0) + n
    return out


def count_usage(quota: QuotaView, pods: NamespacePods, claims: Mapping[str, int] | None = None) -> dict[str, int | None]:
    """Per hard key of `quota`: what the namespace's unfinished pods it matches add up to, and for the
    claim keys what its ResourceClaims do (`claim_usage`; None: the model does not read claims)."""
    if unevaluated_scopes(quota):
        return dict.fromkeys(quota.hard)
    if not quota.scopes:
        return {k: _claim_amount(k, claims) if _is_claim_key(k) else _sum_amount(k, pods) for k in quota.hard}
    sums: dict[str, int | None] = {k: 0 if pod_amount(k, _PROBE) is not None else None for k in quota.hard}
    counted = [k for k in quota.hard if sums[k] is not None]
    for pod in pods.pods:
        if matches(quota, pod):
            for k in counted:
                sums[k] = (sums[k] or 0) + (pod_amount(k, pod) or 0)
    return sums


def pods_by_namespace(pods: Mapping[tuple[str, str], PodView], namespaces: set[str]) -> dict[str, NamespacePods]:
    """The unfinished pods of each of `namespaces` (one pass over the pods)."""
    out = {ns: NamespacePods() for ns in namespaces}
    terminal = TERMINAL_PHASES
    for (ns, _), pod in pods.items():
        mine = out.get(ns)
        if mine is None or pod.phase in terminal:
            continue
        key = (id(pod.requests), id(pod.limits))
        entry = mine.groups.get(key)
        if entry is None:
            mine.groups[key] = [pod, 1]
        else:
            entry[1] += 1
    return out


@dataclass(frozen=True, slots=True)
class QuotaUse:
    """One key of one quota: its hard limit, the controller's used, kubeview's count (None: not counted)."""

    key: str
    hard: int
    used: int | None  # status.used (None: the controller has not reported this key)
    counted: int | None
    hard_text: str
    used_text: str  # "" when not reported

    @property
    def differs(self) -> bool:
        """kubeview's count and the controller's disagree (both known)."""
        return self.counted is not None and self.used is not None and self.counted != self.used

    @property
    def full(self) -> bool:
        return self.used is not None and self.used >= self.hard

    def counted_text(self) -> str:
        return "" if self.counted is None else amount_text(self.key, self.counted)


def quota_uses(quota: QuotaView, counted: Mapping[str, int | None]) -> tuple[QuotaUse, ...]:
    """The quota's keys, in the API's (sorted) order, with both counts."""
    return tuple(
        QuotaUse(key, hard, quota.used.get(key) if key in quota.used else None, counted.get(key),
                 quota.hard_text.get(key, str(hard)), quota.used_text.get(key, ""))
        for key, hard in sorted(quota.hard.items()))


_PROBE = PodView("", "", None, "Pending", {}, {}, [], 0, None, False, None)
