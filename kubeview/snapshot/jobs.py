"""The `jobs` part of the snapshot document and its JSON Schema (pure; document.py puts it in place).

Per Job: the spec that decides its progress (completions, parallelism, mode, suspend, backoff
limits), the status counts, the completed and failed indexes in the API's interval form, the index
strip of an Indexed Job (one character per index: S succeeded, F failed, R running, P pending or
awaiting a retry, . never started) and the pods that ended by disruption with what became of them.
"""

from __future__ import annotations

from kubeview.model.jobs.progress import disrupted_pods, index_strip, strip_text
from kubeview.model.jobs.store import JobStore
from kubeview.model.jobs.views import format_indexes


def jobs_doc(store: JobStore, shown: str | None = None) -> list[dict]:
    """Every Job (in namespace `shown` only, when set), by namespace and name."""
    out = []
    for (ns, name), job in sorted(store.jobs.items()):
        if shown is not None and ns != shown:
            continue
        history = store.history_of(ns, name)
        out.append({
            "namespace": ns, "name": name, "state": job.state,
            "completionMode": job.completion_mode, "completions": job.completions,
            "parallelism": job.parallelism, "suspend": job.suspend,
            "backoffLimit": job.backoff_limit, "backoffLimitPerIndex": job.backoff_limit_per_index,
            "active": job.active, "ready": job.ready, "terminating": job.terminating,
            "succeeded": job.succeeded, "failed": job.failed,
            "completedIndexes": format_indexes(job.completed_indexes),
            "failedIndexes": format_indexes(job.failed_indexes),
            "indexStrip": strip_text(index_strip(job, history)) if job.indexed else None,
            "conditions": [{"type": c.type, "status": c.status, "reason": c.reason, "message": c.message}
                           for c in job.conditions],
            "disrupted": [{"pod": d.pod, "index": d.index, "node": d.node, "reason": d.disruption.reason,
                           "message": d.disruption.message, "countedAsFailure": d.counted, "outcome": d.outcome}
                          for d in disrupted_pods(job, history)],
        })
    return out


_STR = {"type": "string"}
_COUNT = {"type": "integer", "minimum": 0}
_OPT_COUNT = {"type": ["integer", "null"], "minimum": 0}
_INTERVALS = {"type": "string", "description": "indexes as the API writes them, e.g. 0,1,3-11 (empty: none)"}


def _obj(props: dict) -> dict:
    return {"type": "object", "properties": props, "required": list(props)}


JOB_SCHEMA: dict = _obj({
    "namespace": _STR, "name": _STR,
    "state": {"enum": ["Running", "Suspended", "Complete", "Failed"]},
    "completionMode": {"enum": ["NonIndexed", "Indexed"]},
    "completions": {**_OPT_COUNT, "description": "null: a work-queue Job"},
    "parallelism": _COUNT, "suspend": {"type": "boolean"},
    "backoffLimit": _COUNT, "backoffLimitPerIndex": _OPT_COUNT,
    "active": _COUNT, "ready": _COUNT, "terminating": _COUNT, "succeeded": _COUNT, "failed": _COUNT,
    "completedIndexes": _INTERVALS, "failedIndexes": _INTERVALS,
    "indexStrip": {"type": ["string", "null"],
                   "description": "Indexed Jobs: per index S succeeded, F failed, R running, P pending, . not started"},
    "conditions": {"type": "array", "items": _obj({"type": _STR, "status": _STR, "reason": _STR, "message": _STR})},
    "disrupted": {"type": "array", "items": _obj({
        "pod": _STR, "index": _OPT_COUNT, "node": {"type": ["string", "null"]}, "reason": _STR, "message": _STR,
        "countedAsFailure": {"type": "boolean",
                             "description": "false when a podFailurePolicy rule Ignores DisruptionTarget"},
        "outcome": {"enum": ["succeeded later", "failed", "retried", "awaiting retry", "replaced", "terminating"]},
    })},
})
