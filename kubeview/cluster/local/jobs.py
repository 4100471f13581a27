"""The local cluster's Job controller: NonIndexed and Indexed Jobs, as kube-controller-manager runs them.

Follows upstream `pkg/controller/job` and the recordings (tests/fixtures/k8s/jobs/README.md):
- a finished pod is counted once (upstream: the `job-tracking` finalizer and
  `uncountedTerminatedPods`; here a ledger per Job, `JobLedger`), so `succeeded` never goes down,
  and pods the controller itself removes (lower parallelism, suspend, a finished Job) are never
  counted as failed;
- `podFailurePolicy` rules (actions Ignore, FailJob, FailIndex, Count; `onExitCodes` with In/NotIn,
  `onPodConditions`) are matched in order, first match wins; an Ignored failure is not counted, and
  an Indexed Job's retry carries `job-index-ignored-failure-count` + 1 instead of
  `job-index-failure-count` + 1;
- Indexed: an index fails once its failures exceed `backoffLimitPerIndex` (or a FailIndex rule
  matched) and is not retried; the Job ends when every index succeeded or failed: `Complete`, or
  `Failed` with reason `FailedIndexes`; without per-index limits more than `backoffLimit` failures
  fail the Job (`BackoffLimitExceeded`);
- conditions as recorded: `SuccessCriteriaMet` then `Complete` (`CompletionsReached`),
  `FailureTarget` then `Failed`, `Suspended` True (`JobSuspended`) / False (`JobResumed`);
  `startTime` goes while suspended and is set anew on resume; zero `active`/`succeeded`/`failed`
  are omitted, `ready` and `terminating` always written.
**Deviation**: no pod-creation backoff (upstream waits 10 s after a failure, doubling): the local
cluster's work items are short, and the backoff would only slow the demo down.
"""

from __future__ import annotations

import copy
import functools
from dataclasses import dataclass, field

from kubeview.cluster.local import objects as obj
from kubeview.cluster.local.controllers import Api, is_active, is_ready, try_create_pod
from kubeview.model.jobs.views import (
    FAILURE_COUNT,
    IGNORED_FAILURE_COUNT,
    INDEX_KEY,
    JOB_NAME_LABEL,
    format_indexes,
)

CONTROLLER_UID = "batch.kubernetes.io/controller-uid"
JOB_CONTROLLER = "job-controller"
MAX_INT32 = 2**31 - 1


@dataclass
class JobLedger:
    """What the controller has counted of one Job (upstream keeps this in the status and finalizers)."""

    counted: set[str] = field(default_factory=set)  # pod uids whose end is counted (or ignored)
    removed: set[str] = field(default_factory=set)  # pod uids the controller deleted: never counted
    succeeded: int = 0  # NonIndexed
    failed: int = 0
    completed: set[int] = field(default_factory=set)  # Indexed
    failed_indexes: set[int] = field(default_factory=set)
    index_failures: dict[int, int] = field(default_factory=dict)
    index_ignored: dict[int, int] = field(default_factory=dict)
    fail_job: tuple[str, str] | None = None  # (reason, message) of a FailJob rule that matched
    pod_group: str | None = None  # the PodGroup its pods name (a Job with spec.scheduling, gang_cycle.py)


def _meta(o: dict) -> dict:
    return o.get("metadata") or {}


def normalize_job(manifest: dict) -> dict:
    """A Job manifest as the apiserver stores it: defaults, selector and template labels (job-00-create)."""
    out = copy.deepcopy(manifest)
    out.pop("kind", None)
    out.pop("apiVersion", None)
    meta = out.setdefault("metadata", {})
    meta.setdefault("namespace", "default")
    meta.setdefault("uid", obj.metadata(meta.get("name", ""))["uid"])
    meta.setdefault("creationTimestamp", obj.timestamp())
    meta["generation"] = int(meta.get("generation", 0)) + 1
    spec = out.setdefault("spec", {})
    spec.setdefault("parallelism", 1)
    if spec.get("completions") is None and spec.get("completionMode") == "Indexed":
        raise ValueError("spec.completions: Required value: when completion mode is Indexed")
    spec.setdefault("completionMode", "NonIndexed")
    spec.setdefault("backoffLimit", MAX_INT32 if spec.get("backoffLimitPerIndex") is not None else 6)
    spec.setdefault("suspend", False)
    spec.setdefault("manualSelector", False)
    spec.setdefault("podReplacementPolicy", "Failed" if spec.get("podFailurePolicy") else "TerminatingOrFailed")
    for rule in (spec.get("podFailurePolicy") or {}).get("rules") or []:
        for cond in rule.get("onPodConditions") or []:
            cond.setdefault("status", "True")
    uid, name = meta["uid"], meta["name"]
    spec.setdefault("selector", {"matchLabels": {CONTROLLER_UID: uid}})
    template = spec.setdefault("template", {})
    labels = template.setdefault("metadata", {}).setdefault("labels", {})
    labels.update({CONTROLLER_UID: uid, JOB_NAME_LABEL: name, "controller-uid": uid, "job-name": name})
    tspec = template.setdefault("spec", {})
    if tspec.get("restartPolicy") not in ("Never", "OnFailure"):
        raise ValueError('spec.template.spec.restartPolicy: Unsupported value: must be "OnFailure" or "Never"')
    for key, value in obj.pod_spec([]).items():
        if key not in ("containers", "serviceAccountName", "serviceAccount", "restartPolicy"):
            tspec.setdefault(key, value)
    out.setdefault("status", {})
    return out


def pod_for(job: dict, index: int | None, ledger: JobLedger, api: Api) -> dict:
    """A new pod of `job` (for `index` when Indexed): name, labels, annotations, env as upstream's."""
    meta, spec = _meta(job), job["spec"]
    template = copy.deepcopy(spec.get("template") or {})
    if index is not None:
        tmeta = template.setdefault("metadata", {})
        tmeta.setdefault("labels", {})[INDEX_KEY] = str(index)
        ann = tmeta.setdefault("annotations", {})
        ann[INDEX_KEY] = str(index)
        ann[FAILURE_COUNT] = str(ledger.index_failures.get(index, 0))
        if ledger.index_ignored.get(index):
            ann[IGNORED_FAILURE_COUNT] = str(ledger.index_ignored[index])
        tspec = template.setdefault("spec", {})
        tspec.setdefault("hostname", f"{meta['name']}-{index}")
        for c in tspec.get("containers") or []:
            env = [e for e in c.get("env") or [] if e.get("name") != "JOB_COMPLETION_INDEX"]
            env.append({"name": "JOB_COMPLETION_INDEX", "valueFrom": {"fieldRef": {
                "fieldPath": f"metadata.labels['{INDEX_KEY}']"}}})
            c["env"] = env
    if ledger.pod_group is not None:
        template.setdefault("spec", {})["schedulingGroup"] = {"podGroupName": ledger.pod_group}
    pod = obj.pod_from_template("Job", job, template, api.rng)
    if index is not None:
        name = f"{meta['name']}-{index}-{obj.suffix(api.rng)}"
        pod["metadata"]["name"] = name
        pod["metadata"]["generateName"] = f"{meta['name']}-{index}-"
    return pod


def failure_action(job: dict, pod: dict) -> str:
    """The podFailurePolicy action for a Failed pod: Ignore, FailJob, FailIndex or Count (no match)."""
    status = pod.get("status") or {}
    codes = [((cs.get("state") or {}).get("terminated") or {}).get("exitCode")
             for cs in status.get("containerStatuses") or []]
    conds = {(c.get("type"), c.get("status")) for c in status.get("conditions") or []}
    for rule in ((job.get("spec") or {}).get("podFailurePolicy") or {}).get("rules") or []:
        on_codes = rule.get("onExitCodes")
        if on_codes is not None:
            values = set(on_codes.get("values") or [])
            hit = [c for c in codes if c not in (None, 0)]
            if on_codes.get("operator") == "In" and any(c in values for c in hit):
                return rule.get("action", "Count")
            if on_codes.get("operator") == "NotIn" and any(c not in values for c in hit):
                return rule.get("action", "Count")
        for cond in rule.get("onPodConditions") or []:
            if (cond.get("type"), cond.get("status", "True")) in conds:
                return rule.get("action", "Count")
    return "Count"


def _index(pod: dict) -> int | None:
    raw = (_meta(pod).get("annotations") or {}).get(INDEX_KEY)
    try:
        return int(raw) if raw is not None else None
    except ValueError:
        return None


def _condition(status: dict, kind: str) -> dict | None:
    return next((c for c in status.get("conditions") or [] if c.get("type") == kind), None)


def _set(status: dict, kind: str, value: str, reason: str, message: str, now: str) -> None:
    old = _condition(status, kind)
    if old is not None and old.get("status") == value and old.get("reason") == reason:
        return
    conds = [c for c in status.get("conditions") or [] if c.get("type") != kind]
    conds.append({"type": kind, "status": value, "lastProbeTime": now, "lastTransitionTime": now,
                  "reason": reason, "message": message})
    status["conditions"] = conds


def finished(job: dict) -> bool:
    status = job.get("status") or {}
    return any(c.get("type") in ("Complete", "Failed") and c.get("status") == "True"
               for c in status.get("conditions") or [])


def count_finished_pods(job: dict, pods: list[dict], ledger: JobLedger) -> None:
    """Fold every newly Succeeded or Failed pod into the ledger, once."""
    indexed = job["spec"].get("completionMode") == "Indexed"
    per_index = job["spec"].get("backoffLimitPerIndex")
    for pod in pods:
        uid = _meta(pod)["uid"]
        phase = (pod.get("status") or {}).get("phase")
        if uid in ledger.counted or uid in ledger.removed or phase not in ("Succeeded", "Failed"):
            continue
        ledger.counted.add(uid)
        i = _index(pod) if indexed else None
        if phase == "Succeeded":
            if i is None:
                ledger.succeeded += 1
            elif i not in ledger.failed_indexes:
                ledger.completed.add(i)
            continue
        action = failure_action(job, pod)
        if action == "Ignore":
            if i is not None:
                ledger.index_ignored[i] = ledger.index_ignored.get(i, 0) + 1
            continue
        ledger.failed += 1
        if action == "FailJob" and ledger.fail_job is None:
            ledger.fail_job = ("PodFailurePolicy", f"Pod {_meta(pod)['namespace']}/{_meta(pod)['name']} "
                                                   "failed and matched a FailJob rule of the podFailurePolicy")
        if i is not None and i not in ledger.completed:
            ledger.index_failures[i] = ledger.index_failures.get(i, 0) + 1
            if action == "FailIndex" or (per_index is not None and ledger.index_failures[i] > per_index):
                ledger.failed_indexes.add(i)


def _outcome(job: dict, ledger: JobLedger, active: int) -> tuple[str, str, str] | None:
    """(condition, reason, message) once the Job is done, else None."""
    spec = job["spec"]
    completions = spec.get("completions")
    if ledger.fail_job is not None:
        return ("Failed", *ledger.fail_job)
    if spec.get("backoffLimitPerIndex") is None and ledger.failed > int(spec.get("backoffLimit", 6)):
        return ("Failed", "BackoffLimitExceeded", "Job has reached the specified backoff limit")
    if spec.get("completionMode") == "Indexed":
        if len(ledger.completed) + len(ledger.failed_indexes) >= int(completions):
            if ledger.failed_indexes:
                return ("Failed", "FailedIndexes", "Job has failed indexes")
            return ("Complete", "CompletionsReached", "Reached expected number of succeeded pods")
        return None
    if completions is not None and ledger.succeeded >= int(completions):
        return ("Complete", "CompletionsReached", "Reached expected number of succeeded pods")
    if completions is None and ledger.succeeded > 0 and active == 0:
        return ("Complete", "CompletionsReached", "Reached expected number of succeeded pods")
    return None


def _remove(api: Api, ledger: JobLedger, pods: list[dict]) -> None:
    """Pods the controller deletes itself (never counted: upstream strips their finalizer first)."""
    for pod in pods:
        ledger.removed.add(_meta(pod)["uid"])
        api.delete_pod(_meta(pod).get("namespace", ""), _meta(pod)["name"])


def reconcile_job(api: Api, job: dict, ledger: JobLedger) -> bool:
    """Count finished pods, create or delete pods toward parallelism, write the status. True if it wrote."""
    meta, spec = _meta(job), job["spec"]
    uid = meta["uid"]
    rv = _meta(job).get("resourceVersion")
    # counted pods are finished for good: only the others can be active, terminating or newly done
    pods = [p for p in api.owned(uid) if _meta(p)["uid"] not in ledger.counted]
    count_finished_pods(job, pods, ledger)
    indexed = spec.get("completionMode") == "Indexed"
    active = [p for p in pods if is_active(p)]
    done = finished(job)
    outcome = None if done else _outcome(job, ledger, len(active))
    suspended = bool(spec.get("suspend")) and not done
    if done or outcome is not None or suspended:
        _remove(api, ledger, active)
    else:
        active = _scale(api, job, ledger, active, indexed)
    pods = [p for p in api.owned(uid) if _meta(p)["uid"] not in ledger.counted]
    active = [p for p in pods if is_active(p)]
    _write_status(api, job, ledger, pods, active, outcome, suspended)
    fresh = api.get("Job", meta.get("namespace", ""), meta["name"])
    return fresh is not None and _meta(fresh).get("resourceVersion") != rv


def _scale(api: Api, job: dict, ledger: JobLedger, active: list[dict], indexed: bool) -> list[dict]:
    spec = job["spec"]
    parallelism = int(spec.get("parallelism", 1))
    completions = spec.get("completions")
    if indexed:
        # an active pod whose index is already done (or doubled) goes
        seen: set[int] = set()
        extra = []
        for p in sorted(active, key=lambda p: _meta(p)["name"]):
            i = _index(p)
            if i is None or i in ledger.completed or i in ledger.failed_indexes or i in seen:
                extra.append(p)
            else:
                seen.add(i)
        _remove(api, ledger, extra)
        active = [p for p in active if p not in extra]
        remaining = int(completions) - len(ledger.completed) - len(ledger.failed_indexes)
    elif completions is not None:
        remaining = int(completions) - ledger.succeeded
    else:
        remaining = parallelism if ledger.succeeded == 0 else 0
    want = max(0, min(parallelism, remaining))
    if len(active) > want:  # newest first, as upstream's ActivePods ranking roughly does
        order = sorted(active, key=lambda p: -api.created_seq("Pod", _meta(p).get("namespace", ""), _meta(p)["name"]))
        _remove(api, ledger, order[: len(active) - want])
        return order[len(active) - want:]
    missing = want - len(active)
    if missing <= 0:
        return active
    if indexed:
        busy = {_index(p) for p in active}
        if spec.get("podReplacementPolicy") == "Failed":  # a terminating pod's index waits for it
            busy |= {_index(p) for p in api.owned(_meta(job)["uid"]) if _meta(p).get("deletionTimestamp")
                     and (p.get("status") or {}).get("phase") not in ("Succeeded", "Failed")}
        free = [i for i in range(int(completions)) if i not in busy and i not in ledger.completed
                and i not in ledger.failed_indexes]
        wanted: list[int | None] = list(free[:missing])
    else:
        wanted = [None] * missing
    for index in wanted:  # a refused create stops the batch, as upstream's slow start does
        made = try_create_pod(api, "Job", job, functools.partial(pod_for, job, index, ledger, api), JOB_CONTROLLER)
        if isinstance(made, str):
            break
        active.append(made)
    return active


def _write_status(api: Api, job: dict, ledger: JobLedger, pods: list[dict], active: list[dict],
                  outcome: tuple[str, str, str] | None, suspended: bool) -> None:
    spec = job["spec"]
    fresh = api.get("Job", _meta(job).get("namespace", ""), _meta(job)["name"])
    if fresh is None:
        return
    old = fresh.get("status") or {}
    status = copy.deepcopy(old)
    now = obj.timestamp()
    indexed = spec.get("completionMode") == "Indexed"
    succeeded = len(ledger.completed) if indexed else ledger.succeeded
    for key, value in (("active", len(active)), ("succeeded", succeeded), ("failed", ledger.failed)):
        if value:
            status[key] = value
        else:
            status.pop(key, None)
    status["ready"] = sum(1 for p in active if is_ready(p))
    status["terminating"] = sum(1 for p in pods if _meta(p).get("deletionTimestamp")
                                and (p.get("status") or {}).get("phase") not in ("Succeeded", "Failed"))
    status["uncountedTerminatedPods"] = {}
    if indexed:  # as recorded: completedIndexes once one is done, failedIndexes ("") with per-index limits
        if ledger.completed:
            status["completedIndexes"] = format_indexes(ledger.completed)
        if spec.get("backoffLimitPerIndex") is not None:
            status["failedIndexes"] = format_indexes(ledger.failed_indexes)
    if suspended:
        _set(status, "Suspended", "True", "JobSuspended", "Job suspended", now)
        status.pop("startTime", None)
    else:
        if _condition(status, "Suspended") is not None:
            _set(status, "Suspended", "False", "JobResumed", "Job resumed", now)
        status.setdefault("startTime", now)
    if outcome is not None:
        kind, reason, message = outcome
        _set(status, "SuccessCriteriaMet" if kind == "Complete" else "FailureTarget", "True", reason, message, now)
        _set(status, kind, "True", reason, message, now)
        if kind == "Complete":
            status["completionTime"] = now
    if status != old:
        out = copy.deepcopy(fresh)
        out["status"] = status
        api.update("Job", out)
