"""Upstream's own pool availability (KEP-5677, `resource.k8s.io/v1alpha3` ResourcePoolStatusRequest,
alpha gate DRAResourcePoolStatus) beside kubeview's, and where they differ. Pure.

How the API works (pkg/controller/resourcepoolstatusrequest in v1.37.2): someone creates a request
(`spec.driver`, optional `spec.poolName`, `spec.limit`); kube-controller-manager's controller fills
`status` once (pools sorted by driver and name, `poolCount`, a `Complete` or `Failed` condition) and
never again: the answer is a point in time, and the object is deleted an hour after it completed.
kubeview creates none (it only reads); it compares every answered request it sees with its own
figures now. Upstream's terms: `totalDevices` of the newest generation, `allocatedDevices` (devices
in some claim's results, adminAccess results skipped, a shared device once), `unavailableDevices`
(a NoSchedule/NoExecute taint, the slice's or a DeviceTaintRule's, allocated or not),
`availableDevices` = total - allocated - unavailable (not below 0); an incomplete pool has a
`validationError` and no counts. kubeview's free devices also leave out devices whose shared counters
are used up (partitionable GPUs) and devices of a deleted node: differences it shows with that cause.
"""

from __future__ import annotations

from dataclasses import dataclass, field

PoolKey = tuple[str, str]  # (driver, pool name)


@dataclass(slots=True)
class PoolCount:
    """kubeview's figures for one pool (GpuLedger.pool_counts)."""

    node: str
    devices: int = 0
    allocated: int = 0
    tainted: int = 0  # carries a NoSchedule/NoExecute taint, held or not (upstream's "unavailable")
    free: int = 0
    blocked: int = 0  # not free for counters used up or an incomplete pool
    gone: int = 0  # its node was deleted

    def add(self, state: str, blocking_taint: bool) -> None:
        self.devices += 1
        self.tainted += blocking_taint
        self.allocated += state == "allocated"
        self.free += state == "free"
        self.blocked += state == "unavailable"
        self.gone += state == "gone"


@dataclass(frozen=True, slots=True)
class UpstreamPool:
    node: str | None
    total: int | None
    allocated: int | None
    available: int | None
    unavailable: int | None
    validation_error: str | None


@dataclass(frozen=True, slots=True)
class PoolAnswer:
    """One ResourcePoolStatusRequest: what it asked and, once the controller answered, the pools."""

    name: str
    driver: str
    pool: str | None
    answered: bool
    completed_at: str | None  # the Complete/Failed condition's lastTransitionTime
    failed: str | None  # the Failed condition's message
    pool_count: int | None
    pools: dict[PoolKey, UpstreamPool] = field(default_factory=dict)

    @property
    def truncated(self) -> bool:
        return self.pool_count is not None and len(self.pools) < self.pool_count

    @classmethod
    def from_api(cls, obj: dict) -> PoolAnswer:
        meta, spec, status = obj.get("metadata") or {}, obj.get("spec") or {}, obj.get("status")
        conditions = {c.get("type"): c for c in (status or {}).get("conditions") or ()}
        done = conditions.get("Complete") or conditions.get("Failed") or {}
        failed = conditions.get("Failed")
        pools = {}
        for p in (status or {}).get("pools") or ():
            pools[(p.get("driver", ""), p.get("poolName", ""))] = UpstreamPool(
                p.get("nodeName"), p.get("totalDevices"), p.get("allocatedDevices"), p.get("availableDevices"),
                p.get("unavailableDevices"), p.get("validationError"))
        return cls(meta.get("name", ""), spec.get("driver", ""), spec.get("poolName"), status is not None,
                   done.get("lastTransitionTime"),
                   (failed.get("message") or "failed") if failed and failed.get("status") == "True" else None,
                   (status or {}).get("poolCount"), pools)


class UpstreamPools:
    """The ResourcePoolStatusRequests the cluster holds (by name)."""

    def __init__(self) -> None:
        self.answers: dict[str, PoolAnswer] = {}

    def apply(self, obj: dict, deleted: bool) -> bool:
        name = (obj.get("metadata") or {}).get("name", "")
        if deleted:
            return self.answers.pop(name, None) is not None
        self.answers[name] = PoolAnswer.from_api(obj)
        return True

    def replace(self, objects) -> None:
        self.answers = {a.name: a for a in map(PoolAnswer.from_api, objects)}


@dataclass(frozen=True, slots=True)
class PoolDiff:
    request: str
    driver: str
    pool: str
    what: str  # "devices" | "allocated" | "unavailable" | "available" | "pool" | "request"
    ours: int | str | None
    upstream: int | str | None
    why: str  # what kubeview knows that explains it ("" if nothing does)
    as_of: str | None  # when upstream answered: its figures are from then, kubeview's from now


def _why(ours: PoolCount, what: str) -> str:
    causes = []
    if what == "available" and ours.blocked:
        causes.append(f"{ours.blocked} not free in kubeview: shared counters used up (or pool incomplete)")
    if ours.gone:
        causes.append(f"{ours.gone} on a deleted node (kubeview: gone)")
    return "; ".join(causes) or "changed since upstream answered, or counted differently"


def compare(ours: dict[PoolKey, PoolCount], answers: dict[str, PoolAnswer]) -> list[PoolDiff]:
    """Every difference between upstream's answered requests and kubeview's figures now."""
    out: list[PoolDiff] = []
    for name, a in sorted(answers.items()):
        if not a.answered:
            continue
        if a.failed:
            out.append(PoolDiff(name, a.driver, a.pool or "", "request", None, a.failed, "upstream failed",
                                a.completed_at))
            continue
        for key, up in sorted(a.pools.items()):
            mine = ours.get(key)
            if mine is None:
                out.append(PoolDiff(name, *key, "pool", None, "listed", "kubeview has no such pool", a.completed_at))
                continue
            if up.validation_error:
                if not mine.blocked:
                    out.append(PoolDiff(name, *key, "pool", "complete", up.validation_error, "", a.completed_at))
                continue
            figures = (("devices", mine.devices, up.total), ("allocated", mine.allocated, up.allocated),
                       ("unavailable", mine.tainted, up.unavailable), ("available", mine.free, up.available))
            for what, have, theirs in figures:
                if theirs is not None and have != theirs:
                    out.append(PoolDiff(name, *key, what, have, theirs, _why(mine, what), a.completed_at))
        if not a.truncated:
            for key in sorted(k for k in ours if k[0] == a.driver and (a.pool is None or k[1] == a.pool)):
                if key not in a.pools:
                    out.append(PoolDiff(name, *key, "pool", "listed", None, "not in upstream's answer",
                                        a.completed_at))
    return out
