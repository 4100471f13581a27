"""The Jobs model (JobView, index strips, disrupted pods) on the recorded Jobs (tests/fixtures/k8s/jobs)."""

from __future__ import annotations

import json

import pytest
from kubeapi import fixtures

from kubeview.model.cluster import ClusterModel
from kubeview.model.events import Listed, WatchEvent
from kubeview.model.jobs.progress import disrupted_pods, index_strip, strip_text
from kubeview.model.jobs.views import IndexSyntaxError, format_indexes, parse_indexes

# jobs/README.md, section 1's table: (active, ready, terminating, succeeded, failed), and the strip
# the step's pod list gives (S succeeded, F failed, R running, P pending or awaiting retry, . not started)
INDEXED = [
    ("job-01-pods-bound", (4, 0, 0, 0, 0), "pods-01-pods-bound", "PPPP........"),
    ("job-02-running", (4, 4, 0, 0, 0), "pods-02-running", "RRRR........"),
    ("job-03-two-succeeded", (4, 2, 0, 2, 0), None, None),
    ("job-04-index2-failed-once", (4, 3, 0, 2, 1), "pods-04-index2-failed-once", "SSPRRR......"),
    ("job-05-index2-retry-running", (4, 4, 0, 2, 1), "pods-05-index2-retry-running", "SSRRRR......"),
    ("job-06-preempted-terminating", (3, 3, 1, 2, 1), "pods-06-preempted-terminating", "SSRPRR......"),
    ("job-07-preempted-replaced", (4, 3, 0, 2, 1), "pods-07-preempted-replaced", "SSRPRR......"),
    ("job-08-evicted-replaced", (4, 3, 0, 2, 1), "pods-08-evicted-replaced", "SSRRPR......"),
    ("job-09-index2-failed-twice", (4, 3, 0, 2, 2), "pods-09-index2-failed-twice", "SSFRRRP....."),
    ("job-10-wave-1-done", (4, 0, 0, 6, 2), None, None),
    ("job-11-finished", (0, 0, 0, 11, 2), "pods-11-finished", "SSFSSSSSSSSS"),
]


def model_at(folder: str, job: str, pods: str | None) -> ClusterModel:
    m = ClusterModel()
    m.apply(Listed("Job", [fixtures.load(f"jobs/{folder}/{job}.json")]))
    m.apply(Listed("Pod", fixtures.load(f"jobs/{folder}/{pods}.json")["items"] if pods else []))
    return m


@pytest.mark.parametrize(("text", "indexes"), [("", set()), ("2", {2}), ("0,1", {0, 1}), ("0,1,3-11", {0, 1, *range(3, 12)}),
                                               ("3-6", {3, 4, 5, 6})])
def test_index_intervals_parse_and_format_as_the_controller_writes_them(text: str, indexes: set[int]) -> None:
    assert parse_indexes(text) == indexes
    assert format_indexes(indexes) == text


@pytest.mark.parametrize("bad", ["x", "3-1", "-2", "1,,a"])
def test_bad_intervals_are_one_clear_error(bad: str) -> None:
    with pytest.raises(IndexSyntaxError, match="not an index interval"):
        parse_indexes(bad)


def test_every_recorded_interval_string_round_trips() -> None:
    seen = 0
    for line in fixtures.watch_lines("jobs/indexed/watch-jobs.jsonl"):
        status = json.loads(line)["object"].get("status") or {}
        for field in ("completedIndexes", "failedIndexes"):
            if field in status:
                assert format_indexes(parse_indexes(status[field])) == status[field]
                seen += 1
    assert seen > 20


@pytest.mark.parametrize(("job", "counts", "pods", "strip"), INDEXED)
def test_indexed_steps_show_the_recorded_counts_and_strip(job: str, counts: tuple, pods: str | None,
                                                          strip: str | None) -> None:
    m = model_at("indexed", job, pods)
    view = m.jobs.jobs[("batch", "items-by-day")]
    assert (view.active, view.ready, view.terminating, view.succeeded, view.failed) == counts
    assert (view.completions, view.parallelism, view.completion_mode, view.backoff_limit_per_index) == (12, 4, "Indexed", 1)
    assert view.ignores_disruption
    if strip is not None:
        assert strip_text(index_strip(view, m.jobs.pods_of("batch", "items-by-day"))) == strip


def test_the_finished_indexed_job_failed_with_failed_indexes() -> None:
    view = model_at("indexed", "job-11-finished", None).jobs.jobs[("batch", "items-by-day")]
    assert view.state == "Failed"
    assert view.condition("Failed").reason == "FailedIndexes"
    assert view.failed_indexes == {2} and len(view.completed_indexes) == 11


def test_the_whole_watch_remembers_disrupted_pods_and_what_became_of_their_index() -> None:
    m = ClusterModel()
    m.apply(Listed("Job", fixtures.load("jobs/indexed/jobs-list-initial.json")["items"]))
    m.apply(Listed("Pod", fixtures.load("jobs/indexed/pods-list-initial.json")["items"]))
    succeeded = []
    for kind, name in (("Job", "watch-jobs.jsonl"), ("Pod", "watch-pods.jsonl")):
        for e in fixtures.watch_events(f"jobs/indexed/{name}"):
            if e["type"] in ("ADDED", "MODIFIED", "DELETED"):
                m.apply(WatchEvent(kind, e["type"], e["object"]))
                if kind == "Job":
                    succeeded.append(m.jobs.jobs[("batch", "items-by-day")].succeeded)
    assert succeeded == sorted(succeeded) and succeeded[-1] == 11
    job = m.jobs.jobs[("batch", "items-by-day")]
    history = m.jobs.history_of("batch", "items-by-day")
    assert "items-by-day-3-cgr2z" not in {p.name for p in m.jobs.pods_of("batch", "items-by-day")}  # deleted
    got = [(d.pod, d.index, d.disruption.reason, d.counted, d.outcome) for d in disrupted_pods(job, history)]
    assert got == [("items-by-day-3-cgr2z", 3, "PreemptionByScheduler", False, "succeeded later"),
                   ("items-by-day-4-lj7nr", 4, "TerminationByKubelet", False, "succeeded later")]
    assert strip_text(index_strip(job, history)) == "SSFSSSSSSSSS"


def test_a_pod_lost_with_its_node_shows_podgc_and_counts_against_the_backoff_limit() -> None:
    m = ClusterModel()
    m.apply(Listed("Job", fixtures.load("jobs/node-deleted/jobs-list-initial.json")["items"]))
    m.apply(Listed("Pod", fixtures.load("jobs/node-deleted/pods-list-initial.json")["items"]))
    for kind, name in (("Job", "watch-jobs.jsonl"), ("Pod", "watch-pods.jsonl")):
        for e in fixtures.watch_events(f"jobs/node-deleted/{name}"):
            if e["type"] in ("ADDED", "MODIFIED", "DELETED"):
                m.apply(WatchEvent(kind, e["type"], e["object"]))
    job = m.jobs.jobs[("batch", "on-lost-node")]
    assert (job.succeeded, job.failed, job.state) == (1, 1, "Complete")
    (lost,) = disrupted_pods(job, m.jobs.history_of("batch", "on-lost-node"))
    assert (lost.disruption.reason, lost.disruption.message) == ("DeletionByPodGC", "PodGC: node no longer exists")
    assert lost.counted and lost.outcome == "replaced" and lost.node == "spot-node-1"


def test_suspend_shows_as_suspended_and_non_job_pods_are_not_kept() -> None:
    m = model_at("patch", "job-05-suspended", "pods-05-suspended")
    assert m.jobs.jobs[("batch", "tunable")].state == "Suspended"
    m.apply(Listed("Pod", fixtures.load("pods-list.json")["items"]))
    assert m.jobs.pods_of("batch", "tunable") == []


def test_disrupted_pods_watched_before_their_job_is_listed_are_kept() -> None:
    m = ClusterModel()
    m.apply(Listed("Pod", []))
    for e in fixtures.watch_events("jobs/indexed/watch-pods.jsonl"):
        if e["type"] in ("ADDED", "MODIFIED", "DELETED"):
            m.apply(WatchEvent("Pod", e["type"], e["object"]))
    m.apply(Listed("Job", [fixtures.load("jobs/indexed/job-11-finished.json")]))
    names = {p.name for p in m.jobs.history_of("batch", "items-by-day")}
    assert "items-by-day-3-cgr2z" in names  # preempted and deleted before the Jobs list came
    m.apply(Listed("Job", []))  # the Job went: its history goes
    m.apply(Listed("Job", [fixtures.load("jobs/indexed/job-11-finished.json")]))
    assert "items-by-day-3-cgr2z" not in {p.name for p in m.jobs.history_of("batch", "items-by-day")}
