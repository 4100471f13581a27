"""What the extender counts: requests, latency percentiles per verb, and the same as Prometheus series.

Each server gets its own `CollectorRegistry`, so several extenders in one process (tests, the local
cluster beside a real one) never share or clash on series.
"""

from __future__ import annotations

import threading
from collections import deque

import numpy as np
from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest

_BUCKETS = (0.0002, 0.0005, 0.001, 0.002, 0.003, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1.0)


class LatencyWindow:
    """The last `size` durations of one verb (wall clock, and the handling thread's CPU time, which a
    busy or shared machine cannot inflate); percentiles on demand."""

    def __init__(self, size: int = 4096) -> None:
        self._values: deque[float] = deque(maxlen=size)
        self._cpu: deque[float] = deque(maxlen=size)
        self._lock = threading.Lock()
        self.count = 0

    def add(self, seconds: float, cpu_seconds: float | None = None) -> None:
        with self._lock:
            self._values.append(seconds)
            if cpu_seconds is not None:
                self._cpu.append(cpu_seconds)
            self.count += 1

    def summary(self) -> dict[str, float | int]:
        with self._lock:
            values = np.fromiter(self._values, dtype=np.float64)
            cpu = np.fromiter(self._cpu, dtype=np.float64)
            count = self.count
        if values.size == 0:
            return {"count": count}
        p50, p90, p99 = np.percentile(values, [50, 90, 99])
        out = {"count": count, "p50_ms": round(float(p50) * 1e3, 3), "p90_ms": round(float(p90) * 1e3, 3),
               "p99_ms": round(float(p99) * 1e3, 3), "max_ms": round(float(values.max()) * 1e3, 3)}
        if cpu.size:
            c50, c99 = np.percentile(cpu, [50, 99])
            out |= {"cpu_p50_ms": round(float(c50) * 1e3, 3), "cpu_p99_ms": round(float(c99) * 1e3, 3)}
        return out


class ExtenderMetrics:
    def __init__(self) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        self.requests = Counter("kubeview_extender_requests", "Extender HTTP requests by verb and status code",
                                ["verb", "code"], registry=self.registry)
        self.duration = Histogram("kubeview_extender_request_duration_seconds",
                                  "Time to answer one filter/prioritize call (decode, evaluate, encode)",
                                  ["verb"], buckets=_BUCKETS, registry=self.registry)
        self.nodes_failed = Counter("kubeview_extender_filtered_out_nodes",
                                    "Nodes the filter verb rejected", registry=self.registry)
        self.unknown_nodes = Counter("kubeview_extender_unknown_nodes",
                                     "Node names the cluster model did not know (passed, scored 0)",
                                     registry=self.registry)
        self.api_lookups = Counter("kubeview_extender_api_lookups",
                                   "API-server requests callers asked of the extender (a pod its watch has not "
                                   "shown, a node's pods): asked, refused (budget spent), remembered (absent lately)",
                                   ["outcome"], registry=self.registry)
        self.waits_refused = Counter("kubeview_extender_waits_refused",
                                     "Calls answered without waiting for the watch: every wait slot was held",
                                     registry=self.registry)
        self.config_changes = Counter("kubeview_extender_config_changes", "Accepted PUT /config",
                                      registry=self.registry)
        self.assumed = Gauge("kubeview_extender_assumed_pods",
                             "Pods placed by the extender that the cluster model does not show bound yet",
                             registry=self.registry)
        self.policy = Gauge("kubeview_extender_policy", "1 for the active packing policy", ["policy"],
                            registry=self.registry)
        self.windows: dict[str, LatencyWindow] = {}
        self._lock = threading.Lock()

    def observe(self, verb: str, code: int, seconds: float, cpu_seconds: float | None = None) -> None:
        self.requests.labels(verb, str(code)).inc()
        if verb in ("filter", "prioritize", "bind"):
            self.duration.labels(verb).observe(seconds)
        with self._lock:
            window = self.windows.get(verb)
            if window is None:
                window = self.windows[verb] = LatencyWindow()
        window.add(seconds, cpu_seconds)

    def set_policy(self, policy: str, all_policies: tuple[str, ...]) -> None:
        for p in all_policies:
            self.policy.labels(p).set(1 if p == policy else 0)

    def latency(self) -> dict[str, dict]:
        with self._lock:
            windows = dict(self.windows)
        return {verb: w.summary() for verb, w in sorted(windows.items())}

    def exposition(self) -> bytes:
        return generate_latest(self.registry)
