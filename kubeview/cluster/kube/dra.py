"""Which DRA kinds (`resource.k8s.io/v1`) the API server serves, asked once through discovery.

The GPU ledger (model/gpus/ledger.py) needs DeviceClasses, ResourceSlices and ResourceClaims; a
cluster older than 1.34 (or with the group switched off) answers 404 for the group version, and
then kubeview watches what it always did. Only the v1 API is used (the recordings show 1.36 serving
nothing else); claims are read in all namespaces even with -n, because node figures need every claim.
"""

from __future__ import annotations

from kubernetes import client

from kubeview.cluster.kube.raw import RawApi, read_optional

GROUP_VERSION = "resource.k8s.io/v1"
# kind -> (plural, cluster-wide list method of client.ResourceV1Api)
DRA_API = {
    "DeviceClass": ("deviceclasses", "list_device_class"),
    "ResourceSlice": ("resourceslices", "list_resource_slice"),
    "ResourceClaim": ("resourceclaims", "list_resource_claim_for_all_namespaces"),
}
# Read where discovery serves them and RBAC allows, dropped silently otherwise (the ledger works without):
# kind -> (plural, API class, cluster-wide list method). DeviceTaintRule is GA in 1.37;
# ResourcePoolStatusRequest is alpha (gate DRAResourcePoolStatus, `--runtime-config` resource.k8s.io/v1alpha3).
OPTIONAL_API = {
    "DeviceTaintRule": ("devicetaintrules", "ResourceV1Api", "list_device_taint_rule"),
    "ResourcePoolStatusRequest": ("resourcepoolstatusrequests", "ResourceV1alpha3Api",
                                  "list_resource_pool_status_request"),
}


def served_dra_kinds(api_client: client.ApiClient, timeout: float = 10.0) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The DRA kinds discovery lists with both `list` and `watch`, each group version asked once:
    (DRA_API's, OPTIONAL_API's); () when the group version is not served (404) or its discovery is
    refused or garbled. A network failure (refused, timed out, TLS) raises: it is the first request."""
    v1 = served_kinds("ResourceV1Api", api_client, timeout)
    required = tuple(k for k in DRA_API if {"list", "watch"} <= v1.get(k, set()))
    optional = []
    if required:
        for api_class in dict.fromkeys(v[1] for v in OPTIONAL_API.values()):
            served = v1 if api_class == "ResourceV1Api" else served_kinds(api_class, api_client, timeout)
            optional += [k for k, v in OPTIONAL_API.items()
                         if v[1] == api_class and {"list", "watch"} <= served.get(k, set())]
    return required, tuple(optional)


def served_kinds(api_class: str, api_client: client.ApiClient, timeout: float) -> dict[str, set[str]]:
    """kind -> verbs of one group version's discovery; {} when not served (404) or on failure."""
    body = read_optional(lambda: RawApi(api_client, api_class).get_api_resources(
        _preload_content=False, _request_timeout=(timeout, timeout)),
        f"discovery for {api_class}", "its kinds are not read")
    if body is None:
        return {}
    return {r.get("kind"): set(r.get("verbs") or ()) for r in body.get("resources") or ()
            if "/" not in (r.get("name") or "")}
