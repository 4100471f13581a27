"""The API server's version (`GET /version`), asked once beside discovery: the header names it and
what this version does not serve (model/server_version.py)."""

from __future__ import annotations

from kubernetes import client

from kubeview.cluster.kube.raw import read_optional
from kubeview.model.server_version import ServerVersion, parse_version


def server_version(api_client: client.ApiClient, timeout: float = 10.0) -> ServerVersion | None:
    """None when the server does not say (a proxy that hides /version, a 403); a network failure
    raises like the rest of discovery."""
    body = read_optional(lambda: client.VersionApi(api_client).get_code(
        _preload_content=False, _request_timeout=(timeout, timeout)), "GET /version", "the header names no version")
    text = body.get("gitVersion") if isinstance(body, dict) else None
    return parse_version(text) if isinstance(text, str) and text else None
