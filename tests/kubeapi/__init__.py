"""A test Kubernetes API server for kubeview's tests: real HTTP, recorded kube-apiserver answers.

Use it through the `kube_api` pytest fixture (tests/conftest.py); it starts a `KubeAPI` on
127.0.0.1 at a random port, writes a kubeconfig pointing at it, and stops it afterwards:

    def test_something(kube_api, monkeypatch):
        monkeypatch.setenv("KUBECONFIG", str(kube_api.kubeconfig))   # or pass it explicitly
        source = KubeSource(kubeconfig=str(kube_api.kubeconfig))
        ...
        assert kube_api.requests_to("/api/v1/nodes", method="GET")

What it serves (real kube-apiserver v1.36.2 recordings from tests/fixtures/k8s/):
- lists: `GET /api/v1/nodes` (5 nodes), `/api/v1/pods` and `/api/v1/namespaces/default/pods`
  (pods-list.json: 3 consumers + gpu-a, gpu-b Running, gpu-c Pending), `/apis/apps/v1[/namespaces/
  default]/replicasets` (the `consumer` ReplicaSet), empty Deployment/StatefulSet lists, `/version`,
  and every other GET path index.json records with status 200;
- watches (`?watch=true`): whatever `script_watch` queued for that path, else a quiet stream that
  stays open until the client leaves, `timeoutSeconds` passes or the server stops;
- `GET/PATCH /apis/apps/v1/namespaces/NS/{replicasets,deployments,statefulsets}/NAME/scale`: a Scale
  kept as state (`consumer` starts at 3 replicas; `add_scale` adds more). PATCH needs a merge or
  strategic-merge patch; negative replicas answer the recorded 422;
- a missing or wrong bearer token answers the recorded 401; unknown paths a 404 Status.

Attributes and hooks (all on the object the fixture returns):
- `.url`, `.kubeconfig` (Path; contexts `kubeview-test` (current) and `kubeview-test-default`,
  which has namespace `default`), `.token`;
- `.requests`: every request as `RecordedRequest(method, path, query, headers, body, at)`, with
  `.json()` for the body; `requests_to(path, method=, watch=)`; `wait_for(predicate, timeout)`;
- `respond(method, path, status, body, headers=None, times=1)`: one-off answers (errors, 429 with
  `{"Retry-After": "1"}`...); `respond_fixture(method, path, "status-403-....json")`;
- `set_list(path, body)` / `set_list_fixture(path, name)`: change what a list returns;
- `serve_recording("dra", lists={path: file})`: also serve a recording folder's GET 200s (the DRA one:
  `resource.k8s.io/v1` discovery, deviceclasses, resourceslices, resourceclaims); without it
  `/apis/resource.k8s.io/v1` is a 404, a cluster without DRA. Its watch streams are queued with
  `script_watch(path, WatchScript.recorded("dra/watch-resourceclaims.jsonl"))`;
- `script_watch(path, WatchScript(...), ...)`: the next watch responses on `path`;
  `WatchScript.recorded("watch-pods.jsonl", first=N, end="close"|"drop"|"hang", then=[...])`,
  `error_event(410, msg)` and `bookmark(rv)` build extra lines; `WatchScript(lines, gate=threading.Event())`
  holds its lines until the test sets the gate;
- `add_scale(resource, namespace, name, replicas)`, `scale_of(...)`;
- `write_kubeconfig(path, token=, server=, namespace=)` for kubeconfigs with a bad token or a
  server that is not there (or a `SilentServer`'s, kubeapi/silent.py: accepts, never answers).
"""

from __future__ import annotations

from .server import TOKEN, KubeAPI, RecordedRequest, WatchScript, bookmark, error_event, status_body
from .silent import SilentServer, self_signed

__all__ = ["TOKEN", "KubeAPI", "RecordedRequest", "SilentServer", "WatchScript", "bookmark", "error_event",
           "self_signed", "status_body"]
