"""The API server's version (`GET /version`), asked once beside discovery: the header names it and
what this version does not serve (model/server_version.py)."""

from __future__ import annotations

import logging

from kubernetes import client
from kubernetes.client.exceptions import ApiException

from kubeview.cluster.kube.errors import NETWORK_ERRORS
from kubeview.cluster.kube.raw import response_json
from kubeview.model.server_version import ServerVersion, parse_version

log = logging.getLogger(__name__)


def server_version(api_client: client.ApiClient, timeout: float = 10.0) -> ServerVersion | None:
    """None when the server does not say (a proxy that hides /version, a 403); a network failure
    raises like the rest of discovery."""
    try:
        resp = client.VersionApi(api_client).get_code(_preload_content=False, _request_timeout=(timeout, timeout))
        text = response_json(resp).get("gitVersion")
    except ApiException as exc:
        if not exc.status:
            raise ConnectionError(exc.reason) from None
        log.info("GET /version failed (%s): the header names no version", exc.status)
        return None
    except NETWORK_ERRORS:
        raise
    except Exception as exc:  # not a version document
        log.info("GET /version: %s", exc)
        return None
    return parse_version(text) if isinstance(text, str) and text else None
