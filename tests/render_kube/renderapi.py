"""The test API server (tests/kubeapi) plus what a render needs from a real kube-apiserver.

`RenderKubeAPI` extends `KubeAPI` without changing it: server-side apply PATCHes
(`application/apply-patch+yaml`) answer like the apiserver (201 with the object on create, 200 after),
DELETEs of applied objects answer a Success Status, a missing namespace answers the recorded 404
shape (`details.kind: namespaces`), and the service proxy path
`/api/v1/namespaces/NS/services/http:producer:status/proxy/...` is forwarded to a real local producer's
status port, answering 503 like the apiserver when there is none. Every request is still recorded.
"""

from __future__ import annotations

import http.client
import json
import threading
import time
from http.server import ThreadingHTTPServer
from urllib.parse import parse_qsl, unquote, urlsplit

from kubeapi import KubeAPI, RecordedRequest, status_body
from kubeapi.server import _Handler


class RenderKubeAPI(KubeAPI):
    def __init__(self, *, namespaces: tuple[str, ...] = ("default",)) -> None:
        super().__init__()
        self.namespaces = set(namespaces)
        self.proxy_port: int | None = None  # the local producer's status port
        self.objects: dict[str, dict] = {}  # path -> applied object

    def start(self) -> RenderKubeAPI:  # as KubeAPI.start, with the render handler
        api = self

        class Handler(_RenderHandler):
            server_api = api

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, name="kubeapi", daemon=True)
        self._thread.start()
        return self

    def applies(self) -> list[RecordedRequest]:
        with self._lock:
            return [r for r in self.requests if r.method == "PATCH"
                    and header(r, "Content-Type") == "application/apply-patch+yaml"]


def _namespace_of(path: str) -> str | None:
    seg = path.strip("/").split("/")
    for i, s in enumerate(seg[:-1]):
        if s == "namespaces" and i + 1 < len(seg) and i + 2 < len(seg):
            return seg[i + 1]
    return None


class _RenderHandler(_Handler):
    server_api: RenderKubeAPI

    def _handle(self) -> None:
        api = self.server_api
        parts = urlsplit(self.path)
        path = unquote(parts.path)
        is_proxy = "/services/" in path and "/proxy" in path
        is_apply = self.command == "PATCH" and self.headers.get("Content-Type") == "application/apply-patch+yaml"
        is_delete = self.command == "DELETE" and not path.endswith("/scale")
        if not (is_proxy or is_apply or is_delete) or self.headers.get("Authorization") != f"Bearer {api.token}":
            super()._handle()
            return
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        api._record(RecordedRequest(self.command, parts.path, dict(parse_qsl(parts.query)),
                                    dict(self.headers.items()), body, time.time()))
        canned = api._take_canned(self.command, parts.path)
        if canned is not None:
            self._send(canned.status, canned.body, canned.headers)
        elif is_proxy:
            self._proxy(path)
        elif is_apply:
            self._apply(path, json.loads(body))
        else:
            self._delete(path)

    def _apply(self, path: str, obj: dict) -> None:
        api = self.server_api
        ns = _namespace_of(path)
        if obj.get("kind") == "Namespace":
            api.namespaces.add(obj["metadata"]["name"])
        elif ns is not None and ns not in api.namespaces:
            self._status(404, "NotFound", f'namespaces "{ns}" not found', {"name": ns, "kind": "namespaces"})
            return
        created = path not in api.objects
        stored = json.loads(json.dumps(obj))
        stored["metadata"].setdefault("uid", f"uid-{len(api.objects)}")
        stored["metadata"]["resourceVersion"] = str(1000 + len(api.requests))
        api.objects[path] = stored
        self._send(201 if created else 200, json.dumps(stored).encode())

    def _delete(self, path: str) -> None:
        api = self.server_api
        obj = api.objects.pop(path, None)
        if obj is None:
            self._status(404, "NotFound", "not found", {"name": path.rsplit("/", 1)[-1]})
            return
        self._send(200, json.dumps({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success",
                                    "details": {"name": obj["metadata"]["name"], "uid": obj["metadata"]["uid"]}}).encode())

    def _proxy(self, path: str) -> None:
        port = self.server_api.proxy_port
        rest = path.split("/proxy", 1)[1] or "/"
        if port is None:
            self._send(503, json.dumps(status_body(503, "ServiceUnavailable",
                                                   'no endpoints available for service "producer"')).encode())
            return
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        try:
            conn.request("GET", rest)
            resp = conn.getresponse()
            data = resp.read()
            ctype = resp.getheader("Content-Type") or "application/octet-stream"
            status = resp.status
        except OSError as exc:
            msg = f"error trying to reach service: dial tcp 127.0.0.1:{port}: {exc}"
            self._send(503, json.dumps(status_body(503, "ServiceUnavailable", msg)).encode())
            return
        finally:
            conn.close()
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _handle  # the base class bound its own _handle


def header(req: RecordedRequest, name: str) -> str | None:
    """A recorded request's header, whatever case the client wrote its name in."""
    return next((v for k, v in req.headers.items() if k.lower() == name.lower()), None)


def pod(name: str, component: str, *, phase: str = "Running", ready: bool = True, restarts: int = 0,
        waiting: tuple[str, str] | None = None, unschedulable: str | None = None, init_waiting: bool = False) -> dict:
    """A pod of the render as the API shows it (labels from the manifests, status as a kubelet sets it)."""
    labels = {"app.kubernetes.io/name": "kubeview-render", "app.kubernetes.io/component": component,
              "app.kubernetes.io/part-of": "kubeview"}
    conditions = [{"type": "PodScheduled", "status": "True"}]
    statuses: list[dict] = []
    init: list[dict] = []
    if unschedulable is not None:
        conditions = [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable", "message": unschedulable}]
    else:
        conditions.append({"type": "Ready", "status": "True" if ready else "False"})
        state: dict = {"running": {"startedAt": "2026-01-01T00:00:00Z"}}
        if waiting is not None:
            state = {"waiting": {"reason": waiting[0], "message": waiting[1]}}
        target = init if init_waiting else statuses
        target.append({"name": component, "state": state, "ready": ready, "restartCount": restarts,
                       "image": "kubeview:latest"})
    status: dict = {"phase": phase, "conditions": conditions}
    if init:
        status["initContainerStatuses"] = init
    if statuses:
        status["containerStatuses"] = statuses
    return {"metadata": {"name": name, "namespace": "kv", "labels": labels}, "spec": {}, "status": status}


def pod_list(*pods: dict) -> dict:
    return {"kind": "PodList", "apiVersion": "v1", "metadata": {"resourceVersion": "500"}, "items": list(pods)}
