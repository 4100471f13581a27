"""A render on a real cluster: the counterpart of `LocalRenderJob`, through the Kubernetes API only.

`start()` server-side-applies the objects `kubeview render-manifests` prints (field manager
`kubeview`; the Namespace only if it is missing, so a least-privileged kubeview works in a namespace an
administrator prepared). `poll()` lists the render's pods and, once the producer is Ready, reads
its `/status` through the API server's service proxy, so no port-forward or NodePort is needed; pods
that cannot start (unschedulable, image pull failures, crash loops) come back with the reason the
cluster gives, and a producer that cannot start ends the render with that reason. When the render
is finished the image is downloaded through the same proxy and written to `--output`. `stop()`
deletes what `start()` created unless `keep` is set.

Every request goes through the kubeview `ApiClient` of the kube source (its kubeconfig, token
refresh, TLS settings), with short timeouts; nothing here blocks for long, so a TUI worker can poll.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from collections.abc import Callable
from typing import Any

import urllib3.exceptions
from kubernetes import client
from kubernetes.client.exceptions import ApiException

from kubeview.cluster.kube.errors import describe_api_error, describe_connection_error, parse_status
from kubeview.model.kube_events import EventLog
from kubeview.render import manifests as m
from kubeview.render.local import RenderError, RenderProgress, RenderSettings
from kubeview.render.pod_state import (
    FATAL_FOR_PRODUCER,
    pod_component,
    pod_phase,
    pod_problem,
    pod_ready,
    pod_restarts,
    pod_running,
    pod_terminating,
    stuck_reason,
    workload_problem,
)
from kubeview.render.pod_wait import pod_waiting, with_event
from kubeview.render.status import RenderStatus, StatusError
from kubeview.render.status import parse_status as parse_render_status
from renderer.image import OutputError, write_bytes_or_keep

APPLY_PATCH = "application/apply-patch+yaml"
MERGE_PATCH = "application/merge-patch+json"
POD_INTERVAL = 2.0  # seconds between pod lists (poll() is called more often; it answers from the last one)
STATUS_INTERVAL = 1.0  # seconds between /status reads through the proxy
TIMEOUT = (5.0, 30.0)  # connect, read
IMAGE_TIMEOUT = (5.0, 120.0)
class ApiError(Exception):
    def __init__(self, status: int, body: bytes, message: str) -> None:
        super().__init__(message)
        self.status, self.body = status, body


# -- the job -----------------------------------------------------------------------------------------

class KubeRenderJob:
    """One render on a real cluster; see the module docstring. Same interface as `LocalRenderJob`."""

    def __init__(self, api_client: client.ApiClient, settings: RenderSettings, *, gpu: int = 0,
                 image: str = "kubeview:latest", keep: bool = False, token: str | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.api = api_client
        self.settings = settings
        self.gpu, self.image, self.keep = gpu, image, keep
        self.token = token
        self.clock = clock
        self.server = api_client.configuration.host
        self.spec: m.RenderSpec | None = None
        self.applied: list[dict] = []  # what start() created, in order
        self.created_namespace = False
        self.started = False
        self._pods: list[dict] = []
        self._events = EventLog(per_object=5, total=500)  # the namespace's, read while pods wait
        self._pods_at = -1e9
        self._status: RenderStatus | None = None
        self._status_at = -1e9
        self._done = False
        self.problems: list[str] = []  # "pod: Reason: message" for every render pod that cannot run
        self._workload_problems: list[str] = []
        self.wanted = settings.replicas  # consumers asked for
        self._aborted = ""  # what start() deleted when it was cut short (a refusal, Ctrl-C, SIGTERM)

    @property
    def namespace(self) -> str:
        return self.settings.namespace

    # -- lifecycle ----------------------------------------------------------------------------------
    def start(self) -> None:
        """Apply the render's objects; on any failure, delete what was applied and raise RenderError."""
        from kubeview.render.job_spec import load_spec, new_token
        from renderer.scene import SceneError

        s = self.settings
        if s.raw is not None:
            raise RenderError("--raw is not available on a real cluster: the producer serves the PNG only", 2)
        if not s.output.parent.is_dir():
            raise RenderError(f"{s.output}: directory {str(s.output.parent)!r} does not exist")
        try:
            self.spec = load_spec(str(s.scene), token=self.token or new_token(), namespace=s.namespace,
                                  replicas=s.replicas, cpu=s.cpu, gpu=self.gpu, image=self.image,
                                  job_args=s.job_args)
        except (SceneError, m.SpecError) as exc:
            raise RenderError(str(exc), 2) from None
        applying = None
        try:
            for obj in m.workload_objects(self.spec):
                applying = obj
                self._apply_creating_namespace(obj)
                self.applied.append(obj)
                applying = None
        except BaseException as exc:  # a refusal, or Ctrl-C half-way: leave nothing behind, and say so (stop())
            if applying is not None and not isinstance(exc, RenderError | ApiError):
                self.applied.append(applying)  # interrupted around its request: it may exist (a 404 is fine)
            self._aborted = self._deleted_words(self._delete_applied()) if self.applied or self.created_namespace else ""
            raise
        self.started = True

    def _apply_creating_namespace(self, obj: dict) -> None:
        try:
            self._apply(obj)
        except ApiError as exc:
            details = parse_status(exc.body).get("details") or {}
            if exc.status != 404 or details.get("kind") != "namespaces" or self.created_namespace:
                raise RenderError(self._describe(exc)) from None
            ns = m.namespace_object(self.namespace)
            try:
                self._apply(ns)
            except ApiError as exc2:
                raise RenderError(f"namespace {self.namespace} does not exist and could not be created: {exc2} "
                                  "(an administrator can apply manifests/render/00-namespace-rbac.yaml)") from None
            self.created_namespace = True
            try:
                self._apply(obj)
            except ApiError as exc3:
                raise RenderError(self._describe(exc3)) from None

    def _apply(self, obj: dict) -> None:
        self._request("PATCH", m.object_path(obj), query={"fieldManager": m.FIELD_MANAGER, "force": "true"},
                      body=obj, content_type=APPLY_PATCH, action=_what("Applying", obj))

    def scale(self, replicas: int) -> str:
        """Patch the consumer ReplicaSet's `scale` subresource; one-line result."""
        path = f"/apis/apps/v1/namespaces/{self.namespace}/replicasets/{m.CONSUMER}/scale"
        action = f"Scaling ReplicaSet {self.namespace}/{m.CONSUMER} to {replicas}"
        if replicas < 0:
            raise RenderError(f"{action} failed: replicas must be 0 or more.")
        try:
            self._request("PATCH", path, body={"spec": {"replicas": int(replicas)}}, content_type=MERGE_PATCH,
                          action=action)
        except ApiError as exc:
            raise RenderError(str(exc)) from None
        self.wanted = replicas
        self._pods_at = -1e9  # show the change at the next poll
        return f"ReplicaSet {self.namespace}/{m.CONSUMER} scaled to {replicas} replica{'s' if replicas != 1 else ''}."

    def stop(self) -> str:
        """Delete what start() created (unless `keep`); never raises, returns one line saying what happened."""
        if not self.started:
            said, self._aborted = self._aborted, ""  # what a start() cut short deleted
            return said
        self.started = False
        if self.keep:
            return f"render: kept its objects in namespace {self.namespace} (--keep)"
        return self._deleted_words(self._delete_applied())

    def _deleted_words(self, failures: list[str]) -> str:
        if failures:
            return f"render: could not delete everything it created: {failures[0]}"
        what = f"namespace {self.namespace}" if self.created_namespace else f"its objects in {self.namespace}"
        return f"render: deleted {what}"

    def _delete_applied(self) -> list[str]:
        failures: list[str] = []
        targets = list(reversed(self.applied))
        if self.created_namespace:
            targets.append(m.namespace_object(self.namespace))
        for obj in targets:
            try:
                self._request("DELETE", m.object_path(obj), body={"propagationPolicy": "Background"},
                              content_type="application/json", action=_what("Deleting", obj))
            except ApiError as exc:
                if exc.status != 404:
                    failures.append(str(exc))
            except RenderError as exc:
                failures.append(str(exc))
        self.applied = []
        return failures

    def pods_left(self) -> int:
        """Render pods still there (terminating ones too), plus the namespace while a namespace this
        job created is still being deleted: the tuner waits for 0 between trials."""
        left = len(self._list_pods())
        if self.created_namespace:
            try:
                self._request("GET", f"/api/v1/namespaces/{self.namespace}", action=f"Reading namespace {self.namespace}")
                left += 1
            except ApiError as exc:
                if exc.status != 404:
                    raise RenderError(str(exc)) from None
        return left

    # -- following -----------------------------------------------------------------------------------
    def poll(self) -> RenderProgress:
        """The render now; raises RenderError when the producer cannot start or the image cannot be had."""
        now = self.clock()
        fresh = now - self._pods_at >= POD_INTERVAL
        if fresh:
            self._pods = self._list_pods()
            self._pods_at = now
        producers = [p for p in self._pods if pod_component(p) == m.PRODUCER and not pod_terminating(p)]
        consumers = [p for p in self._pods if pod_component(p) == m.CONSUMER and not pod_terminating(p)]
        if fresh:  # pods missing altogether: ask their workload why
            self._workload_problems = [
                f"{kind} {name}: {why}" for kind, name, short in (("Deployment", m.PRODUCER, not producers),
                                                                  ("ReplicaSet", m.CONSUMER, len(consumers) < self.wanted))
                if short and (why := self._workload_problem(kind, name))]
        producer = producers[0] if producers else None
        if producer is not None:
            self._check_producer(producer)
        if producer is not None and pod_ready(producer) and not self._done and now - self._status_at >= STATUS_INTERVAL:
            self._status_at = now
            self._status = self._read_status() or self._status
        if self._status is not None and self._status.finished and not self._done:
            self._finish()
        problems = [f"{p['metadata']['name']}: {r}" for p in [*producers, *consumers] if (r := pod_problem(p))]
        problems = self._workload_problems + problems
        self.problems = problems
        running = sum(1 for p in consumers if pod_running(p))
        wall = time.time()
        waiting_pods = [(p, why) for p in [*producers, *consumers]
                        if (why := pod_waiting(p, wall)) and not (p in producers and pod_ready(p))]
        if fresh and waiting_pods:
            self._read_events()
        waiting = tuple(f"{p['metadata']['name']}: {with_event(why, self._warning(p), wall)}" for p, why in waiting_pods)
        return RenderProgress(status=self._status, running=running, pending=len(consumers) - running,
                              restarts=sum(pod_restarts(p) for p in consumers),
                              pending_reason=problems[0] if problems else (waiting[0] if waiting else None),
                              producer_phase=pod_phase(producer) if producer is not None else "Missing",
                              waiting=tuple(self._workload_problems) + waiting)

    def _read_events(self) -> None:
        """The namespace's Events (a diagnosis only: refused or unreadable, the pods' own reasons stand)."""
        path = f"/api/v1/namespaces/{self.namespace}/events"
        try:
            body = json.loads(self._request("GET", path, action=f"Listing events in {self.namespace}"))
            self._events.replace(list(body.get("items") or []))
        except (ApiError, RenderError, ValueError, AttributeError):
            self._events.replace([])

    def _warning(self, pod: dict):  # noqa: ANN202 - EventView | None
        meta = pod.get("metadata") or {}
        return self._events.latest_warning("Pod", meta.get("namespace", self.namespace), meta.get("name", ""),
                                           meta.get("uid", ""))

    def _workload_problem(self, kind: str, name: str) -> str | None:
        plural = "deployments" if kind == "Deployment" else "replicasets"
        path = f"/apis/apps/v1/namespaces/{self.namespace}/{plural}/{name}"
        try:
            return workload_problem(json.loads(self._request("GET", path, action=f"Reading {kind} {name}")))
        except (ApiError, ValueError, AttributeError):
            return None  # a diagnosis only: without it the pods' own reasons still show

    def _check_producer(self, pod: dict) -> None:
        problem = pod_problem(pod)
        if stuck_reason(problem) in FATAL_FOR_PRODUCER:
            raise RenderError(f"the producer pod {pod['metadata']['name']} cannot start: {problem}")

    def _finish(self) -> None:
        data = self.image_png()
        if data is None:
            raise RenderError("the render finished but its image could not be downloaded through the API "
                              "server's service proxy; try again with --keep and fetch /image.png yourself")
        self._done = True
        try:
            write_bytes_or_keep(self.settings.output, data, f"{self.namespace}-{os.getpid()}")
        except OutputError as exc:
            raise RenderError(str(exc)) from None
        with contextlib.suppress(RenderError):  # consumers exit when done; do not let the ReplicaSet restart them
            self.scale(0)

    def image_png(self) -> bytes | None:
        """The image so far (the final one when finished), through the service proxy; None if unavailable."""
        return self._proxy_get("/image.png", IMAGE_TIMEOUT)

    def _read_status(self) -> RenderStatus | None:
        body = self._proxy_get("/status", TIMEOUT)
        if body is None:
            return None
        try:
            return parse_render_status(body)
        except StatusError as exc:
            raise RenderError(str(exc)) from None

    def _proxy_get(self, what: str, timeout: tuple[float, float]) -> bytes | None:
        path = f"/api/v1/namespaces/{self.namespace}/services/{m.STATUS_PROXY}/proxy{what}"
        try:
            return self._request("GET", path, accept="*/*", action=f"Reading the producer's {what}", timeout=timeout)
        except ApiError as exc:
            if exc.status in (401, 403):
                raise RenderError(str(exc)) from None
            return None  # 503 while endpoints change, a producer restarting...

    def _list_pods(self) -> list[dict]:
        path = f"/api/v1/namespaces/{self.namespace}/pods"
        try:
            body = self._request("GET", path, query={"labelSelector": f"app.kubernetes.io/name={m.APP}"},
                                 action=f"Listing the render's pods in {self.namespace}")
        except ApiError as exc:
            raise RenderError(str(exc)) from None
        try:
            return list(json.loads(body).get("items") or [])
        except (ValueError, AttributeError):
            raise RenderError("the API server answered the pod list with something that is not a PodList") from None

    # -- HTTP ------------------------------------------------------------------------------------------
    def _request(self, method: str, path: str, *, query: dict[str, str] | None = None, body: Any = None,
                 content_type: str | None = None, accept: str = "application/json", action: str,
                 timeout: tuple[float, float] = TIMEOUT) -> bytes:
        """One request through the ApiClient; raises ApiError (non-2xx, message = one sentence) or
        RenderError (the API server cannot be reached)."""
        headers = {"Accept": accept}
        if content_type:
            headers["Content-Type"] = content_type
        try:
            request = self.api.param_serialize(method, path, query_params=list((query or {}).items()),
                                               header_params=headers, body=body, auth_settings=["BearerToken"])
            resp = self.api.call_api(*request, _request_timeout=timeout)
            data = resp.read() or b""
        except ApiException as exc:  # TLS failures (status 0) and retried-out 429s
            if not exc.status:
                raise RenderError(describe_connection_error(ConnectionError(exc.reason), self.server, action)) from None
            body = exc.body if isinstance(exc.body, bytes) else str(exc.body or "").encode()
            raise ApiError(exc.status, body, describe_api_error(exc.status, body, action)) from None
        except (urllib3.exceptions.HTTPError, OSError) as exc:
            raise RenderError(describe_connection_error(exc, self.server, action)) from None
        if not 200 <= resp.status <= 299:
            raise ApiError(resp.status, data, describe_api_error(resp.status, data, action))
        return data

    def _describe(self, exc: ApiError) -> str:
        return str(exc) + (_RBAC_HINT if exc.status == 403 else "")


_RBAC_HINT = (" (an administrator can grant what kubeview needs with "
              "`kubeview render-manifests SCENE` RBAC, see docs/render-on-kubernetes.md)")


def _what(verb: str, obj: dict) -> str:
    meta = obj["metadata"]
    where = f"{meta['namespace']}/" if meta.get("namespace") else ""
    return f"{verb} {obj['kind']} {where}{meta['name']}"
