"""batch/v1 Jobs on the test API server, from the recordings in tests/fixtures/k8s/jobs/.

`serve_recorded(api, folder)` makes the server answer as the recorded control plane did for one
scenario (`indexed`, `nonindexed`, `node-deleted`, `patch`): the Jobs and pods lists that started
its watches, and the recorded watch streams. A Job PATCH is a JSON merge patch on the stored Job,
as kube-apiserver does it (jobs/README.md, "patch/"): the new spec, `metadata.generation` + 1, a new
resourceVersion and the **old status** (the Job controller has not acted yet). Only
`application/merge-patch+json` and `application/strategic-merge-patch+json` are taken, and
`spec.parallelism` must be an integer >= 0 and `spec.suspend` a boolean (422 otherwise, as the
apiserver's validation).
"""

from __future__ import annotations

import copy
import json
from typing import TYPE_CHECKING

from . import fixtures

if TYPE_CHECKING:
    from .server import KubeAPI, RecordedRequest

JOBS = "jobs/"
PATCHABLE = ("application/merge-patch+json", "application/strategic-merge-patch+json")


def load(folder: str, name: str) -> dict:
    return fixtures.load(f"{JOBS}{folder}/{name}")


def job_list(jobs: list[dict], resource_version: str) -> dict:
    return {"kind": "JobList", "apiVersion": "batch/v1", "metadata": {"resourceVersion": resource_version},
            "items": jobs}


def pod_list(pods: list[dict], resource_version: str) -> dict:
    return {"kind": "PodList", "apiVersion": "v1", "metadata": {"resourceVersion": resource_version},
            "items": pods}


def serve_recorded(api: KubeAPI, folder: str, *, watch: bool = True) -> None:
    """Lists and (with `watch`) the watch streams of one recorded scenario, all namespaces and `batch`."""
    from .server import WatchScript

    jobs = fixtures.raw(f"{JOBS}{folder}/jobs-list-initial.json")
    pods = fixtures.raw(f"{JOBS}{folder}/pods-list-initial.json")
    for path in ("/apis/batch/v1/jobs", "/apis/batch/v1/namespaces/batch/jobs"):
        api.set_list(path, jobs)
        if watch:
            api.script_watch(path, WatchScript.recorded(f"{JOBS}{folder}/watch-jobs.jsonl"))
    for path in ("/api/v1/pods", "/api/v1/namespaces/batch/pods"):
        api.set_list(path, pods)
        if watch:
            api.script_watch(path, WatchScript.recorded(f"{JOBS}{folder}/watch-pods.jsonl"))
    for item in json.loads(jobs)["items"]:
        api.add_job(item)


def serve_step(api: KubeAPI, job: dict, pods: list[dict]) -> None:
    """Lists holding one recorded step: this Job and these pods (watches then stay quiet)."""
    rv = job["metadata"]["resourceVersion"]
    item = {k: v for k, v in job.items() if k not in ("kind", "apiVersion")}
    for path in ("/apis/batch/v1/jobs", "/apis/batch/v1/namespaces/batch/jobs"):
        api.set_list(path, job_list([item], rv))
    for path in ("/api/v1/pods", "/api/v1/namespaces/batch/pods"):
        api.set_list(path, pod_list(pods, rv))
    api.add_job(item)


def merge_patch(target: object, patch: object) -> object:
    """RFC 7386 JSON merge patch."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    out = dict(target) if isinstance(target, dict) else {}
    for k, v in patch.items():
        if v is None:
            out.pop(k, None)
        else:
            out[k] = merge_patch(out.get(k), v)
    return out


def invalid(name: str, field: str, value: object, detail: str) -> dict:
    """A 422 Status as the apiserver words a Job validation failure."""
    shown = json.dumps(value)
    return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": f'Job.batch "{name}" is invalid: {field}: Invalid value: {shown}: {detail}',
            "reason": "Invalid",
            "details": {"name": name, "group": "batch", "kind": "Job",
                        "causes": [{"reason": "FieldValueInvalid", "message": f"Invalid value: {shown}: {detail}",
                                    "field": field}]},
            "code": 422}


def handle(api: KubeAPI, method: str, namespace: str, name: str, req: RecordedRequest) -> tuple[int, dict]:
    """GET or PATCH /apis/batch/v1/namespaces/NS/jobs/NAME: (HTTP status, body)."""
    key = (namespace, name)
    with api._lock:
        job = copy.deepcopy(api._jobs.get(key))
    if job is None:
        return 404, {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                     "message": f'jobs.batch "{name}" not found', "reason": "NotFound",
                     "details": {"name": name, "group": "batch", "kind": "jobs"}, "code": 404}
    if method == "GET":
        return 200, job
    if method != "PATCH":
        return 405, {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                     "message": f"{method} is not supported", "reason": "MethodNotAllowed", "code": 405}
    ctype = (req.headers.get("Content-Type") or "").split(";")[0].strip()
    if ctype not in PATCHABLE:
        return 415, {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                     "message": f"the body of the request was in an unknown format: {ctype}",
                     "reason": "UnsupportedMediaType", "code": 415}
    spec_patch = ((req.json() or {}).get("spec") or {})
    if "parallelism" in spec_patch:
        p = spec_patch["parallelism"]
        if not isinstance(p, int) or isinstance(p, bool) or p < 0:
            return 422, invalid(name, "spec.parallelism", p, "must be greater than or equal to 0")
    if "suspend" in spec_patch and not isinstance(spec_patch["suspend"], bool):
        return 422, invalid(name, "spec.suspend", spec_patch["suspend"], "must be a boolean")
    fresh = merge_patch(job, {"spec": spec_patch})
    assert isinstance(fresh, dict)
    fresh["status"] = job.get("status") or {}  # the status subresource is not patched here
    if fresh["spec"] != job.get("spec"):
        meta = fresh["metadata"]
        meta["generation"] = int(meta.get("generation", 1)) + 1
        meta["resourceVersion"] = str(int(meta.get("resourceVersion") or "0") + 1)
    with api._lock:
        api._jobs[key] = fresh
    return 200, fresh
