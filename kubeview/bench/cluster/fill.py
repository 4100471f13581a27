"""Filling a real cluster for `kubeview bench cluster`, and emptying it again.

Built on bench scheduler's KubeBench (its refusal of foreign nodes, parallel create calls, one-line
errors, cleanup on the way out whatever happens, Ctrl-C and SIGTERM included), without its pods
watch: the bench must not hold 150,000 pods itself while it measures others doing so. Counts come
from the API server (a list of one item and its remainingItemCount).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable

from kubernetes import client

from kubeview.bench.cluster.objects import plan
from kubeview.bench.scheduler.kube import BenchError, KubeBench, KubeOptions, _sigterm_as_interrupt
from kubeview.bench.scheduler.kube_plan import RUN_LABEL, bench_namespace, namespace_name
from kubeview.cluster.kube.config import Connection

SLICES = ("resource.k8s.io", "v1", "resourceslices")


class ClusterFill(KubeBench):
    """The run's nodes (kwok), ResourceSlices and pods; `with fill:` removes them on the way out."""

    def __init__(self, conn: Connection, options: KubeOptions, say: Callable[[str], None], keep: bool = False) -> None:
        super().__init__(conn, options, say)
        self.keep = keep
        self.bound = 0  # pods created with a nodeName
        self.pod_names: list[str] = []  # every pod created (the churn patches them)
        self._made_slices = False

    def __enter__(self) -> ClusterFill:
        self._interrupt = _sigterm_as_interrupt()
        self._interrupt.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        try:
            if self.keep:
                self.say(f"--keep: left namespace {self.namespace} and the nodes labelled {RUN_LABEL}={self.run_id} "
                         f"(remove: kubectl delete ns {self.namespace}; kubectl delete nodes,resourceslices "
                         f"-l {RUN_LABEL}={self.run_id})")
                self._stop.set()
                self._pool.shutdown(wait=True, cancel_futures=True)
            else:
                self.cleanup()
        finally:
            self._interrupt.__exit__(None, None, None)

    def fill(self, nodes: int, pods: int) -> None:
        """Create everything and wait until the API server lists it all."""
        self.preflight()
        made, slices, pod_objs = plan(self.run_id, nodes, pods)
        self.bound = sum(1 for p in pod_objs if p["spec"].get("nodeName"))
        self.pod_names = [p["metadata"]["name"] for p in pod_objs]
        self._call(f"Creating namespace {self.namespace}", self.core.create_namespace, bench_namespace(self.run_id))
        self._made_namespace = True
        self._create_nodes(made)
        if slices:
            self._made_slices = True
            self._all(lambda s: self._call(f"Creating ResourceSlice {s['metadata']['name']}",
                                           self.custom.create_cluster_custom_object, *SLICES, s),
                      slices, "slices")
        start = time.monotonic()
        self._all(self._create_pod, pod_objs, "pods")
        self.say(f"  created {len(pod_objs)} pods ({self.bound} bound by nodeName) in {time.monotonic() - start:.1f} s")
        self._wait_counts(nodes, pods)

    def adopt(self, run: str, nodes: int, pods: int) -> None:
        """Measure on what an earlier run left with --keep: the same plan gives its pod names and bound
        count; the API server must list exactly its nodes and pods. Left as it was on the way out."""
        self.run_id, self.namespace, self.keep = run, namespace_name(run), True
        have_nodes, have_pods = len(self.node_names()), self.pod_count()
        if (have_nodes, have_pods) != (nodes, pods):
            raise BenchError(f"run {run} lists {have_nodes:,} nodes and {have_pods:,} pods; --nodes {nodes:,} --pods "
                             f"{pods:,} must be what it was filled with (its first line said so)")
        _, _, pod_objs = plan(run, nodes, pods)
        self.bound = sum(1 for p in pod_objs if p["spec"].get("nodeName"))
        self.pod_names = [p["metadata"]["name"] for p in pod_objs]

    def pod_count(self) -> int:
        return self._count("Counting pods", self.core.list_namespaced_pod, self.namespace)

    def cluster_pod_count(self) -> int:
        """Every pod of every namespace (what k9s's Pods view in all namespaces counts)."""
        return self._count("Counting the cluster's pods", self.core.list_pod_for_all_namespaces)

    def _count(self, what: str, call: Callable[..., object], *args: object) -> int:
        """A list of one item and its remainingItemCount: the count without the list."""
        data = json.loads(self._call(what, call, *args, limit=1))
        return len(data.get("items") or []) + int((data.get("metadata") or {}).get("remainingItemCount") or 0)

    def node_names(self) -> list[str]:
        data = json.loads(self._call("Listing the bench's nodes", self.core.list_node,
                                     label_selector=f"{RUN_LABEL}={self.run_id}"))
        return [n["metadata"]["name"] for n in data.get("items") or []]

    def _wait_counts(self, nodes: int, pods: int, timeout: float = 300.0) -> None:
        deadline = time.monotonic() + timeout
        while True:
            have_nodes, have_pods = len(self.node_names()), self.pod_count()
            if have_nodes >= nodes and have_pods >= pods:
                return
            if time.monotonic() > deadline:
                raise BenchError(f"the API server lists {have_nodes}/{nodes} nodes and {have_pods}/{pods} pods "
                                 f"{timeout:.0f} s after they were created")
            time.sleep(0.5)

    # -- cleanup (KubeBench.cleanup calls these) -------------------------------------------------
    def _delete_pods(self) -> None:
        """Delete the run's pods and wait until none is left. 20,000 pods at once can outlast the API
        server's 60 s request timeout (the reply is a reset or a 504; the server goes on deleting),
        and while it deletes it may drop other calls: each failure is waited out and asked again
        until the deadline, then said; a connection refused (the API server gone) is said at once."""
        deadline = time.monotonic() + max(self.options.settle, 300.0)
        last: BenchError | None = None
        while True:
            try:
                self._call(f"Deleting the pods in {self.namespace}", self.core.delete_collection_namespaced_pod,
                           self.namespace, grace_period_seconds=0)
                while self.pod_count():
                    if time.monotonic() > deadline:
                        raise BenchError(f"pods are left in {self.namespace} {max(self.options.settle, 300.0):.0f} s "
                                         "after their deletion")
                    time.sleep(0.5)
                return
            except BenchError as exc:
                last = exc
                if exc.unreachable or time.monotonic() > deadline:  # a server that is gone is not asked again
                    raise last from None
                time.sleep(2.0)

    def _delete_nodes(self) -> None:
        if self._made_slices:
            self._call("Deleting the bench's ResourceSlices", self.custom.delete_collection_cluster_custom_object,
                       *SLICES, label_selector=f"{RUN_LABEL}={self.run_id}")
            self._made_slices = False
        super()._delete_nodes()

    def _delete_namespace(self) -> None:
        super()._delete_namespace()
        deadline = time.monotonic() + self.options.settle
        while time.monotonic() < deadline:
            try:
                self.core.read_namespace(self.namespace, _request_timeout=(10, 30))
            except client.exceptions.ApiException as exc:
                if exc.status == 404:
                    return
                raise
            time.sleep(0.5)
        raise BenchError(f"namespace {self.namespace} is still terminating {self.options.settle:.0f} s after "
                         "its deletion")
