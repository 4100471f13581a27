"""A study's trials as kubeview shows them: headless lines, the `--json` document, the Tune screen's rows.

Pure: reads Optuna's `FrozenTrial`s (data objects) and formats; no storage access. The user attributes
a trial carries are written by `kubeview.tune.trial` (their names are the `ATTR_*` constants).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from optuna.trial import FrozenTrial, TrialState

ATTR_REASON = "reason"  # why a trial failed or was pruned, one sentence
ATTR_RUNNING = "running"  # most consumers Running at once
ATTR_PENDING = "pending"  # consumers Pending at that moment
ATTR_IMAGE = "image"  # "identical" once checked against the reference render
ATTR_WALL = "wall_seconds"  # the producer's elapsed time (also for pruned / failed trials: when it stopped)
ATTR_FRACTION = "fraction"  # share of samples done when the trial ended
ATTR_REQUEUED = "requeued"  # tasks the producer handed out again
PARAMS = ("replicas", "cpu_millis", "samples_per_task", "tile")
FINISHED = (TrialState.COMPLETE, TrialState.PRUNED, TrialState.FAIL)


@dataclass(frozen=True, slots=True)
class TrialRecord:
    number: int
    state: str  # COMPLETE | PRUNED | FAIL | RUNNING | WAITING
    value: float | None  # the objective (wall seconds), COMPLETE only
    params: dict[str, int]
    running: int | None = None
    pending: int | None = None
    wall_seconds: float | None = None
    fraction: float | None = None
    reason: str | None = None
    image: str | None = None
    attrs: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def of(cls, t: FrozenTrial) -> TrialRecord:
        a = t.user_attrs
        reason = a.get(ATTR_REASON)
        if t.state == TrialState.FAIL and not reason:
            reason = "lost: its process stopped without saying why (no heartbeat)"
        return cls(number=t.number, state=t.state.name, value=t.value if t.state == TrialState.COMPLETE else None,
                   params={k: int(v) for k, v in t.params.items()}, running=a.get(ATTR_RUNNING),
                   pending=a.get(ATTR_PENDING), wall_seconds=a.get(ATTR_WALL), fraction=a.get(ATTR_FRACTION),
                   reason=reason, image=a.get(ATTR_IMAGE), attrs=dict(a))

    @property
    def finished(self) -> bool:
        return self.state in ("COMPLETE", "PRUNED", "FAIL")


def params_text(params: dict[str, int]) -> str:
    parts = []
    for key, label, unit in (("replicas", "replicas", ""), ("cpu_millis", "cpu", "m"),
                             ("samples_per_task", "samples/task", ""), ("tile", "tile", "")):
        if key in params:
            parts.append(f"{label} {params[key]}{unit}")
    return ", ".join(parts)


def outcome_text(r: TrialRecord) -> str:
    """What became of a trial, in a few words: `12.3 s`, `pruned at 40% (9.1 s): ...`, `failed: ...`."""
    if r.state == "COMPLETE":
        return f"{r.value:.2f} s"
    if r.state == "PRUNED":
        at = f" at {100 * r.fraction:.0f}%" if r.fraction is not None else ""
        when = f" ({r.wall_seconds:.1f} s)" if r.wall_seconds is not None else ""
        return f"pruned{at}{when}: {r.reason or 'slower than the best'}"
    if r.state == "FAIL":
        return f"failed: {r.reason}"
    return r.state.lower()


def trial_line(r: TrialRecord) -> str:
    """One headless line per finished trial."""
    consumers = f" ({r.running} running, {r.pending} pending)" if r.running is not None else ""
    image = ", image identical" if r.image == "identical" else ""
    return f"trial {r.number}: {params_text(r.params)} -> {outcome_text(r)}{consumers if r.state != 'FAIL' else ''}{image}"


def best_of(records: list[TrialRecord]) -> TrialRecord | None:
    done = [r for r in records if r.state == "COMPLETE" and r.value is not None and math.isfinite(r.value)]
    return min(done, key=lambda r: (r.value, r.number)) if done else None


def first_complete(records: list[TrialRecord]) -> TrialRecord | None:
    done = [r for r in records if r.state == "COMPLETE"]
    return min(done, key=lambda r: r.number) if done else None


def best_line(records: list[TrialRecord]) -> str:
    best = best_of(records)
    counts = {s: sum(1 for r in records if r.state == s) for s in ("COMPLETE", "PRUNED", "FAIL")}
    tally = f"{len(records)} trials: {counts['COMPLETE']} complete, {counts['PRUNED']} pruned, {counts['FAIL']} failed"
    if best is None:
        return f"best: none yet ({tally})"
    first = first_complete(records)
    gain = ""
    if first is not None and first.value is not None and first.number != best.number and best.value:
        gain = f"; first trial {first.value:.2f} s, {first.value / best.value:.2f}x faster"
    return f"best: trial {best.number} {best.value:.2f} s with {params_text(best.params)}{gain} ({tally})"


def redact(url: str) -> str:
    """A storage URL without its password (what is printed and put in --json)."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    host = parts.hostname or ""
    netloc = f"{parts.username}:***@{host}" + (f":{parts.port}" if parts.port else "")
    return urlunsplit(parts._replace(netloc=netloc))


def record_json(r: TrialRecord) -> dict[str, Any]:
    return {"number": r.number, "state": r.state, "value": r.value, "params": r.params, "user_attrs": r.attrs,
            "reason": r.reason}


def study_document(name: str, storage: str, attrs: dict[str, Any], trials: list[FrozenTrial]) -> dict[str, Any]:
    """`kubeview tune --json`: the study, its trials (params, state, value, user attrs) and the best."""
    records = [TrialRecord.of(t) for t in trials]
    best = best_of(records)
    return {"study": name, "storage": redact(storage), "direction": "minimize", "objective": "wall_seconds",
            "attrs": attrs, "trials": [record_json(r) for r in records],
            "best": None if best is None else {"number": best.number, "value": best.value, "params": best.params}}
