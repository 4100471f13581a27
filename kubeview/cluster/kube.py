"""`KubeSource`: a real cluster through the Kubernetes API (the `ClusterSource` for kubeconfigs).

One informer thread per kind (nodes, pods, replicasets, deployments, statefulsets, jobs;
see kube_watch.py for the loop), all emitting into the one `emit` callback, which must be thread-safe
(a queue, or Textual's `post_message`). Actions: `scale` patches a workload's `scale` subresource;
`set_parallelism` and `suspend_job` merge-patch a Job's `spec` (kube_jobs.py).
`api_client` is the configured `kubernetes.client.ApiClient`, for callers that need more of the API
(server-side apply, the service proxy).
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable

import urllib3.exceptions
from kubernetes import client
from kubernetes.client.exceptions import ApiException

from kubeview.cluster.kube_config import connect, kubeconfig_available
from kubeview.cluster.kube_errors import describe_call_error
from kubeview.cluster.kube_jobs import patch_job
from kubeview.cluster.kube_watch import Fatal, Informer, KindSpec, Link, WatchSettings
from kubeview.cluster.source import ActionError, SourceError
from kubeview.model.events import Scope, SourceEvent

__all__ = ["KubeSource", "WatchSettings", "kubeconfig_available"]

KINDS = ("Node", "Pod", "ReplicaSet", "Deployment", "StatefulSet", "Job")

# kind -> (plural, API class, all-namespaces list, namespaced list, scale patch); nodes are cluster-scoped
_API = {
    "Node": ("nodes", client.CoreV1Api, "list_node", None, None),
    "Pod": ("pods", client.CoreV1Api, "list_pod_for_all_namespaces", "list_namespaced_pod", None),
    "ReplicaSet": ("replicasets", client.AppsV1Api, "list_replica_set_for_all_namespaces",
                   "list_namespaced_replica_set", "patch_namespaced_replica_set_scale"),
    "Deployment": ("deployments", client.AppsV1Api, "list_deployment_for_all_namespaces",
                   "list_namespaced_deployment", "patch_namespaced_deployment_scale"),
    "StatefulSet": ("statefulsets", client.AppsV1Api, "list_stateful_set_for_all_namespaces",
                    "list_namespaced_stateful_set", "patch_namespaced_stateful_set_scale"),
    "Job": ("jobs", client.BatchV1Api, "list_job_for_all_namespaces", "list_namespaced_job", None),
}
MERGE_PATCH = "application/merge-patch+json"


class KubeSource:
    """List+watch of a real cluster. Raises `SourceError` at construction for kubeconfig problems and
    from `run` for failures on the wire before or while syncing (unreachable, 401, RBAC)."""

    is_local = False

    def __init__(self, kubeconfig: str | None = None, context: str | None = None, namespace: str | None = None,
                 *, settings: WatchSettings | None = None, kinds: tuple[str, ...] = KINDS) -> None:
        self.connection = connect(kubeconfig, context)
        self.api_client: client.ApiClient = self.connection.api_client
        self.server = self.connection.server
        self.namespace = namespace or None
        self.settings = settings or WatchSettings()
        self.kinds = kinds
        # With -n, pods are still read cluster-wide when RBAC allows it, so node figures count every
        # pod; only the namespace's are listed for display (the model's `display_namespace`). When
        # the cluster-wide list is forbidden, pods are listed in the namespace only: node figures
        # then leave the other namespaces' pods out (free capacity overstated), and `partial` and
        # the title say so (`Scope` events tell the model; see `_narrowed`).
        self.title = self.connection.title + (f" (namespace {self.namespace})" if self.namespace else "")
        self.partial: str | None = None
        self._informers: list[Informer] = []
        self._threads: list[threading.Thread] = []
        self._closed = threading.Event()
        self._emit: Callable[[SourceEvent], None] | None = None

    # -- ClusterSource -------------------------------------------------------------------------
    def run(self, emit: Callable[[SourceEvent], None], stop: threading.Event, *,
            _iterations: int | None = None) -> None:
        """Start one informer per kind and block until `stop` (or `close()`); raise SourceError on a
        fatal failure (after emitting `ConnectionState("failed", ...)`). `_iterations`: tests only,
        each informer returns after that many watch requests, and so does `run`."""
        link = Link(list(self.kinds), emit)
        self._emit = emit
        if self.namespace:
            emit(Scope(self.title, self.namespace, self.partial))
        halt = threading.Event()  # stop, close() or a fatal error in any informer
        failure: list[str] = []
        self._informers = [Informer(self._spec(kind), emit, halt, link, self.server, self.settings)
                           for kind in self.kinds]
        done = threading.Semaphore(0)

        def body(inf: Informer) -> None:
            try:
                inf.run(_iterations=_iterations)
            except Fatal as exc:
                failure.append(str(exc))
                halt.set()
            except Exception as exc:  # a bug: report it as the source failing, never a traceback
                failure.append(f"Watching {inf.spec.plural} stopped unexpectedly: {exc}.")
                halt.set()
            finally:
                done.release()

        self._threads = [threading.Thread(target=body, args=(inf,), name=f"kubeview-watch-{inf.spec.plural}",
                                          daemon=True) for inf in self._informers]
        for t in self._threads:
            t.start()
        finished = 0
        while not failure and not stop.is_set() and not self._closed.is_set():
            if done.acquire(timeout=0.1):
                finished += 1
                if finished == len(self._threads):
                    break
        halt.set()
        for inf in self._informers:
            inf.interrupt()
        for t in self._threads:
            t.join(timeout=2)
        if failure:
            link.failed(failure[0])
            raise SourceError(failure[0])

    def scale(self, kind: str, namespace: str, name: str, replicas: int) -> str:
        """Patch `KIND/NAME/scale` with `{"spec":{"replicas":N}}` (merge patch); one-line result."""
        canonical = next((k for k in ("ReplicaSet", "Deployment", "StatefulSet") if k.lower() == kind.lower()), None)
        if canonical is None:
            raise ActionError(f"Cannot scale a {kind}: only ReplicaSets, Deployments and StatefulSets have replicas.")
        plural, api_cls, _, _, patch = _API[canonical]
        action = f"Scaling {canonical} {namespace}/{name} to {replicas}"
        method = getattr(api_cls(self.api_client), patch)
        try:
            method(name, namespace, {"spec": {"replicas": int(replicas)}}, _content_type=MERGE_PATCH,
                   _preload_content=False, _request_timeout=(self.settings.connect_timeout, 30))
        except (ApiException, urllib3.exceptions.HTTPError, OSError) as exc:
            raise ActionError(describe_call_error(exc, self.server, action)) from None
        return f"{canonical} {namespace}/{name} scaled to {replicas} replica{'s' if replicas != 1 else ''}."

    def set_parallelism(self, namespace: str, name: str, parallelism: int) -> str:
        """Merge-patch the Job's `spec.parallelism`, as `kubectl patch --type=merge` (jobs/README.md, patch/)."""
        return patch_job(self, namespace, name, parallelism=parallelism)

    def suspend_job(self, namespace: str, name: str, suspend: bool) -> str:
        """Merge-patch the Job's `spec.suspend`: the controller deletes its running pods, or starts anew."""
        return patch_job(self, namespace, name, suspend=suspend)

    def close(self) -> None:
        self._closed.set()
        for inf in self._informers:
            inf.interrupt()
        for t in self._threads:
            t.join(timeout=2)
        with contextlib.suppress(Exception):
            self.api_client.close()

    # -- helpers -------------------------------------------------------------------------------
    def _spec(self, kind: str) -> KindSpec:
        plural, api_cls, all_ns, namespaced, _ = _API[kind]
        api = api_cls(self.api_client)
        if self.namespace and namespaced:
            method = getattr(api, namespaced)
            ns = self.namespace

            def call(**kwargs: object) -> object:
                return method(ns, **kwargs)

            in_namespace = KindSpec(kind, plural, call, ns, optional=kind == "Job")
            if kind != "Pod":
                return in_namespace
            # pods: cluster-wide first (node figures need every pod), the namespace on a 403
            return KindSpec(kind, plural, getattr(api, all_ns), fallback=in_namespace, on_fallback=self._narrowed)
        return KindSpec(kind, plural, getattr(api, all_ns), optional=kind == "Job")

    def _narrowed(self) -> None:
        """The cluster-wide pod list was forbidden: pods come from the namespace only from now on."""
        self.title = f"{self.connection.title} (namespace {self.namespace}; node figures partial)"
        self.partial = (f"pods are listed in namespace {self.namespace} only (-n; listing pods in all "
                        "namespaces is forbidden), so node figures leave out other namespaces' pods")
        if self._emit is not None:
            self._emit(Scope(self.title, self.namespace, self.partial))
