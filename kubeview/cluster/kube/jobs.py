"""Job actions on a real cluster: merge patches of `spec.parallelism` and `spec.suspend`.

What a real apiserver answers (tests/fixtures/k8s/jobs/, patch/): the whole Job with the new spec,
`metadata.generation` + 1 and the old status; the Job controller then adds or deletes pods (it
strips their tracking finalizer first, so pods removed by a lower parallelism or a suspend are not
counted as failed). The result line says what was asked, not what the controller has done yet.
"""

from __future__ import annotations

import urllib3.exceptions
from kubernetes import client
from kubernetes.client.exceptions import ApiException

from kubeview.cluster.kube.errors import describe_call_error
from kubeview.cluster.source import ActionError

MERGE_PATCH = "application/merge-patch+json"


def job_change(parallelism: int | None = None, suspend: bool | None = None) -> dict:
    """The merge patch's body: only the fields being changed (pure)."""
    spec: dict = {}
    if parallelism is not None:
        if isinstance(parallelism, bool) or not isinstance(parallelism, int) or parallelism < 0:
            raise ActionError(f"parallelism must be 0 or more, not {parallelism}")
        spec["parallelism"] = parallelism
    if suspend is not None:
        spec["suspend"] = bool(suspend)
    if not spec:
        raise ActionError("nothing to change on the Job")
    return {"spec": spec}


def describe_change(namespace: str, name: str, body: dict) -> str:
    spec = body["spec"]
    if "parallelism" in spec:
        return f"Job {namespace}/{name} parallelism set to {spec['parallelism']}."
    return f"Job {namespace}/{name} {'suspended' if spec['suspend'] else 'resumed'}."


def patch_job(api_client: client.ApiClient, server: str, connect_timeout: float, namespace: str, name: str, *,
              parallelism: int | None = None, suspend: bool | None = None) -> str:
    """Merge-patch the Job through `api_client` (the source's; passed in, so this module sits below
    the source rather than importing it)."""
    body = job_change(parallelism, suspend)
    what = "Setting parallelism of" if "parallelism" in body["spec"] else (
        "Suspending" if body["spec"]["suspend"] else "Resuming")
    action = f"{what} Job {namespace}/{name}"
    api = client.BatchV1Api(api_client)
    try:
        api.patch_namespaced_job(name, namespace, body, _content_type=MERGE_PATCH, _preload_content=False,
                                 _request_timeout=(connect_timeout, 30))
    except (ApiException, urllib3.exceptions.HTTPError, OSError) as exc:
        raise ActionError(describe_call_error(exc, server, action)) from None
    return describe_change(namespace, name, body)
