"""What the API server has now, when the extender's watch may lag: the pods on one node, for filter
to check a refusal against (kubeview/scheduling/extender.py `_stale_refusals`: one pod list by
`spec.nodeName`, which kube-apiserver serves from its watch cache after a consistent read,
Kubernetes 1.31+), and one pod by name, for prioritize to tell a pod the watch has not shown yet
from a made-up one (`_predict`). Needs only the `get`/`list pods` the extender's role has."""

from __future__ import annotations

import logging

import urllib3
from kubernetes import client
from kubernetes.client.exceptions import ApiException

from kubeview.cluster.kube.raw import response_json

log = logging.getLogger(__name__)
TERMINAL = ("Succeeded", "Failed")


class KubePodsOnNode:
    def __init__(self, api_client: client.ApiClient, timeout: float = 2.0) -> None:
        self._api = client.CoreV1Api(api_client)
        self._timeout = timeout

    def __call__(self, node: str) -> set[str] | None:
        """The uids of the unfinished pods bound to `node`; None when the API cannot say (the caller
        then trusts its watch)."""
        try:
            resp = self._api.list_pod_for_all_namespaces(field_selector=f"spec.nodeName={node}",
                                                         _preload_content=False,
                                                         _request_timeout=(2, self._timeout))
            items = response_json(resp).get("items") or []
        except (ApiException, urllib3.exceptions.HTTPError, OSError, ValueError) as exc:
            log.info("pods on node %s: cannot list (%s); trusting the watch", node, exc)
            return None
        return {(p.get("metadata") or {}).get("uid", "") for p in items
                if (p.get("status") or {}).get("phase") not in TERMINAL}


class KubePodOf:
    def __init__(self, api_client: client.ApiClient, timeout: float = 2.0) -> None:
        self._api = client.CoreV1Api(api_client)
        self._timeout = timeout

    def __call__(self, namespace: str, name: str) -> tuple[str, bool] | None:
        """(uid, pending: unbound and unfinished) of the pod the API server has by this name; None when
        it has none, or cannot say (the caller then predicts nothing)."""
        try:
            resp = self._api.read_namespaced_pod(name, namespace, _preload_content=False,
                                                 _request_timeout=(2, self._timeout))
            pod = response_json(resp)
        except ApiException as exc:
            if exc.status != 404:
                log.info("pod %s/%s: cannot read (%s)", namespace, name, exc.reason)
            return None
        except (urllib3.exceptions.HTTPError, OSError, ValueError) as exc:
            log.info("pod %s/%s: cannot read (%s)", namespace, name, exc)
            return None
        spec, status = pod.get("spec") or {}, pod.get("status") or {}
        pending = not spec.get("nodeName") and status.get("phase") not in TERMINAL
        return (pod.get("metadata") or {}).get("uid", ""), pending
