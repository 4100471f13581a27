"""List and watch calls by path, without the generated API classes.

kubernetes 37's client builds a pydantic model class for every type an API class names when that
class is first touched: `client.CoreV1Api` alone takes 1.6-2.4 s of import on the 2-core VM (bench
cluster, docs/architecture.md "Reading a real API server at scale"), paid by every `kubeview` start
before the first byte is read, although kubeview never decodes into those models (every list and
watch is `_preload_content=False`, decoded with json). These callers take the same keyword
arguments as the generated `list_*` methods and go through the same ApiClient path
(`param_serialize` then `_call_with_legacy_options`: auth, TLS, timeouts, a non-2xx raised as
ApiException), so informers cannot tell the difference.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from typing import Any, cast

import urllib3
from kubernetes import client
from kubernetes.client.exceptions import ApiException

from kubeview.cluster.kube.errors import NETWORK_ERRORS

log = logging.getLogger(__name__)

# the API class kubeview would use -> its path prefix
PREFIX = {"CoreV1Api": "/api/v1", "AppsV1Api": "/apis/apps/v1", "BatchV1Api": "/apis/batch/v1",
          "ResourceV1Api": "/apis/resource.k8s.io/v1", "ResourceV1alpha3Api": "/apis/resource.k8s.io/v1alpha3",
          "KarpenterV1Api": "/apis/karpenter.sh/v1"}  # no generated class: Karpenter's CRDs, by path
# keyword argument of the generated methods -> query parameter
QUERY = {"watch": "watch", "resource_version": "resourceVersion", "allow_watch_bookmarks": "allowWatchBookmarks",
         "timeout_seconds": "timeoutSeconds", "limit": "limit", "_continue": "continue",
         "label_selector": "labelSelector", "field_selector": "fieldSelector"}


def raw_response(response: object) -> urllib3.BaseHTTPResponse:
    """What a `_preload_content=False` call returns: the urllib3 response, whatever the generated
    method's annotation says (it names the model class kubeview never builds)."""
    return cast(urllib3.BaseHTTPResponse, response)


def response_json(response: object) -> Any:
    """The JSON body of a `_preload_content=False` call (json.loads: a ValueError when it is not)."""
    return json.loads(raw_response(response).data)


def read_optional(call: Callable[[], object], what: str, without: str) -> Any | None:
    """The JSON body of one optional read made at start (a group version's discovery, /version): None
    when the server answers an error (logged, "`what` failed (403): `without`", unless a 404: not
    served) or not JSON, and the view goes on without it. A failure of the wire raises (the client's
    wrapper of a TLS failure as ConnectionError): the server cannot be read at all, and KubeSource.run
    says so once, at once."""
    try:
        return response_json(call())
    except ApiException as exc:
        if not exc.status:  # the client's wrapper for a TLS failure: the network
            raise ConnectionError(exc.reason) from None
        if exc.status != 404:
            log.info("%s failed (%s): %s", what, exc.status, without)
        return None
    except NETWORK_ERRORS:
        raise
    except Exception as exc:  # not JSON
        log.info("%s failed: %s", what, exc)
        return None


class RawApi:
    """`RawApi(api_client, "CoreV1Api").list_namespaced_pod(ns, limit=500, _preload_content=False)`:
    the generated class's list methods by name, for the plurals kubeview reads."""

    def __init__(self, api_client: client.ApiClient, api_class: str) -> None:
        self.api_client = api_client
        self.prefix = PREFIX[api_class]

    def __getattr__(self, method: str) -> Callable[..., object]:
        if not method.startswith("list_"):
            raise AttributeError(method)
        namespaced = method.startswith("list_namespaced_")
        return lambda *args, **kwargs: self.call(_plural(method), args[0] if namespaced else None, **kwargs)

    def get_api_resources(self, _preload_content: bool = False, _request_timeout: object = None) -> object:
        """The group version's discovery document (the generated classes' get_api_resources), raw."""
        return self._get(self.prefix + "/", [], _preload_content, _request_timeout)

    def read(self, plural: str, namespace: str, name: str, _request_timeout: object = None) -> object:
        """GET one namespaced object, raw (what `read_namespaced_pod` does, without building the
        generated class's models: the pod screen's on-demand read)."""
        return self._get(f"{self.prefix}/namespaces/{namespace}/{plural}/{name}", [], False, _request_timeout)

    def call(self, plural: str, namespace: str | None, _preload_content: bool = False,
             _request_timeout: object = None, **kwargs: object) -> object:
        """GET the collection; the raw urllib3 response (kubeview reads every list undecoded)."""
        path = self.prefix + (f"/namespaces/{namespace}" if namespace else "") + f"/{plural}"
        unknown = set(kwargs) - set(QUERY)
        if unknown:
            raise TypeError(f"unexpected keyword argument(s) {', '.join(sorted(unknown))}")
        query = [(QUERY[k], str(v).lower() if isinstance(v, bool) else v) for k, v in kwargs.items() if v is not None]
        return self._get(path, query, _preload_content, _request_timeout)

    def _get(self, path: str, query: list, _preload_content: bool, _request_timeout: object) -> object:
        if _preload_content:
            raise ValueError("RawApi returns raw responses only (_preload_content=False)")
        request = self.api_client.param_serialize("GET", path, query_params=query,
                                                  header_params={"Accept": "application/json"},
                                                  auth_settings=["BearerToken"])
        return self.api_client._call_with_legacy_options(request, {}, None, False, _request_timeout, True)


def _plural(method: str) -> str:
    """list_namespaced_replica_set / list_replica_set_for_all_namespaces / list_node -> the plural."""
    name = method.removeprefix("list_namespaced_").removeprefix("list_").removesuffix("_for_all_namespaces")
    return name.replace("_", "") + ("es" if name.endswith("s") else "s")
