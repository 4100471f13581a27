"""Which DRA kinds (`resource.k8s.io/v1`) the API server serves, asked once through discovery.

The GPU ledger (model/gpu_ledger.py) needs DeviceClasses, ResourceSlices and ResourceClaims; a
cluster older than 1.34 (or with the group switched off) answers 404 for the group version, and
then kubeview watches what it always did. Only the v1 API is used (the recordings show 1.36 serving
nothing else); claims are read in all namespaces even with -n, because node figures need every claim.
"""

from __future__ import annotations

import json
import logging

from kubernetes import client
from kubernetes.client.exceptions import ApiException

from kubeview.cluster.kube.raw import RawApi

log = logging.getLogger(__name__)

GROUP_VERSION = "resource.k8s.io/v1"
# kind -> (plural, cluster-wide list method of client.ResourceV1Api)
DRA_API = {
    "DeviceClass": ("deviceclasses", "list_device_class"),
    "ResourceSlice": ("resourceslices", "list_resource_slice"),
    "ResourceClaim": ("resourceclaims", "list_resource_claim_for_all_namespaces"),
}


def served_dra_kinds(api_client: client.ApiClient, timeout: float = 10.0) -> tuple[str, ...]:
    """The DRA kinds discovery lists with both `list` and `watch`; () when the group version is not
    served (404) or discovery fails otherwise (the other kinds' informers report connection trouble)."""
    try:
        resp = RawApi(api_client, "ResourceV1Api").get_api_resources(_preload_content=False,
                                                                      _request_timeout=(timeout, timeout))
        body = json.loads(resp.data)
    except ApiException as exc:
        if exc.status != 404:
            log.info("discovery of %s failed (%s): DRA GPUs not shown", GROUP_VERSION, exc.status)
        return ()
    except Exception as exc:  # the network: the informers will say so
        log.info("discovery of %s failed: %s", GROUP_VERSION, exc)
        return ()
    served = {r.get("kind"): set(r.get("verbs") or ()) for r in body.get("resources") or ()
              if "/" not in (r.get("name") or "")}
    return tuple(k for k in DRA_API if {"list", "watch"} <= served.get(k, set()))
