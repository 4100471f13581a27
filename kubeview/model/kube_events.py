"""Kubernetes Events (core/v1) as kubeview keeps them: recent ones per involved object, bounded.

Pure: `EventLog` folds listed and watched Event objects in and answers "what happened to this pod
lately", newest last, with the count and interval `kubectl describe` prints ("45s (x3 over 2m)").
An Event storm cannot grow memory without bound: each involved object keeps its `per_object` most
recently updated Events, the whole log its `total` most recently updated, and a message is cut at
`MAX_MESSAGE` characters. An Event updated again (its count rising) replaces itself in place.

Both shapes the apiserver serves through core/v1 are read (tests/fixtures/k8s/events.json): the
legacy one (`count`, `firstTimestamp`, `lastTimestamp`, `source.component`: the ReplicaSet
controller, kubelets) and the events.k8s.io one (`eventTime`, `series.count`,
`series.lastObservedTime`, `reportingComponent`: kube-scheduler). kubectl's `DescribeEvents` reads
them the same way.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass
from datetime import datetime

EventKey = tuple[str, str]  # the Event object's (namespace, name)
Involved = tuple[str, str, str]  # (kind, namespace, name) of what it is about
MAX_MESSAGE = 1024


def parse_time(stamp: object) -> float | None:
    """RFC 3339 (`2026-11-22T10:04:59Z`, with or without microseconds) -> epoch seconds; None if unset/bad."""
    if not stamp or not isinstance(stamp, str):
        return None
    try:
        return datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


def human_duration(seconds: float) -> str:
    """apimachinery's `duration.HumanDuration`, which kubectl prints ages with: 45s, 3m5s, 12m, 5h3m, 3d."""
    s = int(seconds)
    if s < -1:
        return "<invalid>"
    if s < 0:
        return "0s"
    if s < 120:
        return f"{s}s"
    minutes = s // 60
    if minutes < 10:
        return f"{minutes}m{s % 60}s" if s % 60 else f"{minutes}m"
    if minutes < 180:
        return f"{minutes}m"
    hours = s // 3600
    if hours < 8:
        return f"{hours}h{minutes % 60}m" if minutes % 60 else f"{hours}h"
    if hours < 48:
        return f"{hours}h"
    if hours < 24 * 8:
        return f"{hours // 24}d{hours % 24}h" if hours % 24 else f"{hours // 24}d"
    if hours < 24 * 365 * 2:
        return f"{hours // 24}d"
    return f"{hours // 24 // 365}y"


@dataclass(frozen=True, slots=True)
class EventView:
    key: EventKey
    involved: Involved
    involved_uid: str
    type: str  # Normal / Warning
    reason: str
    message: str
    source: str  # source.component, else reportingComponent (kubectl's "From")
    count: int
    first: float | None  # epoch seconds: eventTime, else firstTimestamp, else creation
    last: float | None  # series.lastObservedTime / lastTimestamp when repeated, else `first`
    resource_version: str = ""

    @classmethod
    def from_api(cls, obj: dict) -> EventView:
        meta = obj.get("metadata") or {}
        ref = obj.get("involvedObject") or obj.get("regarding") or {}
        first = (parse_time(obj.get("eventTime")) or parse_time(obj.get("firstTimestamp"))
                 or parse_time(meta.get("creationTimestamp")))
        series = obj.get("series") or {}
        count = int(obj.get("count") or 1)
        last = first
        if series:
            count = int(series.get("count") or count)
            last = parse_time(series.get("lastObservedTime")) or first
        elif count > 1:
            last = parse_time(obj.get("lastTimestamp")) or first
        message = str(obj.get("message") or obj.get("note") or "").strip()
        if len(message) > MAX_MESSAGE:
            message = message[:MAX_MESSAGE - 1] + "…"
        return cls(
            key=(meta.get("namespace", ""), meta.get("name", "")),
            involved=(ref.get("kind", ""), ref.get("namespace", ""), ref.get("name", "")),
            involved_uid=ref.get("uid", ""),
            type=obj.get("type") or "Normal",
            reason=obj.get("reason") or "",
            message=message,
            source=(obj.get("source") or {}).get("component") or obj.get("reportingComponent")
            or obj.get("reportingController") or "",
            count=max(count, 1),
            first=first,
            last=last,
            resource_version=meta.get("resourceVersion", ""),
        )

    def interval(self, now: float) -> str:
        """kubectl describe's Age column: `45s`, or `10s (x3 over 2m)` for a repeated event."""
        if self.first is None:
            return "<unknown>"
        first = human_duration(now - self.first)
        if self.count > 1:
            return f"{human_duration(now - (self.last or self.first))} (x{self.count} over {first})"
        return first

    @property
    def warning(self) -> bool:
        return self.type == "Warning"


def _second(view: EventView) -> int:
    """Legacy Events carry whole seconds, the scheduler's microseconds: within one second, order is
    not told by the clock (a kubelet's Started at :59 would sort before the Scheduled at :59.4)."""
    return int(view.last or 0.0)


class EventLog:
    """Recent Events per involved object; see the module docstring. Not thread-safe (the model's thread)."""

    def __init__(self, per_object: int = 20, total: int = 5000) -> None:
        self.per_object = per_object
        self.total = total
        self._all: OrderedDict[EventKey, EventView] = OrderedDict()  # least recently updated first
        self._by_object: dict[Involved, OrderedDict[EventKey, None]] = {}

    def __len__(self) -> int:
        return len(self._all)

    def replace(self, objects: list[dict]) -> None:
        """A relist: these Events, oldest first, and nothing else."""
        self._all.clear()
        self._by_object.clear()
        views = sorted(map(EventView.from_api, objects), key=_second)
        for view in views:
            self._put(view)

    def put(self, obj: dict) -> bool:
        """An Event added or updated; False if it is the version already held."""
        view = EventView.from_api(obj)
        old = self._all.get(view.key)
        if old is not None and view.resource_version and old.resource_version == view.resource_version:
            return False
        self._put(view)
        return True

    def delete(self, obj: dict) -> bool:
        meta = obj.get("metadata") or {}
        return self._remove((meta.get("namespace", ""), meta.get("name", ""))) is not None

    def for_object(self, kind: str, namespace: str, name: str, uid: str = "") -> list[EventView]:
        """Its recent Events, newest last (as kubectl describe lists them). With `uid`, Events about an
        earlier object of the same name (a re-created pod) are left out."""
        keys = self._by_object.get((kind, namespace, name)) or ()
        found = [self._all[k] for k in keys]  # in the order they arrived
        if uid:
            found = [e for e in found if not e.involved_uid or e.involved_uid == uid]
        return sorted(found, key=_second)  # stable: within a second, as they arrived

    def involved(self, kind: str) -> list[tuple[str, str]]:
        """(namespace, name) of every object of `kind` the log holds Events about (at most `total`)."""
        return [(ns, name) for k, ns, name in self._by_object if k == kind]

    def latest_warning(self, kind: str, namespace: str, name: str, uid: str = "") -> EventView | None:
        warnings = [e for e in self.for_object(kind, namespace, name, uid) if e.warning]
        return warnings[-1] if warnings else None

    # -- bounds --------------------------------------------------------------------------------
    def _put(self, view: EventView) -> None:
        old = self._all.pop(view.key, None)
        if old is not None and old.involved != view.involved:
            self._unlink(old)
        self._all[view.key] = view
        mine = self._by_object.get(view.involved)
        if mine is None:
            mine = self._by_object[view.involved] = OrderedDict()
        mine[view.key] = None
        mine.move_to_end(view.key)
        while len(mine) > self.per_object:
            self._remove(next(iter(mine)))
        while len(self._all) > self.total:
            self._remove(next(iter(self._all)))

    def _remove(self, key: EventKey) -> EventView | None:
        view = self._all.pop(key, None)
        if view is not None:
            self._unlink(view)
        return view

    def _unlink(self, view: EventView) -> None:
        mine = self._by_object.get(view.involved)
        if mine is not None:
            mine.pop(view.key, None)
            if not mine:
                del self._by_object[view.involved]
