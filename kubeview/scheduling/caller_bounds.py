"""Where the extender asks its bounds whether a call may wait for the watch or ask the API server.

The bounds themselves are pure (lookup_budget.py: the bucket and the memory of absent pods;
wait_slots.py: the slots); this applies them to a call: MustWait when the call may go on but is on
the server's loop (it must not block there), a count and a metric when it may not, and the pod
lookup that prioritize makes for a pod its watch has not shown (`pod_of`, one GET).
"""

from __future__ import annotations

import time
from collections.abc import Callable

from kubeview.scheduling.errors import MustWait
from kubeview.scheduling.lookup_budget import LookupBudget, LookupLimits
from kubeview.scheduling.metrics import ExtenderMetrics
from kubeview.scheduling.wait_slots import WaitLimits, WaitSlots

PodOf = Callable[[str, str], tuple[str, bool] | None]  # (namespace, name) -> (uid, pending) at the API server


class CallerBounds:
    def __init__(self, count: Callable[[str, int], None], metrics: ExtenderMetrics, lookups: LookupLimits | None = None,
                 waits: WaitLimits | None = None, clock: Callable[[], float] = time.monotonic) -> None:
        self._count, self._metrics = count, metrics
        self.budget = LookupBudget(lookups, clock)
        self.waits = waits = waits or WaitLimits()
        self.version_waits = WaitSlots(waits.version_in_flight)
        self.node_waits = WaitSlots(waits.nodes_in_flight)

    def slot(self, slots: WaitSlots, may_wait: bool) -> bool:
        """Whether this call may wait for the watch now (then it holds a slot to release). MustWait when
        it may and `may_wait` is false; with every slot held it is answered without waiting."""
        if slots.free():
            if not may_wait:
                raise MustWait
            if slots.acquire():
                return True
        self._count("waits_refused", 1)
        self._metrics.waits_refused.inc()
        return False

    def lookup(self, may_wait: bool) -> bool:
        """Whether this call may send one request to the API server now (it took a token). MustWait
        when it may and `may_wait` is false; with the bucket empty the caller trusts its watch."""
        bucket = self.budget.bucket
        if bucket.available():
            if not may_wait:
                raise MustWait
            if bucket.take():
                self._metrics.api_lookups.labels("asked").inc()
                return True
        self._count("api_lookups_refused", 1)
        self._metrics.api_lookups.labels("refused").inc()
        return False

    def pending_at_api(self, pod_of: PodOf, namespace: str, name: str, uid: str, may_wait: bool) -> bool:
        """Whether the API server has this pod, under this uid, pending: False too when it was asked
        for lately and had not, or when the lookup budget is spent. A real pod the watch has not
        shown then loses its prediction, as when the API server cannot be reached."""
        key = (namespace, name, uid)
        if key in self.budget.absent:
            self._count("api_lookups_remembered", 1)
            self._metrics.api_lookups.labels("remembered").inc()
            return False
        if not self.lookup(may_wait):
            return False
        found = pod_of(namespace, name)
        self._count("asked_api_for_pod", 1)
        if found != (uid, True):
            self.budget.absent.add(key)
            return False
        return True
