"""Pod events at a target rate for `bench cluster`: label patches on the run's pods from worker
threads, paced against the clock (call i is due at i / rate; behind schedule, the workers call as
fast as they can). The achieved rate is what is reported, not the target. Each value written is
`<run>-<i>` with a run of its own, as the Go churn's (tools/churn): a patch that writes the value a pod
already holds is no change and makes no event, and `bench cluster --reuse` churns the same pods again."""

from __future__ import annotations

import itertools
import threading
import time
from concurrent.futures import ThreadPoolExecutor

from kubernetes import client

from kubeview.cluster.kube.config import Connection
from kubeview.cluster.kube.raw import raw_response

LABEL = "kubeview.io/bench-churn"


class Churn:
    def __init__(self, conn: Connection, namespace: str, names: list[str], rate: float, workers: int = 16) -> None:
        self.core = client.CoreV1Api(conn.api_client)
        self.namespace, self.names, self.rate, self.workers = namespace, names, rate, workers
        self.done = self.errors = 0
        self.achieved = 0.0  # events per second, once stopped
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._pool: ThreadPoolExecutor | None = None
        self._t0 = 0.0
        self.run = format(time.time_ns(), "x")  # every value this churn writes is new to the pods

    def start(self) -> Churn:
        if not self.names or self.rate <= 0:
            return self
        self._t0 = time.monotonic()
        slots = itertools.count()
        self._pool = ThreadPoolExecutor(self.workers, thread_name_prefix="kubeview-churn")
        for _ in range(self.workers):
            self._pool.submit(self._work, slots)
        return self

    def stop(self) -> float:
        """Stop; the achieved events per second."""
        self._stop.set()
        if self._pool is not None:
            self._pool.shutdown(wait=True)
            self.achieved = self.done / max(1e-9, time.monotonic() - self._t0)
        return self.achieved

    def _work(self, slots: itertools.count) -> None:
        while not self._stop.is_set():
            i = next(slots)
            wait = self._t0 + i / self.rate - time.monotonic()
            if wait > 0:
                self._stop.wait(wait)
            if self._stop.is_set():
                return
            name = self.names[i % len(self.names)]
            try:
                resp = self.core.patch_namespaced_pod(name, self.namespace, {"metadata": {"labels": {LABEL: f"{self.run}-{i}"}}},
                                                      _preload_content=False, _request_timeout=(10, 30))
                raw_response(resp).release_conn()
                ok = True
            except Exception:  # noqa: BLE001 - a failed patch is counted, not fatal to the bench
                ok = False
            with self._lock:
                if ok:
                    self.done += 1
                else:
                    self.errors += 1
