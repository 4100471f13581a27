"""A real HTTP server that answers like kube-apiserver v1.36.2, from the recorded fixtures.

Threaded `http.server` on 127.0.0.1 (random port), HTTP/1.1 with keep-alive, chunked watch streams.
It checks the bearer token (401 with the recorded Status otherwise), serves the recorded lists and
objects, keeps the `scale` subresource of workloads as state (GET/PATCH with a merge patch), and
records every request. Tests script it: queue one-off responses (`respond`), replace a list
(`set_list`), and queue watch streams (`script_watch`) that end normally, end after an ERROR 410,
drop the connection mid-stream, or hang until the client gives up.
"""

from __future__ import annotations

import contextlib
import json
import socket
import ssl
import threading
import time
from collections import defaultdict, deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Literal
from urllib.parse import parse_qsl, urlsplit

from . import fixtures
from . import jobs as job_api
from .live import Conflict, LiveCluster, parse_selector

TOKEN = "kubeview-test-token"

# GET paths served by default, beyond what index.json maps (its last 200 wins, then these override).
_DEFAULT_LISTS = {
    "/api/v1/nodes": "nodes.json",
    "/api/v1/pods": "pods-list-all-namespaces.json",
    "/api/v1/namespaces/default/pods": "pods-list.json",
    "/apis/apps/v1/replicasets": "replicaset-list.json",
    "/apis/apps/v1/namespaces/default/replicasets": "replicaset-list.json",
    "/apis/apps/v1/namespaces/default/replicasets/consumer": "replicaset.json",
    # recorded as GET /api/v1/namespaces/default/events; every recorded event is in `default`, so the
    # cluster-wide list holds the same items
    "/api/v1/events": "events.json",
}
_EMPTY_LISTS = {
    "/apis/apps/v1/deployments": "DeploymentList",
    "/apis/apps/v1/namespaces/default/deployments": "DeploymentList",
    "/apis/apps/v1/statefulsets": "StatefulSetList",
    "/apis/apps/v1/namespaces/default/statefulsets": "StatefulSetList",
}
CA_STATUS_LIST = "/api/v1/namespaces/kube-system/configmaps"
QUOTA_LISTS = ("/api/v1/resourcequotas", "/api/v1/namespaces/default/resourcequotas")
_EMPTY_JOB_LISTS = ("/apis/batch/v1/jobs", "/apis/batch/v1/namespaces/default/jobs")
_RESOURCE_KIND = {"replicasets": "ReplicaSet", "deployments": "Deployment", "statefulsets": "StatefulSet"}


def status_body(code: int, reason: str, message: str, details: dict | None = None, **meta: str) -> dict:
    """A metav1.Status like the apiserver's error bodies."""
    body = {"kind": "Status", "apiVersion": "v1", "metadata": dict(meta), "status": "Failure",
            "message": message, "reason": reason}
    if details is not None:
        body["details"] = details
    body["code"] = code
    return body


def error_event(code: int = 410, message: str = "too old resource version: 276 (345)") -> bytes:
    """A watch ERROR event line, as the apiserver sends for an expired resourceVersion."""
    obj = status_body(code, "Expired" if code == 410 else "InternalError", message)
    return json.dumps({"type": "ERROR", "object": obj}, separators=(",", ":")).encode()


def bookmark(resource_version: str, kind: str = "Pod") -> bytes:
    obj = {"kind": kind, "apiVersion": "v1", "metadata": {"resourceVersion": resource_version},
           "spec": {"containers": None}, "status": {}}
    return json.dumps({"type": "BOOKMARK", "object": obj}, separators=(",", ":")).encode()


@dataclass
class WatchScript:
    """One watch response: these event lines, then `end`.

    end: "close" ends the chunked stream cleanly (a server-side timeout looks like this);
    "drop" closes the socket mid-stream without the final chunk (a broken connection);
    "hang" keeps the stream open until the client disconnects, `timeoutSeconds` passes, or the
    server stops (a quiet cluster).
    """

    lines: list[bytes] = field(default_factory=list)
    end: Literal["close", "drop", "hang"] = "hang"
    delay: float = 0.0  # seconds between events
    status: int = 200
    gate: threading.Event | None = None  # the lines wait for it (a test's cue), the stream stays open meanwhile

    @classmethod
    def recorded(cls, name: str, *, first: int | None = None, end: Literal["close", "drop", "hang"] = "hang",
                 then: list[bytes] | None = None) -> WatchScript:
        """A recorded stream (`watch-pods.jsonl`), optionally cut after `first` events, plus `then` lines."""
        lines = fixtures.watch_lines(name)
        if first is not None:
            lines = lines[:first]
        return cls(lines + list(then or []), end)


class Headers(dict):
    """Request headers; lookups ignore case (`headers["content-type"]` == `headers["Content-Type"]`)."""

    def __init__(self, items: object = ()) -> None:
        super().__init__((str(k).lower(), v) for k, v in (items.items() if isinstance(items, dict) else items))

    def __getitem__(self, key: str) -> str:
        return super().__getitem__(key.lower())

    def get(self, key: str, default: str | None = None) -> str | None:  # type: ignore[override]
        return super().get(key.lower(), default)

    def __contains__(self, key: object) -> bool:
        return super().__contains__(str(key).lower())


@dataclass
class Canned:
    status: int
    body: bytes
    headers: dict[str, str]


@dataclass
class RecordedRequest:
    method: str
    path: str  # without the query
    query: dict[str, str]
    headers: Headers  # case-insensitive
    body: bytes
    at: float

    def json(self) -> object:
        return json.loads(self.body) if self.body else None

    @property
    def watch(self) -> bool:
        return self.query.get("watch") in ("true", "1")


class KubeAPI:
    """The test API server. Start with `start()` (or the `kube_api` pytest fixture)."""

    def __init__(self, token: str = TOKEN, live: LiveCluster | None = None) -> None:
        self.token = token
        self.live = live  # nodes and pods served from live state instead of the recordings
        self.requests: list[RecordedRequest] = []
        self._lists: dict[str, bytes] = {}
        self._canned: dict[tuple[str, str], deque[Canned]] = defaultdict(deque)
        self._watches: dict[str, deque[WatchScript]] = defaultdict(deque)
        self._scales: dict[tuple[str, str, str], dict] = {}
        self._lock = threading.Lock()
        self._changed = threading.Condition(self._lock)
        self._stop = threading.Event()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self.url = ""
        self.kubeconfig: Path | None = None
        for entry in fixtures.index():
            if entry["method"] == "GET" and entry["status"] == 200 and "?" not in entry["path"] \
                    and entry["file"].endswith(".json"):
                self._lists[entry["path"]] = fixtures.raw(entry["file"])
        for p, name in _DEFAULT_LISTS.items():
            self._lists[p] = fixtures.raw(name)
        for p, kind in _EMPTY_LISTS.items():
            self._lists[p] = json.dumps({"kind": kind, "apiVersion": "apps/v1",
                                         "metadata": {"resourceVersion": "345"}, "items": []}).encode()
        for p in _EMPTY_JOB_LISTS:
            self._lists[p] = json.dumps(job_api.job_list([], "345")).encode()
        # kubeview reads CA's status ConfigMap (kube-system, by field selector): none here, a cluster
        # without Cluster Autoscaler (a made-up empty list in kube-apiserver's shape, not a recording)
        self._lists[CA_STATUS_LIST] = json.dumps({"kind": "ConfigMapList", "apiVersion": "v1",
                                                  "metadata": {"resourceVersion": "345"}, "items": []}).encode()
        # no ResourceQuota either (a made-up empty list in kube-apiserver's shape, not a recording)
        for p in QUOTA_LISTS:
            self._lists[p] = json.dumps({"kind": "ResourceQuotaList", "apiVersion": "v1",
                                         "metadata": {"resourceVersion": "345"}, "items": []}).encode()
        self._jobs: dict[tuple[str, str], dict] = {}  # Jobs GET/PATCH serves (tests/kubeapi/jobs.py)
        self.add_scale("replicasets", "default", "consumer", fixtures.load("scale-get-final.json"))

    # -- lifecycle -----------------------------------------------------------------------------
    def start(self, tls: tuple[Path, Path] | None = None) -> KubeAPI:
        """Serve plain HTTP, or HTTPS with `tls` = (certificate, key) as an in-cluster client expects."""
        api = self

        class Handler(_Handler):
            server_api = api

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        scheme = "http"
        if tls is not None:
            context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            context.load_cert_chain(*map(str, tls))
            self._server.socket = context.wrap_socket(self._server.socket, server_side=True)
            scheme = "https"
        self.url = f"{scheme}://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.05,), name="kubeapi", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self.live is not None:
            self.live.close()
        with self._changed:
            self._changed.notify_all()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()

    def write_kubeconfig(self, path: Path, *, token: str | None = None, server: str | None = None,
                         namespace: str | None = None, ca: Path | None = None) -> Path:
        """A kubeconfig with contexts `kubeview-test` (current) and `kubeview-test-default` (namespace default);
        `ca`: the certificate-authority file (a server's self-signed certificate)."""
        ns = f"\n    namespace: {namespace}" if namespace else ""
        authority = f"\n    certificate-authority: {ca}" if ca else ""
        path.write_text(f"""apiVersion: v1
kind: Config
clusters:
- name: kubeview-test
  cluster:
    server: {server or self.url}{authority}
users:
- name: kubeview-test-user
  user:
    token: {token or self.token}
contexts:
- name: kubeview-test
  context:
    cluster: kubeview-test
    user: kubeview-test-user{ns}
- name: kubeview-test-default
  context:
    cluster: kubeview-test
    user: kubeview-test-user
    namespace: default
current-context: kubeview-test
""")
        return path

    # -- scripting -----------------------------------------------------------------------------
    def respond(self, method: str, path: str, status: int, body: dict | str | bytes,
                headers: dict[str, str] | None = None, times: int = 1) -> None:
        """Answer the next `times` requests to METHOD path (query ignored) with this, then as before."""
        data = body if isinstance(body, bytes) else (body.encode() if isinstance(body, str) else json.dumps(body).encode())
        with self._lock:
            for _ in range(times):
                self._canned[(method.upper(), path)].append(Canned(status, data, dict(headers or {})))

    def respond_fixture(self, method: str, path: str, name: str, headers: dict[str, str] | None = None,
                        times: int = 1) -> None:
        """`respond` with a recorded Status body; the HTTP status is its `code`."""
        body = fixtures.load(name)
        self.respond(method, path, int(body["code"]), fixtures.raw(name), headers, times)

    def set_list(self, path: str, body: dict | bytes | str) -> None:
        """What GET path (not a watch) returns from now on."""
        data = body if isinstance(body, bytes) else (body.encode() if isinstance(body, str) else json.dumps(body).encode())
        with self._lock:
            self._lists[path] = data

    def set_list_fixture(self, path: str, name: str) -> None:
        self.set_list(path, fixtures.raw(name))

    def serve_recording(self, folder: str, *, lists: dict[str, str] | None = None) -> None:
        """Serve a recording folder (`dra`, `gang`) as well: every GET 200 its index.json records
        (discovery such as `/apis/resource.k8s.io/v1` included; the last recording of a path wins),
        then `lists` ({path: file in the folder}) on top, e.g. the all-namespaces pod list a
        recording only took in one namespace."""
        for entry in fixtures.index(folder):
            if entry["method"] == "GET" and entry["status"] == 200 and "?" not in entry["path"] \
                    and entry["file"].endswith(".json"):
                self.set_list(entry["path"], fixtures.raw(f"{folder}/{entry['file']}"))
        for p, name in (lists or {}).items():
            self.set_list(p, fixtures.raw(f"{folder}/{name}"))

    def script_watch(self, path: str, *scripts: WatchScript) -> None:
        """Queue responses for the next watch requests on `path`; after them, watches hang (quiet)."""
        with self._changed:
            self._watches[path].extend(scripts)
            self._changed.notify_all()

    def add_scale(self, resource: str, namespace: str, name: str, scale: dict | int) -> None:
        """Make workloads/NAME/scale exist (resource: replicasets, deployments, statefulsets)."""
        if isinstance(scale, int):
            scale = {"kind": "Scale", "apiVersion": "autoscaling/v1",
                     "metadata": {"name": name, "namespace": namespace, "resourceVersion": "1"},
                     "spec": {"replicas": scale}, "status": {"replicas": scale, "selector": f"app={name}"}}
        with self._lock:
            self._scales[(resource, namespace, name)] = scale

    def add_job(self, job: dict) -> None:
        """Make /apis/batch/v1/namespaces/NS/jobs/NAME exist (GET, merge PATCH)."""
        meta = job["metadata"]
        with self._lock:
            self._jobs[(meta.get("namespace", ""), meta["name"])] = json.loads(json.dumps(job))

    def job(self, namespace: str, name: str) -> dict:
        with self._lock:
            return json.loads(json.dumps(self._jobs[(namespace, name)]))

    def scale_of(self, resource: str, namespace: str, name: str) -> int:
        return int(self._scales[(resource, namespace, name)]["spec"]["replicas"])

    # -- reading what happened -------------------------------------------------------------------
    def requests_to(self, path: str, method: str | None = None, watch: bool | None = None) -> list[RecordedRequest]:
        with self._lock:
            return [r for r in self.requests if r.path == path and (method is None or r.method == method)
                    and (watch is None or r.watch == watch)]

    def wait_for(self, predicate: Callable[[list[RecordedRequest]], bool], timeout: float = 10.0) -> bool:
        """Block until `predicate(requests)` holds (True) or `timeout` passes (False)."""
        deadline = time.monotonic() + timeout
        with self._changed:
            while not predicate(self.requests):
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._changed.wait(min(left, 0.1))
            return True

    # -- used by the handler -------------------------------------------------------------------
    def _record(self, req: RecordedRequest) -> None:
        with self._changed:
            self.requests.append(req)
            self._changed.notify_all()

    def _take_canned(self, method: str, path: str) -> Canned | None:
        with self._lock:
            q = self._canned.get((method, path))
            return q.popleft() if q else None

    def _take_watch(self, path: str) -> WatchScript | None:
        with self._lock:
            q = self._watches.get(path)
            return q.popleft() if q else None


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_api: KubeAPI

    def log_message(self, format: str, *args: object) -> None:  # quiet
        pass

    def handle(self) -> None:
        """Clients hanging up (a dropped watch, a closed pool) are normal here, not errors to print."""
        with contextlib.suppress(ConnectionError, TimeoutError, OSError):
            super().handle()

    def _send(self, status: int, body: bytes, headers: dict[str, str] | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(body)

    def _status(self, code: int, reason: str, message: str, details: dict | None = None) -> None:
        self._send(code, json.dumps(status_body(code, reason, message, details)).encode())

    def _handle(self) -> None:
        api = self.server_api
        parts = urlsplit(self.path)
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        req = RecordedRequest(self.command, parts.path, dict(parse_qsl(parts.query)), Headers(self.headers.items()),
                              body, time.time())
        api._record(req)
        scheme, _, token = (self.headers.get("Authorization") or "").partition(" ")
        if scheme.lower() != "bearer" or token != api.token:  # the scheme case-insensitively, as kube-apiserver
            self._send(401, fixtures.raw("status-401-unauthorized.json"))
            return
        canned = api._take_canned(self.command, parts.path)
        if canned is not None:
            self._send(canned.status, canned.body, canned.headers)
            return
        if api.live is not None and self._live(api.live, parts.path.strip("/").split("/"), req):
            return
        if self.command == "GET" and req.watch:
            self._watch(req)
            return
        segments = parts.path.strip("/").split("/")
        if (len(segments) == 8 and segments[:4] == ["apis", "apps", "v1", "namespaces"]
                and segments[7] == "scale"):
            self._scale_request(segments[4], segments[5], segments[6], req)
            return
        if len(segments) == 7 and segments[:4] == ["apis", "batch", "v1", "namespaces"] and segments[5] == "jobs":
            status, reply = job_api.handle(api, self.command, segments[4], segments[6], req)
            self._send(status, json.dumps(reply).encode())
            return
        if self.command == "GET":
            with api._lock:  # discovery is asked with a trailing slash (`/apis/resource.k8s.io/v1/`)
                data = api._lists.get(parts.path) or api._lists.get(parts.path.rstrip("/"))
            if data is not None:
                self._send(200, data)
                return
        self._status(404, "NotFound", "the server could not find the requested resource", {})

    def _live(self, live: LiveCluster, seg: list[str], req: RecordedRequest) -> bool:
        """Nodes and pods from the live store; False for paths it does not serve."""
        namespace = None
        if seg[:2] == ["api", "v1"] and len(seg) >= 4 and seg[2] == "namespaces":
            namespace, rest = seg[3], seg[4:]
        elif seg[:2] == ["api", "v1"]:
            rest = seg[2:]
        else:
            return False
        if seg[:3] == ["api", "v1", "namespaces"] and self._live_namespace(live, seg[3:], req):
            return True
        if not rest or rest[0] not in ("pods", "nodes"):
            return False
        kind = "Pod" if rest[0] == "pods" else "Node"
        try:
            if self._live_write(live, kind, namespace, rest, req):
                return True
        except Conflict as exc:
            self._status(exc.code, exc.reason, exc.message, {"name": rest[-1], "kind": rest[0]})
            return True
        if len(rest) == 1 and self.command == "GET":
            if req.watch:
                self._live_watch(live, kind, namespace, req)
            else:
                self._send(200, live.list_body(kind, namespace, parse_selector(req.query.get("labelSelector")),
                                               parse_selector(req.query.get("fieldSelector"))))
            return True
        if kind == "Pod" and namespace and len(rest) == 2 and self.command == "GET":
            obj = live.pod(namespace, rest[1])
            if obj is None:
                self._status(404, "NotFound", f'pods "{rest[1]}" not found', {"name": rest[1], "kind": "pods"})
            else:
                self._send(200, json.dumps(obj).encode())
            return True
        if kind == "Pod" and namespace and len(rest) == 3 and rest[2] == "binding" and self.command == "POST":
            body = req.json() or {}
            target = (body.get("target") or {}).get("name", "")
            try:
                live.bind(namespace, rest[1], target, (body.get("metadata") or {}).get("uid"))
            except Conflict as exc:
                self._status(exc.code, exc.reason, exc.message, {"name": rest[1], "kind": "pods"})
                return True
            self._send(201, json.dumps({"kind": "Status", "apiVersion": "v1", "metadata": {},
                                        "status": "Success", "code": 201}).encode())
            return True
        return False

    def _live_namespace(self, live: LiveCluster, rest: list[str], req: RecordedRequest) -> bool:
        """POST /api/v1/namespaces and DELETE /api/v1/namespaces/NAME."""
        try:
            if not rest and self.command == "POST":
                self._send(201, json.dumps(live.create_namespace(req.json() or {})).encode())
                return True
            if len(rest) == 1 and self.command == "DELETE":
                live.delete_namespace(rest[0])
                self._send(200, json.dumps({"kind": "Namespace", "apiVersion": "v1", "metadata": {"name": rest[0]},
                                            "status": {"phase": "Terminating"}}).encode())
                return True
        except Conflict as exc:
            self._status(exc.code, exc.reason, exc.message, {"name": rest[0] if rest else "", "kind": "namespaces"})
            return True
        return False

    def _live_write(self, live: LiveCluster, kind: str, namespace: str | None, rest: list[str],
                    req: RecordedRequest) -> bool:
        """Creating nodes and pods, writing a node's status, deleting collections."""
        method = self.command
        empty_list = json.dumps({"kind": f"{kind}List", "apiVersion": "v1", "metadata": {}, "items": []}).encode()
        if kind == "Node" and rest == ["nodes"] and method == "POST":
            self._send(201, json.dumps(live.create_node(req.json() or {})).encode())
        elif kind == "Node" and len(rest) == 3 and rest[2] == "status" and method == "PATCH":
            self._send(200, json.dumps(live.patch_node_status(rest[1], req.json() or {})).encode())
        elif kind == "Node" and rest == ["nodes"] and method == "DELETE":
            live.delete_nodes(parse_selector(req.query.get("labelSelector")))
            self._send(200, empty_list)
        elif kind == "Pod" and namespace and rest == ["pods"] and method == "POST":
            body = req.json() or {}
            body.setdefault("metadata", {})["namespace"] = namespace
            self._send(201, json.dumps(live.create_pod(body)).encode())
        elif kind == "Pod" and namespace and rest == ["pods"] and method == "DELETE":
            live.delete_pods(namespace)
            self._send(200, empty_list)
        else:
            return False
        return True

    def _live_watch(self, live: LiveCluster, kind: str, namespace: str | None, req: RecordedRequest) -> None:
        api = self.server_api
        since = int(req.query.get("resourceVersion") or live.rv)
        deadline = time.monotonic() + float(req.query.get("timeoutSeconds") or 3600)
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        try:
            for line in live.stream(kind, since, namespace, lambda: not api._stop.is_set(), deadline):
                self._chunk(line + b"\n")
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            pass
        self.close_connection = True

    def _scale_request(self, namespace: str, resource: str, name: str, req: RecordedRequest) -> None:
        api = self.server_api
        key = (resource, namespace, name)
        kind = _RESOURCE_KIND.get(resource, resource)
        with api._lock:
            scale = api._scales.get(key)
        if scale is None:
            self._status(404, "NotFound", f'{resource}.apps "{name}" not found',
                         {"name": name, "group": "apps", "kind": resource})
            return
        if self.command == "GET":
            self._send(200, json.dumps(scale).encode())
            return
        if self.command != "PATCH":
            self._status(405, "MethodNotAllowed", f"{self.command} is not supported on {kind} scale")
            return
        ctype = (self.headers.get("Content-Type") or "").split(";")[0].strip()
        if ctype not in ("application/merge-patch+json", "application/strategic-merge-patch+json"):
            self._status(415, "UnsupportedMediaType", f"the body of the request was in an unknown format: {ctype}")
            return
        patch = req.json()
        replicas = ((patch or {}).get("spec") or {}).get("replicas")
        if not isinstance(replicas, int) or replicas < 0:
            body = fixtures.load("status-422-invalid-scale.json")
            body["message"] = (f'Scale.autoscaling "{name}" is invalid: spec.replicas: Invalid value: {replicas}: '
                               "must be greater than or equal to 0")
            body["details"]["name"] = name
            body["details"]["causes"][0]["message"] = f"Invalid value: {replicas}: must be greater than or equal to 0"
            self._send(422, json.dumps(body).encode())
            return
        with api._lock:
            scale = json.loads(json.dumps(scale))
            scale["spec"]["replicas"] = replicas
            scale["metadata"]["resourceVersion"] = str(int(scale["metadata"].get("resourceVersion", "1")) + 1)
            api._scales[key] = scale
        self._send(200, json.dumps(scale).encode())

    def _watch(self, req: RecordedRequest) -> None:
        api = self.server_api
        script = api._take_watch(req.path) or WatchScript()
        self.send_response(script.status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        try:
            while script.gate is not None and not script.gate.wait(0.05):
                if api._stop.is_set():
                    return
            for line in script.lines:
                if script.delay:
                    time.sleep(script.delay)
                self._chunk(line + b"\n")
            if script.end == "drop":
                self.wfile.flush()
                self.connection.shutdown(socket.SHUT_RDWR)
                self.close_connection = True
                return
            if script.end == "hang":
                timeout = float(req.query.get("timeoutSeconds") or 3600)
                deadline = time.monotonic() + timeout
                self.connection.settimeout(0.05)
                while not api._stop.is_set() and time.monotonic() < deadline:
                    try:  # the client closing its end shows up as a readable EOF
                        if self.connection.recv(1, socket.MSG_PEEK) == b"":
                            self.close_connection = True
                            return
                    except (TimeoutError, BlockingIOError):
                        pass
                    except OSError:
                        self.close_connection = True
                        return
                self.connection.settimeout(None)
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True

    def _chunk(self, data: bytes) -> None:
        self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
        self.wfile.flush()

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _handle
