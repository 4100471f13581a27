"""Posting a pod's Binding through the API server, for the extender's `bind` verb.

The Binding carries the pod's uid, as kube-scheduler's DefaultBinder sends it, so the API server
refuses to bind a different pod that took the same name meanwhile. Needs RBAC `create` on
`pods/binding` (manifests/scheduler/00-namespace-rbac.yaml).
"""

from __future__ import annotations

import urllib3
from kubernetes import client
from kubernetes.client.exceptions import ApiException

from kubeview.cluster.kube.errors import describe_call_error
from kubeview.scheduling.binding import BindError


class KubeBinder:
    def __init__(self, api_client: client.ApiClient, server: str = "", timeout: float = 10.0) -> None:
        self._api = client.CoreV1Api(api_client)
        self._server = server
        self._timeout = timeout

    def __call__(self, namespace: str, name: str, uid: str, node: str) -> None:
        body = {"apiVersion": "v1", "kind": "Binding",
                "metadata": {"name": name, "namespace": namespace, "uid": uid},
                "target": {"apiVersion": "v1", "kind": "Node", "name": node}}
        action = f"Binding pod {namespace}/{name} to node {node}"
        try:
            # _preload_content=False: the reply is a Status, which the client cannot read as a V1Binding
            self._api.create_namespaced_pod_binding(name, namespace, body, _preload_content=False,
                                                    _request_timeout=(5, self._timeout))
        except (ApiException, urllib3.exceptions.HTTPError, OSError) as exc:
            raise BindError(describe_call_error(exc, self._server, action)) from None
