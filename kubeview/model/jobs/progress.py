"""An Indexed Job's index strip and the fate of its disrupted pods (pure).

The strip puts each index in one state, from the Job's status first (what the Job controller has
counted: `completedIndexes`, `failedIndexes`) and then from the Job's pods (what runs now):
succeeded, failed, running (a pod of the index is Running), pending (a pod exists but does not run
yet, or an earlier attempt ended and the retry is not there yet), never started (no pod seen).
Status wins: an index the controller counted as succeeded stays succeeded whatever pods remain.

A disrupted pod (DisruptionTarget) is followed to what happened to its index: succeeded later,
failed (in failedIndexes), retried (a later attempt exists and has not finished), or waiting for
a retry. For a NonIndexed Job there is no index to follow: the pod was replaced or not.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum

from kubeview.model.jobs.views import Disruption, JobPodView, JobView


class IndexState(StrEnum):
    SUCCEEDED = "succeeded"
    FAILED = "failed"
    RUNNING = "running"
    PENDING = "pending"
    NOT_STARTED = "not started"


STRIP_CHARS = {IndexState.SUCCEEDED: "S", IndexState.FAILED: "F", IndexState.RUNNING: "R",
               IndexState.PENDING: "P", IndexState.NOT_STARTED: "."}


def index_strip(job: JobView, pods: Iterable[JobPodView]) -> list[IndexState]:
    """One state per index 0..completions-1 (empty for NonIndexed Jobs)."""
    if not job.indexed or job.completions is None:
        return []
    n = job.completions
    seen: set[int] = set()
    running: set[int] = set()
    for pod in pods:
        i = pod.index
        if i is None or not 0 <= i < n:
            continue
        seen.add(i)
        if pod.phase == "Running" and not pod.deleting:
            running.add(i)
    out: list[IndexState] = []
    for i in range(n):
        if i in job.completed_indexes:
            out.append(IndexState.SUCCEEDED)
        elif i in job.failed_indexes:
            out.append(IndexState.FAILED)
        elif i in running:
            out.append(IndexState.RUNNING)
        elif i in seen:
            out.append(IndexState.PENDING)
        else:
            out.append(IndexState.NOT_STARTED)
    return out


def strip_text(strip: list[IndexState]) -> str:
    """"SSFRRRP....." — one character per index (S succeeded, F failed, R running, P pending, . not started)."""
    return "".join(STRIP_CHARS[s] for s in strip)


def strip_counts(strip: list[IndexState]) -> dict[IndexState, int]:
    counts = dict.fromkeys(IndexState, 0)
    for s in strip:
        counts[s] += 1
    return counts


@dataclass(frozen=True, slots=True)
class DisruptedPod:
    pod: str
    index: int | None
    node: str | None
    disruption: Disruption
    counted: bool  # counted against the backoff limit (no podFailurePolicy rule Ignores it)
    outcome: str  # "succeeded later" | "failed" | "retried" | "awaiting retry" | "replaced" | "terminating"


def disrupted_pods(job: JobView, pods: Iterable[JobPodView]) -> list[DisruptedPod]:
    """The Job's pods that carry DisruptionTarget, oldest first, each with what became of its index."""
    pods = list(pods)
    out: list[DisruptedPod] = []
    for pod in sorted(pods, key=_order):
        if pod.disruption is None:
            continue
        out.append(DisruptedPod(pod.name, pod.index, pod.node, pod.disruption, not job.ignores_disruption,
                                _outcome(job, pod, pods)))
    return out


def _outcome(job: JobView, pod: JobPodView, pods: list[JobPodView]) -> str:
    later = [p for p in pods if p.uid != pod.uid and _order(p) > _order(pod)
             and (p.index == pod.index or not job.indexed)]
    if job.indexed and pod.index is not None:
        if pod.index in job.completed_indexes:
            return "succeeded later"
        if pod.index in job.failed_indexes:
            return "failed"
        if later:
            return "retried"
        return "terminating" if not pod.finished else "awaiting retry"
    if not pod.finished:
        return "terminating"
    return "replaced" if later else "awaiting retry"


def _order(pod: JobPodView) -> tuple:
    """Attempts of one index in the order they were made (creation times have 1 s resolution)."""
    return (pod.attempt, pod.created, pod.name)
