"""kubeview's Jobs against the real Job controller's (issue #25, 3d): one Job's counts and index strip
as kubeview shows them, and the same read from the API server independently.

A comparison only counts when both sides are at the same moment: kubeview holds the Job and each of
its pods at the resourceVersions a fresh list has. Then the counts must equal the Job's status, and
the index strip must say S exactly for `completedIndexes`, F exactly for `failedIndexes` (parsed here
on their own, not with kubeview's parser) and R for an index with a Running pod not being deleted.
Objects keep moving (kwok finishes pods 1 s after they run), so the read is retried until a
consistent moment comes; a consistent moment that differs fails at once.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from kubernetes import client

from kubeview.model.cluster import ClusterModel
from kubeview.model.jobs.progress import index_strip, strip_text

from .live_view import LiveView
from .procs import wait_until

COUNTS = ("active", "ready", "succeeded", "failed", "terminating")
INDEX_KEY = "batch.kubernetes.io/job-completion-index"


def _indexes(text: str | None) -> set[int]:
    out: set[int] = set()
    for part in filter(None, (text or "").split(",")):
        lo, _, hi = part.partition("-")
        out.update(range(int(lo), int(hi or lo) + 1))
    return out


def api_view(job: dict, pods: list[dict]) -> dict:
    """What the Job's status and pods say, in the shape `kubeview_view` returns."""
    status = job.get("status") or {}
    n = job["spec"].get("completions")
    strip = ""
    if job["spec"].get("completionMode") == "Indexed" and n is not None:
        done, failed = _indexes(status.get("completedIndexes")), _indexes(status.get("failedIndexes"))
        running = {int(p["metadata"]["annotations"][INDEX_KEY]) for p in pods if p["status"].get("phase") == "Running"
                   and not p["metadata"].get("deletionTimestamp")}
        strip = "".join("S" if i in done else "F" if i in failed else "R" if i in running else "?" for i in range(n))
    conditions = sorted(c["type"] for c in status.get("conditions") or () if c.get("status") == "True")
    return {"counts": {k: int(status.get(k) or 0) for k in COUNTS}, "strip": strip, "conditions": conditions,
            "suspend": bool(job["spec"].get("suspend")), "parallelism": job["spec"].get("parallelism")}


def kubeview_view(model: ClusterModel, namespace: str, name: str) -> tuple[dict | None, dict[str, str]]:
    """kubeview's Job (None if it has none) and the resourceVersions of the Job and its pods it holds."""
    job = model.jobs.jobs.get((namespace, name))
    if job is None:
        return None, {}
    pods = model.jobs.pods_of(namespace, name)
    # pending and not-started indexes both read "?" on the API side: which one it is depends on a pod
    # kubeview may not be sent yet; S, F and R are the claims checked
    strip = "".join(c if c in "SFR" else "?" for c in strip_text(index_strip(job, pods)))
    view = {"counts": {k: getattr(job, k) for k in COUNTS}, "strip": strip,
            "conditions": sorted(c.type for c in job.conditions if c.status == "True"),
            "suspend": job.suspend, "parallelism": job.parallelism}
    return view, {name: job.resource_version, **{p.name: p.resource_version for p in pods}}


@dataclass
class JobChecker:
    """Compares one namespace's Jobs; `seen` counts the distinct (Job, state) pairs found equal."""

    view: LiveView
    api_client: client.ApiClient
    namespace: str
    seen: set[tuple[str, str]] = field(default_factory=set)

    def _api(self, name: str) -> tuple[dict, dict[str, str]] | None:
        batch, core = client.BatchV1Api(self.api_client), client.CoreV1Api(self.api_client)
        try:
            job = json.loads(batch.read_namespaced_job(name, self.namespace, _preload_content=False).data)
        except client.ApiException as exc:
            if exc.status == 404:
                return None
            raise
        pods = json.loads(core.list_namespaced_pod(self.namespace, label_selector=f"batch.kubernetes.io/job-name={name}",
                                                   _preload_content=False).data)["items"]
        versions = {name: job["metadata"]["resourceVersion"], **{p["metadata"]["name"]: p["metadata"]["resourceVersion"]
                                                                  for p in pods}}
        return api_view(job, pods), versions

    def consistent(self, name: str) -> dict | None:
        """The Job's view when kubeview and the API agree on every version (None: not the same moment
        yet); AssertionError when they are at the same moment and differ."""
        theirs = self._api(name)
        mine, versions = self.view.read(lambda m: kubeview_view(m, self.namespace, name))
        if theirs is None or mine is None or versions != theirs[1]:
            return None
        assert mine == theirs[0], f"Job {name}: kubeview {mine} != API {theirs[0]}"
        self.seen.add((name, json.dumps(mine, sort_keys=True)))
        return mine

    def wait(self, names: list[str], done, what: str, timeout: float = 40.0) -> dict[str, dict]:
        """Check every Job at each consistent moment until `done(view)` holds for all of them."""
        last: dict[str, dict] = {}

        def all_done() -> bool:
            for name in names:
                v = self.consistent(name)
                if v is not None:
                    last[name] = v
            return len(last) == len(names) and all(done(last[n]) for n in names)

        try:
            wait_until(all_done, timeout, what, interval=0.1)
        except AssertionError as exc:
            if "kubeview" in str(exc):
                raise
            raise AssertionError(f"{exc}; last consistent views {last}") from None
        return last
