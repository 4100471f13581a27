"""batch/v1 Jobs and their pods as kubeview shows them (pure: API dicts in, views out).

The Job's status fields are read as the API writes them: zero counts are omitted (absent = 0), and
`completedIndexes`/`failedIndexes` are interval strings ("0,1,3-11") that `parse_indexes` turns into
sets. A pod belongs to a Job by its `batch.kubernetes.io/job-name` label (set by the Job controller on
every pod it makes, beside the legacy `job-name`), and an Indexed Job's pod carries its index in the
`batch.kubernetes.io/job-completion-index` annotation (and label). A pod "ended by disruption" has
the `DisruptionTarget` condition (scheduler preemption, kubelet eviction, PodGC, node shutdown).
"""

from __future__ import annotations

from dataclasses import dataclass

from kubeview.model.kube_events import parse_time

JOB_NAME_LABEL = "batch.kubernetes.io/job-name"
LEGACY_JOB_NAME_LABEL = "job-name"
INDEX_KEY = "batch.kubernetes.io/job-completion-index"
FAILURE_COUNT = "batch.kubernetes.io/job-index-failure-count"
IGNORED_FAILURE_COUNT = "batch.kubernetes.io/job-index-ignored-failure-count"
DISRUPTION_TARGET = "DisruptionTarget"


class IndexSyntaxError(ValueError):
    """An interval string the API would not write ("3-1", "x")."""


def parse_indexes(text: str | None) -> frozenset[int]:
    """"1,3-5" -> {1, 3, 4, 5}; "" or None -> empty (the API's format for completed/failed indexes)."""
    out: set[int] = set()
    for part in (text or "").split(","):
        part = part.strip()
        if not part:
            continue
        lo, sep, hi = part.partition("-")
        try:
            a = int(lo)
            b = int(hi) if sep else a
        except ValueError:
            raise IndexSyntaxError(f"not an index interval: {part!r}") from None
        if a < 0 or b < a:
            raise IndexSyntaxError(f"not an index interval: {part!r}")
        out.update(range(a, b + 1))
    return frozenset(out)


def format_indexes(indexes: set[int] | frozenset[int]) -> str:
    """The inverse of `parse_indexes`, as the Job controller writes it: two adjacent as "0,1", three as "3-5"."""
    parts: list[str] = []
    run: list[int] = []
    for i in sorted(indexes):
        if run and i == run[-1] + 1:
            run.append(i)
            continue
        parts.extend(_run_text(run))
        run = [i]
    parts.extend(_run_text(run))
    return ",".join(parts)


def _run_text(run: list[int]) -> list[str]:
    if len(run) >= 3:
        return [f"{run[0]}-{run[-1]}"]
    return [str(i) for i in run]


@dataclass(frozen=True, slots=True)
class Condition:
    type: str
    status: str
    reason: str = ""
    message: str = ""


@dataclass(slots=True)
class JobView:
    namespace: str
    name: str
    uid: str
    completions: int | None  # None: a work-queue Job (any one success completes it)
    parallelism: int
    completion_mode: str  # "NonIndexed" | "Indexed"
    suspend: bool
    backoff_limit: int
    backoff_limit_per_index: int | None
    active: int
    ready: int
    succeeded: int
    failed: int
    terminating: int
    completed_indexes: frozenset[int]
    failed_indexes: frozenset[int]
    conditions: tuple[Condition, ...]
    ignores_disruption: bool  # a podFailurePolicy rule Ignores DisruptionTarget failures
    resource_version: str = ""

    @classmethod
    def from_api(cls, obj: dict) -> JobView:
        meta, spec, status = obj.get("metadata") or {}, obj.get("spec") or {}, obj.get("status") or {}
        completions = spec.get("completions")
        parallelism = spec.get("parallelism")
        rules = ((spec.get("podFailurePolicy") or {}).get("rules")) or []
        ignores = any(r.get("action") == "Ignore" and any(
            c.get("type") == DISRUPTION_TARGET and c.get("status", "True") == "True"
            for c in r.get("onPodConditions") or []) for r in rules)
        per_index = spec.get("backoffLimitPerIndex")
        return cls(
            namespace=meta.get("namespace", ""),
            name=meta["name"],
            uid=meta.get("uid", ""),
            completions=None if completions is None else int(completions),
            parallelism=1 if parallelism is None else int(parallelism),
            completion_mode=spec.get("completionMode") or "NonIndexed",
            suspend=bool(spec.get("suspend", False)),
            backoff_limit=int(spec.get("backoffLimit", 6)),
            backoff_limit_per_index=None if per_index is None else int(per_index),
            active=int(status.get("active") or 0),
            ready=int(status.get("ready") or 0),
            succeeded=int(status.get("succeeded") or 0),
            failed=int(status.get("failed") or 0),
            terminating=int(status.get("terminating") or 0),
            completed_indexes=_indexes(status.get("completedIndexes")),
            failed_indexes=_indexes(status.get("failedIndexes")),
            conditions=tuple(Condition(c.get("type", ""), c.get("status", ""), c.get("reason", ""),
                                       c.get("message", "")) for c in status.get("conditions") or []),
            ignores_disruption=ignores,
            resource_version=meta.get("resourceVersion", ""),
        )

    @property
    def key(self) -> tuple[str, str]:
        return (self.namespace, self.name)

    @property
    def indexed(self) -> bool:
        return self.completion_mode == "Indexed"

    def condition(self, kind: str) -> Condition | None:
        return next((c for c in self.conditions if c.type == kind and c.status == "True"), None)

    @property
    def state(self) -> str:
        """Complete, Failed, Suspended or Running (a terminal condition wins over a late suspend)."""
        for kind in ("Complete", "Failed"):
            if self.condition(kind) is not None:
                return kind
        if self.condition("Suspended") is not None or self.suspend:
            return "Suspended"
        return "Running"


@dataclass(frozen=True, slots=True)
class Disruption:
    """Why a pod ended by disruption: the DisruptionTarget condition's reason and message."""

    reason: str
    message: str


@dataclass(slots=True)
class JobPodView:
    """What the Jobs view needs of one of a Job's pods (the node figures use `PodView`)."""

    namespace: str
    name: str
    uid: str
    job: str
    index: int | None  # Indexed Jobs only
    phase: str
    deleting: bool
    ready: bool
    node: str | None
    created: str  # creationTimestamp: orders an index's attempts
    failure_count: int  # batch.kubernetes.io/job-index-failure-count
    ignored_failure_count: int  # batch.kubernetes.io/job-index-ignored-failure-count
    exit_code: int | None
    disruption: Disruption | None
    resource_version: str = ""
    started_at: float | None = None  # its container's startedAt (running or terminated), epoch seconds
    finished_at: float | None = None  # its container's terminated finishedAt

    @classmethod
    def from_api(cls, obj: dict) -> JobPodView | None:
        """None for a pod that belongs to no Job."""
        meta = obj.get("metadata") or {}
        labels = meta.get("labels") or {}
        job = labels.get(JOB_NAME_LABEL) or labels.get(LEGACY_JOB_NAME_LABEL)
        if not job:
            return None
        annotations = meta.get("annotations") or {}
        status = obj.get("status") or {}
        raw_index = annotations.get(INDEX_KEY, labels.get(INDEX_KEY))
        disruption = None
        ready = False
        for c in status.get("conditions") or ():
            if c.get("type") == DISRUPTION_TARGET and c.get("status") == "True":
                disruption = Disruption(c.get("reason", ""), c.get("message", ""))
            elif c.get("type") == "Ready":
                ready = c.get("status") == "True"
        exit_code = started_at = finished_at = None
        for cs in status.get("containerStatuses") or ():
            state = cs.get("state") or {}
            term = state.get("terminated")
            if term is not None:
                exit_code = int(term.get("exitCode", 0))
                finished_at = parse_time(term.get("finishedAt"))
            started_at = parse_time((term or state.get("running") or {}).get("startedAt"))
        return cls(
            namespace=meta.get("namespace", ""),
            name=meta.get("name", ""),
            uid=meta.get("uid", ""),
            job=job,
            index=_int(raw_index),
            phase=status.get("phase") or "Pending",
            deleting=bool(meta.get("deletionTimestamp")),
            ready=ready,
            node=(obj.get("spec") or {}).get("nodeName") or None,
            created=meta.get("creationTimestamp", ""),
            failure_count=_int(annotations.get(FAILURE_COUNT)) or 0,
            ignored_failure_count=_int(annotations.get(IGNORED_FAILURE_COUNT)) or 0,
            exit_code=exit_code,
            disruption=disruption,
            resource_version=meta.get("resourceVersion", ""),
            started_at=started_at,
            finished_at=finished_at,
        )

    @property
    def key(self) -> tuple[str, str]:
        return (self.namespace, self.name)

    @property
    def ran(self) -> float | None:
        """Seconds its container ran, once it has ended (None before, or without both times)."""
        if self.started_at is None or self.finished_at is None:
            return None
        return max(0.0, self.finished_at - self.started_at)

    @property
    def finished(self) -> bool:
        return self.phase in ("Succeeded", "Failed")

    @property
    def attempt(self) -> int:
        """Which try of its index this pod is (0 = the first): failures plus ignored failures before it."""
        return self.failure_count + self.ignored_failure_count


def _indexes(text: str | None) -> frozenset[int]:
    """A status field that does not parse shows as no indexes rather than stopping the view."""
    try:
        return parse_indexes(text)
    except IndexSyntaxError:
        return frozenset()


def _int(text: object) -> int | None:
    try:
        return int(str(text))
    except (TypeError, ValueError):
        return None
