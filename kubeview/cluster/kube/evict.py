"""Applying a plan on a real cluster: evictions through the Eviction API (policy/v1), so PodDisruptionBudgets
are honoured by the API server; the target's nomination; the budgets; and the pods the apply follows.

Needs RBAC `create` on `pods/eviction`, `patch` on `pods/status` (the nomination, best effort), `list`
on `poddisruptionbudgets` and `get` on `pods`. A 429 is returned as EvictionRefused with the API
server's message and cause ("The disruption budget web needs 2 healthy pods and has 2 currently").
"""

from __future__ import annotations

import urllib3
from kubernetes import client
from kubernetes.client.exceptions import ApiException

from kubeview.cluster.evictions import EvictionRefused
from kubeview.cluster.kube.errors import describe_call_error, parse_status
from kubeview.cluster.kube.raw import response_json
from kubeview.cluster.source import ActionError

MERGE_PATCH = "application/merge-patch+json"


class KubeEvictor:
    def __init__(self, api_client: client.ApiClient, server: str = "", timeout: float = 30.0) -> None:
        self._core = client.CoreV1Api(api_client)
        self._policy = client.PolicyV1Api(api_client)
        self._api = api_client
        self._server = server
        self._timeout = timeout

    def evict(self, namespace: str, name: str) -> str:
        body = {"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": name, "namespace": namespace}}
        try:
            # a dict body is sent as it is (the V1Eviction model class would cost its import, see raw.py)
            self._core.create_namespaced_pod_eviction(name, namespace, body,  # type: ignore[arg-type]
                                                      _request_timeout=self._timeout,
                                                      _preload_content=False)
        except ApiException as exc:
            status = parse_status(exc.body)
            causes = [c.get("message", "") for c in (status.get("details") or {}).get("causes") or [] if c.get("message")]
            raise EvictionRefused(int(exc.status or 0), (status.get("message") or str(exc.reason)).strip(),
                                  "; ".join(causes) or None) from None
        except (urllib3.exceptions.HTTPError, OSError) as exc:
            raise ActionError(describe_call_error(exc, self._server, f"Evicting pod {namespace}/{name}")) from None
        return f"pod {namespace}/{name} evicted"

    def nominate(self, namespace: str, name: str, node: str) -> str:
        """Set the pending target's `status.nominatedNodeName`: kube-scheduler's nominator then counts it on
        that node for pods of no higher priority (a replacement does not take its room), as after preemption."""
        try:
            self._core.patch_namespaced_pod_status(name, namespace, {"status": {"nominatedNodeName": node}},
                                                   _content_type=MERGE_PATCH, _request_timeout=self._timeout,
                                                   _preload_content=False)
        except (ApiException, urllib3.exceptions.HTTPError, OSError) as exc:
            raise ActionError(describe_call_error(exc, self._server, f"Nominating pod {namespace}/{name}")) from None
        return f"pod {namespace}/{name} nominated to {node}"

    def budgets(self) -> list[dict]:
        """Every PodDisruptionBudget, as the API returns it (status.disruptionsAllowed from the controller)."""
        try:
            resp = self._policy.list_pod_disruption_budget_for_all_namespaces(
                _request_timeout=self._timeout, _preload_content=False)
        except (ApiException, urllib3.exceptions.HTTPError, OSError) as exc:
            raise ActionError(describe_call_error(exc, self._server, "Listing PodDisruptionBudgets")) from None
        return list(response_json(resp).get("items") or [])

    def get(self, kind: str, namespace: str, name: str) -> dict | None:
        """A Pod as a dict (None when it is gone), for following the apply."""
        if kind != "Pod":
            raise ValueError(kind)
        try:
            resp = self._core.read_namespaced_pod(name, namespace, _request_timeout=self._timeout,
                                                  _preload_content=False)
        except ApiException as exc:
            if exc.status == 404:
                return None
            raise ActionError(describe_call_error(exc, self._server, f"Reading pod {namespace}/{name}")) from None
        except (urllib3.exceptions.HTTPError, OSError) as exc:
            raise ActionError(describe_call_error(exc, self._server, f"Reading pod {namespace}/{name}")) from None
        return response_json(resp)
