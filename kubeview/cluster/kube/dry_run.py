"""Would the API server create these objects: a server-side dry run (`dryRun=All`) of each Pod and
workload of a manifest, before `kubeview fit` places them.

One POST per object answers validation, defaulting, LimitRange, ResourceQuota and admission webhooks
together, and creates nothing. A refusal comes back in the API server's words (a 422's first field,
as the local checks of `model/resource_validation.py` print it). No answer, and the caller falls
back to those local checks, saying so, where RBAC does not let the identity create the kind, or the
server cannot dry-run a create of it at all: no such route (a 404 that names no object: an API not
served, or a stand-in API server), or the method or dry run not served there (405, 501).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import urllib3.exceptions
from kubernetes import client
from kubernetes.client.exceptions import ApiException

from kubeview.cluster.kube.errors import parse_status

PLURALS = {"Pod": "pods", "Deployment": "deployments", "ReplicaSet": "replicasets", "StatefulSet": "statefulsets",
           "Job": "jobs"}
TIMEOUT = (5.0, 10.0)  # connect, read (webhooks run inside the answer)
RBAC_DENIED = " cannot create resource "  # the authorizer's words (`User "x" cannot create resource "pods" ...`)
# No route for the create, no create there, no dry run there: the server cannot answer, the local checks
# stand in. A 404 only when its Status names no object (`namespaces "x" not found` is a refusal).
CANNOT_DRY_RUN = (404, 405, 501)


@dataclass(slots=True)
class Refusal:
    message: str  # the API server's, one line
    status: int  # 422 Invalid, 403 quota or LimitRange, 404 no such namespace, ...


@dataclass(slots=True)
class DryRun:
    refused: list[Refusal] = field(default_factory=list)
    asked: bool = True  # False: the API server could not answer for every object; the local checks stand in
    why_not: str | None = None  # one line to show when it could not (None: say nothing, e.g. unreachable)


def dry_run(api: client.ApiClient, objects: list[dict], namespace: str) -> DryRun:
    """POST each Pod and workload of `objects` with dryRun=All (in its namespace, else `namespace`)."""
    out = DryRun()
    for obj in objects:
        plural = PLURALS.get(str(obj.get("kind")))
        if plural is None:
            continue
        api_version = str(obj.get("apiVersion") or "v1")
        base = f"/apis/{api_version}" if "/" in api_version else f"/api/{api_version}"
        ns = (obj.get("metadata") or {}).get("namespace") or namespace
        try:
            request = api.param_serialize("POST", f"{base}/namespaces/{ns}/{plural}", query_params=[("dryRun", "All")],
                                          header_params={"Accept": "application/json",
                                                         "Content-Type": "application/json"},
                                          body=obj, auth_settings=["BearerToken"])
            response = api.call_api(*request, _request_timeout=TIMEOUT)
            code, body = response.status, response.read()
        except ApiException as exc:  # TLS and the like (status 0): the cluster read says it in its words
            if exc.status:
                code, body = exc.status, exc.body
            else:
                return DryRun(out.refused, asked=False)
        except (urllib3.exceptions.HTTPError, OSError):
            return DryRun(out.refused, asked=False)
        if 200 <= code <= 299 or code == 409:  # 409: it exists; applying the manifest again is what fit answers
            continue
        status = parse_status(body)
        message = str(status.get("message") or "").strip() or f"the API server answered {code}"
        if code == 403 and RBAC_DENIED in message:
            return DryRun(out.refused, False, f"no dry run: the API server does not let this identity create "
                                              f"{plural} in {ns} (RBAC); kubeview's own checks instead")
        if code in CANNOT_DRY_RUN and not (code == 404 and (status.get("details") or {}).get("kind")):
            return DryRun(out.refused, False, f"no dry run: the API server could not dry-run creating {plural} in "
                                              f"{ns} (it answered {code}); kubeview's own checks instead")
        if not 400 <= code <= 499:
            return DryRun(out.refused, False, f"no dry run: the API server answered {code}; "
                                              "kubeview's own checks instead")
        out.refused.append(Refusal(first_cause(status, message), code))
    return out


def first_cause(status: dict, message: str) -> str:
    """A 422's message cut to its first field (`Pod "p" is invalid: spec...: Invalid value: ...`), as
    the local checks say it; any other message whole, on one line."""
    causes = (status.get("details") or {}).get("causes") or []
    head, sep, _ = message.partition(" is invalid: ")
    if sep and causes and isinstance(causes[0], dict) and causes[0].get("field"):
        return f"{head} is invalid: {causes[0]['field']}: {causes[0].get('message', '')}"
    return " ".join(message.split())
