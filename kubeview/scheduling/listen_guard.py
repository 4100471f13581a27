"""Whether the extender may listen where it was asked without any authentication (#24 item 3).

`PUT /config` changes how the whole cluster places GPU pods. On a loopback address only local
processes reach it; anywhere else it must need a token (`--token-file`) or a client certificate
(`--client-ca`), unless the user accepts the risk with `--insecure-allow-unauthenticated`. Pure: the
host is judged as written (a name other than `localhost` counts as reachable from elsewhere).
"""

from __future__ import annotations

import ipaddress

INSECURE_FLAG = "--insecure-allow-unauthenticated"


def is_loopback(host: str) -> bool:
    """127.0.0.0/8, ::1 or `localhost`; "" and 0.0.0.0/:: (every interface) are not."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def refusal(host: str, port: int, *, token: bool, client_ca: bool, insecure: bool) -> str | None:
    """The one-line reason to refuse listening on host:port, or None when it is allowed."""
    if token or client_ca or insecure or is_loopback(host):
        return None
    shown = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    return (f"--listen {shown} is reachable from other hosts, and without authentication anyone there could "
            f"change GPU placement through PUT /config; pass --token-file FILE or --client-ca FILE "
            f"(or {INSECURE_FLAG} to accept that).")
