"""Held by quota: a Job, ReplicaSet or StatefulSet whose pods the API server's quota admission refused.

A pod refused at admission is never created, so nothing about it is a pod: the controller records a
Warning Event `FailedCreate` on its workload with the API server's words (the Job and ReplicaSet
controllers: `Error creating: <err>`, controller_utils.go; the StatefulSet controller: `create Pod <pod>
in StatefulSet <set> failed error: <err>`), where `<err>` is the quota admission's
(k8s.io/apiserver plugin/resourcequota/controller.go):

    pods "<pod>" is forbidden: exceeded quota: <quota>, requested: <key>=<n>, used: <key>=<n>, limited: <key>=<n>

(several keys joined by "," in sorted order, amounts as `Quantity.String()`), or, for a pod that does
not say an amount the quota limits, `failed quota: <quota>: must specify <keys>`. A workload is held
while it has pods not created (its status against its spec) and its newest such Event names a quota
that still refuses (by the quota controller's count now, where the quota is known). `Held.words()` is
the one wording the views use: "held by quota gpus: requests.nvidia.com/gpu 2/2 — 1 pod not created".
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from kubeview.model.jobs.views import JobPodView, JobView
from kubeview.model.kube_events import EventView
from kubeview.model.quota.objects import QuotaView, units

FAILED_CREATE = "FailedCreate"
HELD_KINDS = ("Job", "ReplicaSet", "StatefulSet")
_EXCEEDED = re.compile(r'(?:pods "(?P<pod>[^"]*)" is forbidden: )?exceeded quota: (?P<quota>[^,\s]+), '
                       r"requested: (?P<requested>\S*), used: (?P<used>\S*), limited: (?P<limited>[^\s]*)")
_MUST_SPECIFY = re.compile(r'(?:pods "(?P<pod>[^"]*)" is forbidden: )?failed quota: (?P<quota>[^:\s]+): '
                           r"must specify (?P<keys>\S+)")


def _pairs(text: str) -> dict[str, str]:
    out = {}
    for part in text.split(","):
        key, sep, value = part.partition("=")
        if sep:
            out[key.strip()] = value.strip()
    return out


@dataclass(frozen=True, slots=True)
class QuotaRefusal:
    """The quota admission's refusal of one pod, read from its words."""

    quota: str
    pod: str  # the pod's name in the message ("" when it names none)
    requested: dict[str, str]  # key -> quantity as written
    used: dict[str, str]
    limited: dict[str, str]
    must_specify: tuple[str, ...] = ()  # "failed quota: q: must specify ..." keys


def parse_refusal(message: str) -> QuotaRefusal | None:
    """The refusal in an Event's message (None: the message is not a quota refusal)."""
    m = _EXCEEDED.search(message)
    if m is not None:
        return QuotaRefusal(m["quota"], m["pod"] or "", _pairs(m["requested"]), _pairs(m["used"]),
                            _pairs(m["limited"]))
    m = _MUST_SPECIFY.search(message)
    if m is not None:
        return QuotaRefusal(m["quota"], m["pod"] or "", {}, {}, {}, tuple(m["keys"].split(",")))
    return None


@dataclass(frozen=True, slots=True)
class Held:
    """A workload held by quota: which quota, the keys it refused at what use, how many pods are missing."""

    kind: str
    namespace: str
    name: str
    quota: str
    limits: tuple[tuple[str, str, str], ...]  # (key, used, hard): the quota's figures now where known
    not_created: int
    message: str  # the API server's words, as the controller recorded them
    reporter: str  # the Event's source component ("job-controller", ...)
    count: int  # how many times it was said (the Event's count)
    last: float | None  # when it was last said (epoch seconds)
    must_specify: tuple[str, ...] = ()

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.kind, self.namespace, self.name)

    def words(self) -> str:
        """"held by quota gpus: requests.nvidia.com/gpu 2/2 — 1 pod not created"."""
        if self.must_specify:
            what = f"pods must specify {', '.join(self.must_specify)}"
        else:
            what = ", ".join(f"{key} {used}/{hard}" for key, used, hard in self.limits)
        pods = "1 pod" if self.not_created == 1 else f"{self.not_created} pods"
        return f"held by quota {self.quota}: {what} — {pods} not created"

    def origin(self) -> str:
        """Where this comes from, said beside it."""
        who = self.reporter or "its controller"
        times = f" (x{self.count})" if self.count > 1 else ""
        return f"from {who}'s FailedCreate Events{times} and the {self.kind}'s status"


def _still_refuses(refusal: QuotaRefusal, quota: QuotaView | None) -> bool:
    """Would the quota refuse the same pod now, by the controller's count? (Unknown quota: yes.)"""
    if quota is None or refusal.must_specify:
        return True
    for key, text in refusal.requested.items():
        hard, asked = quota.hard.get(key), units(key, text)
        if hard is None or asked is None:
            continue
        if quota.used.get(key, 0) + asked > hard:
            return True
    return False


def held_of(kind: str, namespace: str, name: str, events: Sequence[EventView], not_created: int,
            quota_of: Callable[[str, str], QuotaView | None]) -> Held | None:
    """The hold on one workload from its Events (newest last) and its pods not created; None if none."""
    if not_created <= 0:
        return None
    for event in reversed(events):
        if event.reason != FAILED_CREATE:
            continue
        refusal = parse_refusal(event.message)
        if refusal is None:
            return None  # the newest failure is not the quota's
        quota = quota_of(namespace, refusal.quota)
        if not _still_refuses(refusal, quota):
            return None
        keys = sorted(refusal.limited) or list(refusal.must_specify)
        limits = tuple(
            (k, quota.used_text.get(k, "0"), quota.hard_text[k]) if quota is not None and k in quota.hard
            else (k, refusal.used.get(k, "?"), refusal.limited.get(k, "?"))
            for k in keys)
        return Held(kind, namespace, name, refusal.quota, limits, not_created, event.message, event.source,
                    event.count, event.last, refusal.must_specify)
    return None


def job_not_created(job: JobView, pods: Sequence[JobPodView]) -> int:
    """Pods the Job controller wants running now that do not exist: parallelism (or what is left to
    complete, if less) less the pods alive; 0 for a suspended or finished Job."""
    if job.state != "Running":
        return 0
    wanted = job.parallelism
    if job.completions is not None:
        done = len(job.completed_indexes) if job.indexed else job.succeeded
        wanted = min(wanted, job.completions - done)
    alive = sum(1 for p in pods if not p.finished and not p.deleting)
    return max(0, wanted - alive)


def never_created(job: JobView, pods: Sequence[JobPodView], held: Held | None) -> frozenset[int]:
    """An Indexed Job held by quota: the indexes the controller would create next and could not (the
    lowest indexes not completed, not failed and without a pod, as many as `held.not_created`)."""
    if held is None or not job.indexed or job.completions is None:
        return frozenset()
    taken = {p.index for p in pods if not p.finished and not p.deleting}
    out: list[int] = []
    for i in range(job.completions):
        if len(out) >= held.not_created:
            break
        if i not in taken and i not in job.completed_indexes and i not in job.failed_indexes:
            out.append(i)
    return frozenset(out)
