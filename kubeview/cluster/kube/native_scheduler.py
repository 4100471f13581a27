"""The native profile of the second scheduler on a real cluster: read it, apply a new policy to it.

Applying writes what `kubeview scheduler-manifests` would (scheduling/scheduler_manifests.py): the
ConfigMap's `config.yaml`, then the configuration's hash on the Deployment's pod template, so the
Deployment controller rolls kube-scheduler, which reads its configuration only at start. The result
line says so: the policy is live once the new scheduler pod has started and won its lease, not now.
"""

from __future__ import annotations

import urllib3.exceptions
import yaml
from kubernetes import client
from kubernetes.client.exceptions import ApiException

from kubeview.cluster.kube.errors import describe_call_error
from kubeview.cluster.kube.jobs import MERGE_PATCH
from kubeview.cluster.kube.raw import response_json
from kubeview.cluster.source import ActionError
from kubeview.scheduling.config import PackingConfig
from kubeview.scheduling.native_profile import SCHEDULER_NAME, config_from_configuration
from kubeview.scheduling.scheduler_manifests import (
    CONFIG_HASH,
    CONFIG_MAP,
    NAMESPACE,
    config_hash,
    config_text,
    configuration,
)

_ERRORS = (ApiException, urllib3.exceptions.HTTPError, OSError)


def read_native(api_client: client.ApiClient, server: str, connect_timeout: float) -> PackingConfig:
    """The policy the ConfigMap's profile packs with (native set)."""
    core = client.CoreV1Api(api_client)
    where = f"ConfigMap {NAMESPACE}/{CONFIG_MAP}"
    try:
        cm = response_json(core.read_namespaced_config_map(CONFIG_MAP, NAMESPACE, _preload_content=False,
                                                           _request_timeout=(connect_timeout, 30)))
    except _ERRORS as exc:
        raise ActionError(describe_call_error(exc, server, f"Reading {where}")) from None
    try:
        return config_from_configuration(yaml.safe_load(((cm or {}).get("data") or {}).get("config.yaml") or ""))
    except (ValueError, yaml.YAMLError) as exc:
        raise ActionError(f"{where} holds no native profile kubeview can read: {exc}.") from None


def apply_native(api_client: client.ApiClient, server: str, connect_timeout: float, config: PackingConfig) -> str:
    """Write `config`'s profile and roll the scheduler; one line saying what happens next."""
    if config.native is None:
        raise ActionError("the policy has no native form set; native mode applies native profiles only.")
    if config.bias or config.avoid:
        raise ActionError("native packing has no per-node bias or avoid (only the extender has): reset them "
                          "before applying.")
    text = config_text(configuration("native", config.native))
    timeout = (connect_timeout, 30)
    try:
        client.CoreV1Api(api_client).patch_namespaced_config_map(
            CONFIG_MAP, NAMESPACE, {"data": {"config.yaml": text}}, _content_type=MERGE_PATCH,
            _preload_content=False, _request_timeout=timeout)
    except _ERRORS as exc:
        raise ActionError(describe_call_error(exc, server, f"Writing ConfigMap {NAMESPACE}/{CONFIG_MAP}")) from None
    patch = {"spec": {"template": {"metadata": {"annotations": {CONFIG_HASH: config_hash(text)}}}}}
    try:
        client.AppsV1Api(api_client).patch_namespaced_deployment(
            SCHEDULER_NAME, NAMESPACE, patch, _content_type=MERGE_PATCH, _preload_content=False,
            _request_timeout=timeout)
    except _ERRORS as exc:
        said = describe_call_error(exc, server, f"Rolling Deployment {NAMESPACE}/{SCHEDULER_NAME}") or str(exc)
        raise ActionError(f"{said} The ConfigMap is written: the policy takes effect at the scheduler's next "
                          "start.") from None
    return (f"packing policy {config.policy} ({config.native.strategy}) written to {NAMESPACE}/{CONFIG_MAP}; "
            f"{SCHEDULER_NAME} is restarting with it (not instant: until its new pod holds the lease, the old "
            "profile schedules).")
