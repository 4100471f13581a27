"""Jobs through KubeSource and the real `kubernetes` client against the test API server serving the
recorded Jobs (tests/fixtures/k8s/jobs): each step's counts and index strip as recorded, the whole
recorded watch, and the PATCHes kubeview sends for parallelism and suspend."""

from __future__ import annotations

import json

import pytest
from kubeapi import KubeAPI, WatchScript, fixtures
from kubeapi import jobs as job_api
from kubeapi.source_run import collect_events

from kubeview.cluster.kube.source import KubeSource, WatchSettings
from kubeview.cluster.source import ActionError
from kubeview.model.cluster import ClusterModel
from kubeview.model.events import WatchEvent
from kubeview.model.jobs.progress import disrupted_pods, index_strip, strip_text
from kubeview.model.kinds import events_unavailable
from kubeview.snapshot.document import SNAPSHOT_SCHEMA, build_snapshot
from kubeview.snapshot.schema import validate

FAST = WatchSettings(error_backoffs=(0.05,), watch_timeout=(30, 30))
KINDS = ("Pod", "Job")  # and no other kind: autoscaling=False leaves CA's status ConfigMap out too
WATCHES = ("/api/v1/pods", "/apis/batch/v1/jobs")
JOB = "/apis/batch/v1/namespaces/batch/jobs/tunable"

# (job file, pods file, active, ready, terminating, succeeded, failed, strip): jobs/README.md section 1
STEPS = [
    ("job-01-pods-bound", "pods-01-pods-bound", 4, 0, 0, 0, 0, "PPPP........"),
    ("job-02-running", "pods-02-running", 4, 4, 0, 0, 0, "RRRR........"),
    ("job-04-index2-failed-once", "pods-04-index2-failed-once", 4, 3, 0, 2, 1, "SSPRRR......"),
    ("job-05-index2-retry-running", "pods-05-index2-retry-running", 4, 4, 0, 2, 1, "SSRRRR......"),
    ("job-06-preempted-terminating", "pods-06-preempted-terminating", 3, 3, 1, 2, 1, "SSRPRR......"),
    ("job-07-preempted-replaced", "pods-07-preempted-replaced", 4, 3, 0, 2, 1, "SSRPRR......"),
    ("job-08-evicted-replaced", "pods-08-evicted-replaced", 4, 3, 0, 2, 1, "SSRRPR......"),
    ("job-09-index2-failed-twice", "pods-09-index2-failed-twice", 4, 3, 0, 2, 2, "SSFRRRP....."),
    ("job-11-finished", "pods-11-finished", 0, 0, 0, 11, 2, "SSFSSSSSSSSS"),
]


def run(api: KubeAPI, **kwargs) -> tuple[list, ClusterModel]:
    """One list and one watch per kind through the real client; the model after every event."""
    events = collect_events(KubeSource(str(api.kubeconfig), settings=FAST, kinds=KINDS, autoscaling=False, **kwargs), 1)
    model = ClusterModel()
    for e in events:
        model.apply(e)
    return events, model


@pytest.mark.parametrize(("job", "pods", "active", "ready", "terminating", "succeeded", "failed", "strip"), STEPS)
def test_each_recorded_step_shows_its_counts_and_index_strip(kube_api: KubeAPI, job: str, pods: str, active: int,
                                                             ready: int, terminating: int, succeeded: int,
                                                             failed: int, strip: str) -> None:
    job_api.serve_step(kube_api, job_api.load("indexed", f"{job}.json"),
                       job_api.load("indexed", f"{pods}.json")["items"])
    for path in WATCHES:
        kube_api.script_watch(path, WatchScript([], end="close"))
    _, model = run(kube_api)
    view = model.jobs.jobs[("batch", "items-by-day")]
    assert (view.active, view.ready, view.terminating, view.succeeded, view.failed) == (
        active, ready, terminating, succeeded, failed)
    assert strip_text(index_strip(view, model.jobs.history_of("batch", "items-by-day"))) == strip
    doc = build_snapshot(model, now=0.0)
    assert validate(doc, SNAPSHOT_SCHEMA) == []
    (entry,) = doc["jobs"]
    assert entry["indexStrip"] == strip and entry["succeeded"] == succeeded


@pytest.mark.parametrize("folder", ["indexed", "nonindexed", "node-deleted", "patch"])
def test_the_recorded_watch_ends_where_the_recording_ends_and_succeeded_never_goes_down(
        kube_api: KubeAPI, folder: str) -> None:
    job_api.serve_recorded(kube_api, folder, watch=False)
    for path in WATCHES:
        name = "watch-pods.jsonl" if "pods" in path else "watch-jobs.jsonl"
        kube_api.script_watch(path, WatchScript.recorded(f"jobs/{folder}/{name}", end="close"))
    events, model = run(kube_api)
    final = json.loads(fixtures.watch_lines(f"jobs/{folder}/watch-jobs.jsonl")[-1])["object"]
    key = ("batch", final["metadata"]["name"])
    view = model.jobs.jobs[key]
    assert view.resource_version == final["metadata"]["resourceVersion"]
    status = final["status"]
    assert (view.succeeded, view.failed, view.active) == (status.get("succeeded", 0), status.get("failed", 0),
                                                          status.get("active", 0))
    replay = ClusterModel()
    seen = []
    for e in events:
        replay.apply(e)
        if isinstance(e, WatchEvent) and e.kind == "Job":
            seen.append(replay.jobs.jobs[key].succeeded)
    assert seen == sorted(seen)
    reasons = [d.disruption.reason for d in disrupted_pods(view, model.jobs.history_of(*key))]
    assert reasons == {"indexed": ["PreemptionByScheduler", "TerminationByKubelet"], "nonindexed": [],
                       "node-deleted": ["DeletionByPodGC"], "patch": []}[folder]


def test_parallelism_and_suspend_send_the_recorded_requests(kube_api: KubeAPI) -> None:
    kube_api.add_job(job_api.load("patch", "job-01-running.json"))
    src = KubeSource(str(kube_api.kubeconfig), settings=FAST, kinds=KINDS, autoscaling=False)
    try:
        results = [src.set_parallelism("batch", "tunable", 4), src.set_parallelism("batch", "tunable", 1),
                   src.suspend_job("batch", "tunable", True), src.suspend_job("batch", "tunable", False),
                   src.set_parallelism("batch", "tunable", 3)]
    finally:
        src.close()
    sent = kube_api.requests_to(JOB, "PATCH")
    recorded = [e for e in fixtures.load("jobs/index.json") if e["method"] == "PATCH" and "/jobs/" in e["path"]]
    assert [r.path for r in sent] == [e["path"] for e in recorded]
    assert [r.json() for r in sent] == [json.loads(e["note"].split("merge patch ", 1)[1].split(";")[0])
                                        for e in recorded]
    assert {r.headers["Content-Type"].split(";")[0] for r in sent} == {"application/merge-patch+json"}
    assert results == ["Job batch/tunable parallelism set to 4.", "Job batch/tunable parallelism set to 1.",
                       "Job batch/tunable suspended.", "Job batch/tunable resumed.",
                       "Job batch/tunable parallelism set to 3."]
    job = kube_api.job("batch", "tunable")
    assert (job["spec"]["parallelism"], job["spec"]["suspend"], job["metadata"]["generation"]) == (3, False, 6)


def test_refusals_are_one_line(kube_api: KubeAPI) -> None:
    src = KubeSource(str(kube_api.kubeconfig), settings=FAST, kinds=KINDS, autoscaling=False)
    try:
        with pytest.raises(ActionError) as missing:
            src.set_parallelism("batch", "nope", 2)
        with pytest.raises(ActionError, match="parallelism must be 0 or more"):
            src.set_parallelism("batch", "nope", -1)
    finally:
        src.close()
    assert "\n" not in str(missing.value) and "not found" in str(missing.value)


def test_jobs_forbidden_by_an_older_clusterrole_show_as_none_and_the_rest_runs(kube_api: KubeAPI) -> None:
    kube_api.respond_fixture("GET", "/apis/batch/v1/jobs", "status-403-forbidden-serviceaccount.json")
    kube_api.script_watch("/api/v1/pods", WatchScript([], end="close"))
    events, model = run(kube_api)
    assert model.is_synced(KINDS) and model.jobs.jobs == {} and len(model.pods) > 0
    assert [e.state for e in events if hasattr(e, "state")][-1] == "live"
    assert not kube_api.requests_to("/apis/batch/v1/jobs", watch=True)  # no watch after the refusal


def test_a_jobs_failure_other_than_403_drops_jobs_and_says_nothing_about_events(kube_api: KubeAPI) -> None:
    """Jobs and Events are both optional kinds; only the Events informer speaks for Events (`unavailable["Event"]`)."""
    kube_api.respond_fixture("GET", "/apis/batch/v1/jobs", "status-404-notfound.json")
    kube_api.script_watch("/api/v1/pods", WatchScript([], end="close"))
    events, model = run(kube_api)
    assert model.jobs.jobs == {} and len(model.pods) > 0
    assert events_unavailable(model.unavailable) is None
    assert [e.state for e in events if hasattr(e, "state")][-1] == "live"
