"""Posting a pod's Binding through the API server, for the extender's `bind` verb.

The Binding carries the pod's uid, as kube-scheduler's DefaultBinder sends it, so the API server
refuses to bind a different pod that took the same name meanwhile. Needs RBAC `create` on
`pods/binding` (manifests/scheduler/00-namespace-rbac.yaml).

The POST goes straight through the client's urllib3 pool with the body encoded by hand, not through
`CoreV1Api.create_namespaced_pod_binding`: the generated method validates its arguments, sanitizes
the body, builds the request and decodes headers in Python, about 4 ms of CPU per pod on the realk8s
bench (issue #25 item 5), in a process whose GIL prioritize (in kube-scheduler's serial cycle) waits
for. What stays the same: the pool (TLS, client certificates, proxy), the bearer token as the
configuration gives it (refreshed by its hook), and the errors (an ApiException for a non-2xx reply).
"""

from __future__ import annotations

import json
from urllib.parse import quote

import urllib3
from kubernetes import client
from kubernetes.client.exceptions import ApiException

from kubeview.cluster.kube.errors import describe_call_error
from kubeview.scheduling.binding import BindError


class KubeBinder:
    def __init__(self, api_client: client.ApiClient, server: str = "", timeout: float = 10.0) -> None:
        self._config = api_client.configuration
        self._pool = api_client.rest_client.pool_manager
        self._host = self._config.host.rstrip("/")
        self._server = server
        self._timeout = urllib3.Timeout(connect=5, read=timeout)
        self._headers = {"Content-Type": "application/json", "Accept": "application/json",
                         "User-Agent": api_client.user_agent, **api_client.default_headers}

    def _auth_headers(self) -> dict[str, str]:
        headers = dict(self._headers)
        bearer = self._config.auth_settings().get("BearerToken")
        if bearer and bearer.get("value"):
            headers["authorization"] = bearer["value"]
        return headers

    def __call__(self, namespace: str, name: str, uid: str, node: str) -> None:
        body = json.dumps({"apiVersion": "v1", "kind": "Binding",
                           "metadata": {"name": name, "namespace": namespace, "uid": uid},
                           "target": {"apiVersion": "v1", "kind": "Node", "name": node}}).encode()
        action = f"Binding pod {namespace}/{name} to node {node}"
        url = f"{self._host}/api/v1/namespaces/{quote(namespace, safe='')}/pods/{quote(name, safe='')}/binding"
        try:
            resp = self._pool.request("POST", url, body=body, headers=self._auth_headers(),
                                      timeout=self._timeout, preload_content=False)  # the pool's retries, as before
            resp.read()  # whole (urllib3 keeps it as .data), so the connection goes back to the pool
            resp.release_conn()
            if not 200 <= resp.status < 300:
                raise ApiException(http_resp=resp)  # its body: read above, kept by urllib3
        except (ApiException, urllib3.exceptions.HTTPError, OSError) as exc:
            raise BindError(describe_call_error(exc, self._server, action)) from None

