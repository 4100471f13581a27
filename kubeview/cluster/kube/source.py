"""`KubeSource`: a real cluster through the Kubernetes API (the `ClusterSource` for kubeconfigs).

One informer thread per kind (nodes, pods, replicasets, deployments, statefulsets, jobs, the DRA
kinds where discovery serves `resource.k8s.io/v1` (see kube/dra.py), the gang kinds discovery serves
(upstream, KAI, Kueue, Volcano: kube/gangs.py; optional like DRA), the autoscalers' objects (Karpenter's
NodePools and NodeClaims where served, CA's status ConfigMap: kube/autoscaling.py; optional), and core/v1 events with
`events=True`, as the TUI asks; see kube/watch.py for the loop), all emitting into the one `emit`
callback, which must be thread-safe (a queue, or Textual's `post_message`). Events, Jobs and the
DRA kinds are optional: when they cannot be read (a 403), the view goes on without them, and
`Scope.unavailable` says why per kind (for DRA also the title and `Scope.partial`: an older ClusterRole
must not stop kubeview on a cluster that serves DRA). The kinds are one table, `KUBE_KINDS`. Actions: `scale` patches a workload's `scale` subresource; `set_parallelism` and
`suspend_job` merge-patch a Job's `spec` (kube/jobs.py). Where Kueue's ClusterQueues are served, a poller
thread reads Kueue's queue positions while `want_positions` is set (kube/queue_positions.py).
`api_client` is the configured `kubernetes.client.ApiClient`, for callers that need more of the API
(server-side apply, the service proxy).
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

import urllib3.exceptions
from kubernetes import client
from kubernetes.client.exceptions import ApiException

from kubeview.cluster.kube.autoscaling import (
    CA_SELECTOR,
    KARPENTER_API,
    KARPENTER_KINDS,
    STATUS_NAMESPACE,
    served_autoscaling_kinds,
)
from kubeview.cluster.kube.config import connect, kubeconfig_available
from kubeview.cluster.kube.dra import DRA_API, OPTIONAL_API, served_dra_kinds
from kubeview.cluster.kube.errors import NETWORK_ERRORS, describe_call_error, describe_connection_error
from kubeview.cluster.kube.gangs import GangApi, lister, served_gang_apis
from kubeview.cluster.kube.jobs import patch_job
from kubeview.cluster.kube.queue_positions import PositionSettings, QueuePositionPoller
from kubeview.cluster.kube.raw import RawApi, response_json
from kubeview.cluster.kube.version import server_version
from kubeview.cluster.kube.watch import Fatal, Informer, KindSpec, Link, WatchSettings
from kubeview.cluster.source import ActionError, SourceError
from kubeview.model.autoscaling.store import CA_STATUS
from kubeview.model.events import ConnectionState, Listed, Scope, SourceEvent
from kubeview.model.queues.objects import KIND_CLUSTER_QUEUE
from kubeview.model.quota.store import QUOTA_KIND
from kubeview.model.server_version import ServerVersion, not_served

__all__ = ["KubeSource", "WatchSettings", "kubeconfig_available"]

log = logging.getLogger(__name__)

KINDS = ("Node", "Pod", "ReplicaSet", "Deployment", "StatefulSet", "Job", QUOTA_KIND)



@dataclass(frozen=True, slots=True)
class KubeKind:
    """One kind this source lists and watches: its row (docs/architecture.md, "Adding a kind"). Lists
    and watches go through raw.RawApi (by path): the generated classes cost seconds to import."""

    plural: str  # "pods", for messages
    api: str  # the API class name, e.g. "CoreV1Api"
    list_all: str  # the list of all namespaces (or of a cluster-scoped kind)
    list_namespaced: str | None = None  # with -n: the namespace's list (None: read cluster-wide)
    scale: str | None = None  # the scale subresource's patch, for kinds with replicas
    # optional: a 403 or another failure leaves it out (`Scope.unavailable` says why), never stops the
    # view: a ClusterRole from before kubeview read it must not stop kubeview from starting
    optional: bool = False
    wide_first: bool = False  # with -n, still read cluster-wide when allowed (node figures need it)
    in_figures: bool = False  # node figures count it: left out, the title and `Scope.partial` say so
    # one object, always read in this namespace with this field selector (CA's status ConfigMap)
    only_in: str | None = None
    field_selector: str | None = None


# The source's table of kinds (the model's is `ClusterModel.kinds`); nodes are cluster-scoped. The
# gang kinds are rows of kube/gangs.py's CANDIDATES (custom objects, found through discovery).
KUBE_KINDS: dict[str, KubeKind] = {
    "Node": KubeKind("nodes", "CoreV1Api", "list_node"),
    "Pod": KubeKind("pods", "CoreV1Api", "list_pod_for_all_namespaces", "list_namespaced_pod", wide_first=True),
    "ReplicaSet": KubeKind("replicasets", "AppsV1Api", "list_replica_set_for_all_namespaces",
                           "list_namespaced_replica_set", "patch_namespaced_replica_set_scale"),
    "Deployment": KubeKind("deployments", "AppsV1Api", "list_deployment_for_all_namespaces",
                           "list_namespaced_deployment", "patch_namespaced_deployment_scale"),
    "StatefulSet": KubeKind("statefulsets", "AppsV1Api", "list_stateful_set_for_all_namespaces",
                            "list_namespaced_stateful_set", "patch_namespaced_stateful_set_scale"),
    # core/v1, not events.k8s.io/v1: the same objects (tests/fixtures/k8s/events*.json), and what
    # kubectl describe reads; see docs/architecture.md. Read in the shown scope only (the pods on screen)
    "Event": KubeKind("events", "CoreV1Api", "list_event_for_all_namespaces", "list_namespaced_event",
                      optional=True),
    **{kind: KubeKind(plural, "ResourceV1Api", method, optional=True, in_figures=True)
       for kind, (plural, method) in DRA_API.items()},
    **{kind: KubeKind(plural, api, method, optional=True) for kind, (plural, api, method) in OPTIONAL_API.items()},
    "Job": KubeKind("jobs", "BatchV1Api", "list_job_for_all_namespaces", "list_namespaced_job", optional=True),
    # ResourceQuota (#40, model/quota/): optional, a 403 is one line (`kinds.quota_unavailable`)
    QUOTA_KIND: KubeKind("resourcequotas", "CoreV1Api", "list_resource_quota_for_all_namespaces",
                         "list_namespaced_resource_quota", optional=True),
    # the autoscalers (kube/autoscaling.py): Karpenter's where discovery serves them, CA's status always
    **{kind: KubeKind(plural, KARPENTER_API, method, optional=True)
       for kind, (plural, _, method) in KARPENTER_KINDS.items()},
    CA_STATUS: KubeKind("configmaps", "CoreV1Api", "list_namespaced_config_map", "list_namespaced_config_map",
                        optional=True, only_in=STATUS_NAMESPACE, field_selector=CA_SELECTOR),
}
MERGE_PATCH = "application/merge-patch+json"


class KubeSource:
    """List+watch of a real cluster. Raises `SourceError` at construction for kubeconfig problems and
    from `run` for failures on the wire before or while syncing (unreachable, 401, RBAC)."""

    is_local = False

    def __init__(self, kubeconfig: str | None = None, context: str | None = None, namespace: str | None = None,
                 *, settings: WatchSettings | None = None, kinds: tuple[str, ...] = KINDS,
                 events: bool = False, dra: bool = True, gangs: bool = True, autoscaling: bool = True) -> None:
        self.connection = connect(kubeconfig, context)
        self.api_client: client.ApiClient = self.connection.api_client
        self.server = self.connection.server
        self.namespace = namespace or None
        self.settings = settings or WatchSettings.from_env()
        self.kinds = kinds  # what must sync before the view is whole (snapshot waits for these)
        self.events = events  # also list+watch Events (optional: never holds up or fails the view)
        self.dra = dra  # also watch the DRA kinds the server serves (decided when `run` starts)
        # With -n, pods are still read cluster-wide when RBAC allows it, so node figures count every
        # pod; only the namespace's are listed for display (the model's `display_namespace`). When
        # the cluster-wide list is forbidden, pods are listed in the namespace only: node figures
        # then leave the other namespaces' pods out (free capacity overstated), and `partial` and
        # the title say so (`Scope` events tell the model; see `_narrowed`).
        self.title = self.connection.title + (f" (namespace {self.namespace})" if self.namespace else "")
        self.partial: str | None = None
        self.no_dra: str | None = None  # why DRA devices are not shown (their lists failed)
        self.gangs = gangs  # also watch the gang APIs the server serves (kube/gangs.py; decided in `run`)
        self.gang_apis: dict[str, GangApi] = {}
        self.autoscaling = autoscaling  # also watch NodePools/NodeClaims (where served) and CA's status
        self.unavailable: dict[str, str] = {}  # kind -> why it is not read (a 403, another failure)
        self.kubernetes: ServerVersion | None = None  # the API server's version (`_discover`)
        self.not_served: dict[str, str] = {}  # built-in APIs discovery did not list -> why
        self._informers: list[Informer] = []
        self._threads: list[threading.Thread] = []
        self._closed = threading.Event()
        self._emit: Callable[[SourceEvent], None] | None = None
        # set while someone shows Kueue's queue positions (the TUI's queue screens, snapshot): the poller asks
        self.want_positions = threading.Event()
        self.position_settings = PositionSettings()
        self._poller: QueuePositionPoller | None = None

    # -- ClusterSource -------------------------------------------------------------------------
    def run(self, emit: Callable[[SourceEvent], None], stop: threading.Event, *,
            _iterations: int | None = None) -> None:
        """Start one informer per kind and block until `stop` (or `close()`); raise SourceError on a
        fatal failure (after emitting `ConnectionState("failed", ...)`). `_iterations`: tests only,
        each informer returns after that many watch requests, and so does `run`."""
        optional = self._discover(emit)  # DRA kinds read where served, never held up for, never fatal
        emit = self._with_positions(emit)
        watched = [*self.kinds, "Event"] if self.events else list(self.kinds)
        watched += [k for k in optional if k not in watched]
        link = Link(watched, emit)
        self._emit = emit
        if self.namespace or self.kubernetes is not None or self.not_served:
            self._scope()
        halt = threading.Event()  # stop, close() or a fatal error in any informer
        failure: list[str] = []
        self._informers = [Informer(self._spec(kind), emit, halt, link, self.server, self.settings)
                           for kind in watched]
        done = threading.Semaphore(0)

        def body(inf: Informer) -> None:
            try:
                inf.run(_iterations=_iterations)
            except Exception as exc:
                if inf.spec.optional:  # no events, but the view stands
                    if not halt.is_set():
                        self._without(inf.spec, exc, link)
                    return
                if isinstance(exc, Fatal):
                    failure.append(str(exc))
                else:  # a bug: report it as the source failing, never a traceback
                    failure.append(f"Watching {inf.spec.plural} stopped unexpectedly: {exc}.")
                halt.set()
            finally:
                done.release()

        self._threads = [threading.Thread(target=body, args=(inf,), name=f"kubeview-watch-{inf.spec.plural}",
                                          daemon=True) for inf in self._informers]
        for t in self._threads:
            t.start()
        polling = threading.Thread(target=self._poller.run, args=(halt,), name="kubeview-queue-positions",
                                   daemon=True) if self._poller is not None else None
        if polling is not None:
            polling.start()
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
        if polling is not None:
            polling.join(timeout=2)
        if failure:
            link.failed(failure[0])
            raise SourceError(failure[0])

    def scale(self, kind: str, namespace: str, name: str, replicas: int) -> str:
        """Patch `KIND/NAME/scale` with `{"spec":{"replicas":N}}` (merge patch); one-line result."""
        canonical = next((k for k in ("ReplicaSet", "Deployment", "StatefulSet") if k.lower() == kind.lower()), None)
        if canonical is None:
            raise ActionError(f"Cannot scale a {kind}: only ReplicaSets, Deployments and StatefulSets have replicas.")
        row = KUBE_KINDS[canonical]
        action = f"Scaling {canonical} {namespace}/{name} to {replicas}"
        method = getattr(getattr(client, row.api)(self.api_client), row.scale or "")
        try:
            method(name, namespace, {"spec": {"replicas": int(replicas)}}, _content_type=MERGE_PATCH,
                   _preload_content=False, _request_timeout=(self.settings.connect_timeout, 30))
        except (ApiException, urllib3.exceptions.HTTPError, OSError) as exc:
            raise ActionError(describe_call_error(exc, self.server, action)) from None
        return f"{canonical} {namespace}/{name} scaled to {replicas} replica{'s' if replicas != 1 else ''}."

    def set_parallelism(self, namespace: str, name: str, parallelism: int) -> str:
        """Merge-patch the Job's `spec.parallelism`, as `kubectl patch --type=merge` (jobs/README.md, patch/)."""
        return patch_job(self.api_client, self.server, self.settings.connect_timeout, namespace, name,
                         parallelism=parallelism)

    def suspend_job(self, namespace: str, name: str, suspend: bool) -> str:
        """Merge-patch the Job's `spec.suspend`: the controller deletes its running pods, or starts anew."""
        return patch_job(self.api_client, self.server, self.settings.connect_timeout, namespace, name,
                         suspend=suspend)

    def fetch(self, kind: str, namespace: str, name: str) -> dict | None:
        """The whole object as the API server has it now (Pods only: the pod screen's on-demand read)."""
        if kind != "Pod":
            return None
        try:  # by path (raw.py): CoreV1Api's first call builds its models, ~0.5 s holding the GIL
            doc = response_json(RawApi(self.api_client, "CoreV1Api").read("pods", namespace, name, (5, 10)))
        except Exception as exc:  # gone (404), forbidden, the network: the screen keeps what the model has
            log.info("pod %s/%s: cannot read (%s)", namespace, name, getattr(exc, "reason", exc))
            return None
        return doc if isinstance(doc, dict) else None

    def close(self) -> None:
        self._closed.set()
        for inf in self._informers:
            inf.interrupt()
        for t in self._threads:
            t.join(timeout=2)
        with contextlib.suppress(Exception):
            self.api_client.close()

    # -- helpers -------------------------------------------------------------------------------
    def _with_positions(self, emit: Callable[[SourceEvent], None]) -> Callable[[SourceEvent], None]:
        """Where Kueue's ClusterQueues are served: the poller of their positions (started with the
        informers, stopped with them), and an `emit` that lets it see the ClusterQueues go by."""
        if KIND_CLUSTER_QUEUE not in self.gang_apis:
            return emit
        self._poller = poller = QueuePositionPoller(self.api_client, emit, self.want_positions, self.position_settings)

        def seen(event: SourceEvent) -> None:
            poller.see(event)
            emit(event)

        return seen

    def _discover(self, emit: Callable[[SourceEvent], None]) -> tuple[str, ...]:
        """Ask discovery which DRA and gang kinds are served (adding them to `kinds`); the optional
        DRA kinds. The first request of a run: a server that cannot be read fails here, once, after
        at most `connect_timeout` (a handshake or an answer that never comes included), unless
        `give_up_before_sync` is off (then the informers retry and report)."""
        timeout = self.settings.connect_timeout
        try:
            required, optional = served_dra_kinds(self.api_client, timeout) if self.dra else ((), ())
            self.kinds = tuple(self.kinds) + tuple(k for k in required if k not in self.kinds)
            if self.gangs:
                self.gang_apis = served_gang_apis(self.api_client, timeout)
                self.kinds = tuple(self.kinds) + tuple(k for k in self.gang_apis if k not in self.kinds)
            if self.autoscaling:
                scaling = served_autoscaling_kinds(self.api_client, timeout)
                self.kinds = tuple(self.kinds) + tuple(k for k in scaling if k not in self.kinds)
            self.kubernetes = server_version(self.api_client, timeout)
            self.not_served = not_served(self.kinds, gangs=self.gangs, dra=self.dra)
        except NETWORK_ERRORS as exc:
            detail = describe_connection_error(exc, self.server)
            if self.settings.give_up_before_sync:
                emit(ConnectionState("failed", time.time(), detail))
                raise SourceError(detail) from None
            log.warning("discovery failed (%s): reading without the DRA and gang kinds", detail)
            return ()
        return optional

    def _spec(self, kind: str) -> KindSpec:
        unavailable = partial(self._unavailable, kind)
        gang = self.gang_apis.get(kind)
        if gang is not None:  # cluster-wide even with -n, like DRA claims; optional: never stops the view
            return KindSpec(kind, f"{gang.plural}.{gang.group}", lister(self.api_client, gang), optional=True,
                            on_unavailable=unavailable)
        row = KUBE_KINDS[kind]
        api = RawApi(self.api_client, row.api)
        on = unavailable if row.optional else None
        if row.only_in is not None and row.list_namespaced:  # one namespace whatever -n says
            method, where, selector = getattr(api, row.list_namespaced), row.only_in, row.field_selector

            def only(**kwargs: object) -> object:
                return method(where, field_selector=selector, **kwargs)

            return KindSpec(kind, row.plural, only, where, optional=row.optional, on_unavailable=on)
        if self.namespace and row.list_namespaced:
            in_namespace = self._namespaced(kind, row.plural, getattr(api, row.list_namespaced))
            in_namespace.optional, in_namespace.on_unavailable = row.optional, on
            if not row.wide_first:
                return in_namespace
            # cluster-wide first (node figures need every pod), the namespace on a 403
            return KindSpec(kind, row.plural, getattr(api, row.list_all), fallback=in_namespace,
                            on_fallback=self._narrowed, optional=row.optional, on_unavailable=on)
        return KindSpec(kind, row.plural, getattr(api, row.list_all), optional=row.optional, on_unavailable=on)

    def _namespaced(self, kind: str, plural: str, method: Callable[..., object]) -> KindSpec:
        ns = self.namespace

        def call(**kwargs: object) -> object:
            return method(ns, **kwargs)

        return KindSpec(kind, plural, call, ns or "")

    def _unavailable(self, kind: str, why: str) -> None:
        """An optional kind cannot be read (a 403 or another failure): the view goes on without it, and
        `Scope.unavailable` says why (once per kind). A kind node figures count (DRA) also marks the
        title and `partial`: GPU figures leave its devices out."""
        row = KUBE_KINDS.get(kind)
        if row is not None and row.in_figures and self.no_dra is None:  # the first kind's reason stands for all
            self.no_dra = f"DRA devices are not shown, so GPU figures leave them out: {why}"
        self.unavailable[kind] = why
        self._scope()

    def _without(self, spec: KindSpec, exc: BaseException, link: Link) -> None:
        """An optional kind failed other than by a 403 (that is the Informer's): go on without it, and
        let its `on_unavailable` say why (under its own kind: a Job failure is not an Events one)."""
        log.info("%s unavailable: %s", spec.plural, exc)
        link.drop(spec.kind)
        if self._emit is not None:
            self._emit(Listed(spec.kind, []))
        if spec.on_unavailable is not None:
            spec.on_unavailable(str(exc))

    def _scope(self) -> None:
        if self._emit is None:
            return
        title, partial = self.title, self.partial
        if self.no_dra is not None:
            title += " (DRA devices not shown)"
            partial = f"{partial}; {self.no_dra}" if partial else self.no_dra
        self._emit(Scope(title, self.namespace, partial, dict(self.unavailable),
                         self.kubernetes.text if self.kubernetes is not None else None, dict(self.not_served)))

    def _narrowed(self) -> None:
        """The cluster-wide pod list was forbidden: pods come from the namespace only from now on."""
        self.title = f"{self.connection.title} (namespace {self.namespace}; node figures partial)"
        self.partial = (f"pods are listed in namespace {self.namespace} only (-n; listing pods in all "
                        "namespaces is forbidden), so node figures leave out other namespaces' pods")
        self._scope()
