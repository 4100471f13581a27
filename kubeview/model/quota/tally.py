"""Per namespace, what its unfinished pods request and limit, kept up to date pod by pod (pure).

`count_usage` walked every pod of a quota's namespace per model version: at 150,000 pods in 500
namespaces that was a pass over every pod at every refresh (~0.25 s), more than the snapshot's whole
budget for quotas (`kubeview bench model --quota`). The tally is started by the first read: one pass
that groups pods by (namespace, QoS best-effort, their shared requests and limits dicts: replicas
share them, model/requests.py) before adding; from then on, its row in the Pod kind (first, so the
pod's old view is still in the model) takes the old view's share off at once and notes the pod, whose
new view is added at the next read. A relist stops it, and so does a tally left unread while more pods
were noted than there are (at least NOTED_MOST); the next read starts it again.

Totals per namespace and best-effort flag: `requests` and `limits` (model units, by resource) and
`pods`; `count_from_totals` reads a quota's keys from them as `counting.pod_amount` reads a pod.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Final

from kubeview.model.quota.counting import CLAIM_COUNT, best_effort, pod_amount, unevaluated_scopes
from kubeview.model.quota.objects import DEVICES_SUFFIX, QuotaView
from kubeview.model.views import TERMINAL_PHASES, PodView

PodKey = tuple[str, str]
NOTED_MOST = 10_000  # pods noted and not read yet beyond which (and beyond the pods there are) it stops
_REQ: Final = 0
_LIM: Final = 1
_PODS: Final = 2


class Totals:
    """One namespace's sums: [requests by resource, limits by resource, pods], per best-effort flag."""

    __slots__ = ("by_qos",)

    def __init__(self) -> None:
        self.by_qos: dict[bool, list] = {False: [{}, {}, 0], True: [{}, {}, 0]}

    def add(self, requests: Mapping[str, int], limits: Mapping[str, int], best: bool, times: int) -> None:
        row = self.by_qos[best]
        for into, amounts in ((row[_REQ], requests), (row[_LIM], limits)):
            for r, v in amounts.items():
                into[r] = into.get(r, 0) + v * times
        row[_PODS] += times


class QuotaTally:
    """Namespace -> Totals over the model's unfinished pods; see the module docstring."""

    def __init__(self, pods: Callable[[], Mapping[PodKey, PodView]]) -> None:
        self._pods = pods  # the model's pods now (NodePods.pods, a new dict after a relist): read only
        self.active = False
        self.totals: dict[str, Totals] = {}
        self._noted: set[PodKey] = set()  # pods changed since the last read: their new view is added then
        # the namespaces whose totals the last `current()` moved (None: recounted, every one may have)
        self.changed: set[str] | None = None

    # -- the Pod row (before NodePods, so the old view is still there) -----------------------------
    def put_pod(self, obj: dict) -> bool:
        if self.active:
            self._forget(_key(obj))
        return False  # what changed is the other stores' to say

    def delete_pod(self, obj: dict) -> bool:
        return self.put_pod(obj)

    def relist_pods(self, objects: list[dict]) -> None:
        self.active = False  # recounted at the next read

    def _forget(self, key: PodKey) -> None:
        if key in self._noted:
            return  # its share is off already; its newest view is added at the next read
        pods = self._pods()
        if len(self._noted) >= max(NOTED_MOST, len(pods)):  # unread for long (pods come and go by name):
            self.active, self._noted, self.totals = False, set(), {}  # a recount is cheaper than the keys
            return
        old = pods.get(key)
        if old is not None and old.phase not in TERMINAL_PHASES:
            self.totals.setdefault(key[0], Totals()).add(old.requests, old.limits, best_effort(old), -1)
        self._noted.add(key)

    # -- reads -------------------------------------------------------------------------------------
    def current(self) -> dict[str, Totals]:
        """The totals now: started with one grouped pass, else the noted pods added."""
        pods = self._pods()
        if not self.active:
            groups: dict[tuple[str, int, int], list] = {}
            for (ns, _), p in pods.items():
                if p.phase in TERMINAL_PHASES:
                    continue
                g = groups.get((ns, id(p.requests), id(p.limits)))
                if g is None:
                    groups[(ns, id(p.requests), id(p.limits))] = [p, 1]
                else:
                    g[1] += 1
            self.totals = {}
            for (ns, _, _), (p, n) in groups.items():
                self.totals.setdefault(ns, Totals()).add(p.requests, p.limits, best_effort(p), n)
            self._noted = set()
            self.active = True
            self.changed = None
            return self.totals
        self.changed = {ns for ns, _ in self._noted}
        for key in self._noted:
            view = pods.get(key)
            if view is not None and view.phase not in TERMINAL_PHASES:
                self.totals.setdefault(key[0], Totals()).add(view.requests, view.limits, best_effort(view), 1)
        self._noted = set()
        return self.totals


def _key(obj: dict) -> PodKey:
    meta = obj.get("metadata") or {}
    return (meta.get("namespace", ""), meta.get("name", ""))


_PROBE = PodView("", "", None, "Pending", {}, {}, [], 0, None, False, None)


def count_from_totals(quota: QuotaView, totals: Totals | None,
                      claims: Mapping[str, int] | None = None) -> dict[str, int | None]:
    """`counting.count_usage` of the quota, read from its namespace's totals (and for the claim keys of an
    unscoped quota, from `claims`: counting.claim_usage of its ResourceClaims; None: not read)."""
    if unevaluated_scopes(quota):
        return dict.fromkeys(quota.hard)
    flags = [f for f in (False, True) if not ("BestEffort" in quota.scopes and not f)
             and not ("NotBestEffort" in quota.scopes and f)]
    out: dict[str, int | None] = {}
    for key in quota.hard:
        if not quota.scopes and (key == CLAIM_COUNT or key.endswith(DEVICES_SUFFIX)):
            out[key] = None if claims is None else claims.get(key, 0)
            continue
        if pod_amount(key, _PROBE) is None:
            out[key] = None
            continue
        total = 0
        for best in flags:
            if totals is None:
                continue
            row = totals.by_qos[best]
            total += _amount(key, row)
        out[key] = total
    return out


def _amount(key: str, row: list) -> int:
    """A key's sum in one totals row, as `counting.pod_amount` reads a pod's share."""
    if key == "pods":
        return int(row[_PODS])
    if key.startswith("limits."):
        return int(row[_LIM].get(key[len("limits."):], 0))
    name = key[len("requests."):] if key.startswith("requests.") else key
    return int(row[_REQ].get(name, 0))

