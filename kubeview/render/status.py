"""The producer's `GET /status` JSON as a typed value, and the one-line progress text made from it.

Pure: parsing and formatting only. The producer is another process (possibly another version), so
parsing is defensive: a missing or mistyped field raises `StatusError` with one sentence instead of
a KeyError deep inside the TUI.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import TypeVar


class StatusError(ValueError):
    """The producer's /status answer is not what kubeview understands."""


@dataclass(frozen=True, slots=True)
class ConsumerStatus:
    id: str
    address: str
    tasks_done: int
    samples_per_second: float
    state: str  # working | idle | gone
    last_seen_seconds: float


@dataclass(frozen=True, slots=True)
class TaskCounts:
    total: int
    done: int
    leased: int
    queued: int
    requeued: int


@dataclass(frozen=True, slots=True)
class RenderStatus:
    scene: str
    width: int
    height: int
    spp: int
    tasks: TaskCounts
    samples_done: int
    samples_total: int
    samples_per_second: float
    eta_seconds: float | None
    elapsed_seconds: float
    finished: bool
    output: str | None
    consumers: list[ConsumerStatus] = field(default_factory=list)

    @property
    def fraction(self) -> float:
        """Share of samples done, 0..1."""
        return 1.0 if self.samples_total <= 0 else min(1.0, self.samples_done / self.samples_total)

    @property
    def connected(self) -> int:
        return sum(1 for c in self.consumers if c.state != "gone")


T = TypeVar("T")


def _get(doc: dict, key: str, kind: type[T] | tuple[type[T], ...], where: str = "") -> T:
    if key not in doc:
        raise StatusError(f"producer status has no field {where}{key}")
    value = doc[key]
    if isinstance(value, bool) and kind is not bool:
        raise StatusError(f"producer status field {where}{key} has the wrong type")
    if not isinstance(value, kind):
        raise StatusError(f"producer status field {where}{key} has the wrong type")
    return value


def _num(doc: dict, key: str, where: str = "") -> float:
    value = float(_get(doc, key, (int, float), where))
    if not math.isfinite(value):
        raise StatusError(f"producer status field {where}{key} is not a finite number")
    return value


def _int(doc: dict, key: str, where: str = "") -> int:
    return int(_get(doc, key, int, where))


def parse_status(data: bytes | str | dict) -> RenderStatus:
    """Bytes or text of `GET /status` (or the decoded dict) -> `RenderStatus`."""
    if isinstance(data, bytes | str):
        try:
            doc = json.loads(data)
        except (ValueError, UnicodeDecodeError):
            raise StatusError("producer status is not JSON") from None
    else:
        doc = data
    if not isinstance(doc, dict):
        raise StatusError("producer status is not a JSON object")
    tasks = _get(doc, "tasks", dict)
    counts = TaskCounts(*(_int(tasks, k, "tasks.") for k in ("total", "done", "leased", "queued", "requeued")))
    consumers = []
    for i, c in enumerate(_get(doc, "consumers", list)):
        if not isinstance(c, dict):
            raise StatusError(f"producer status field consumers[{i}] is not an object")
        where = f"consumers[{i}]."
        consumers.append(ConsumerStatus(
            id=str(_get(c, "id", str, where)), address=str(_get(c, "address", str, where)),
            tasks_done=_int(c, "tasks_done", where), samples_per_second=_num(c, "samples_per_second", where),
            state=str(_get(c, "state", str, where)), last_seen_seconds=_num(c, "last_seen_seconds", where)))
    eta = doc.get("eta_seconds")
    if eta is not None:
        eta = _num(doc, "eta_seconds")
    output = doc.get("output")
    return RenderStatus(
        scene=str(_get(doc, "scene", str)), width=_int(doc, "width"), height=_int(doc, "height"),
        spp=_int(doc, "spp"), tasks=counts, samples_done=_int(doc, "samples_done"),
        samples_total=_int(doc, "samples_total"), samples_per_second=_num(doc, "samples_per_second"),
        eta_seconds=eta, elapsed_seconds=_num(doc, "elapsed_seconds"),
        finished=bool(_get(doc, "finished", bool)), output=output if isinstance(output, str) else None,
        consumers=consumers)


def human_rate(value: float) -> str:
    for unit, size in (("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if value >= size:
            return f"{value / size:.2f}{unit}"
    return f"{value:.0f}"


def human_seconds(value: float | None) -> str:
    if value is None:
        return "?"
    s = int(round(value))
    if s >= 3600:
        return f"{s // 3600}h{s % 3600 // 60:02d}m"
    if s >= 60:
        return f"{s // 60}m{s % 60:02d}s"
    return f"{s}s"


def progress_line(status: RenderStatus, running: int, pending: int) -> str:
    """`render spheres 400x224 spp 100:  42.0%  1.23M samples/s  ETA 12s  consumers 2 running, 0 pending`."""
    return (f"render {status.scene} {status.width}x{status.height} spp {status.spp}: "
            f"{100 * status.fraction:5.1f}%  {human_rate(status.samples_per_second)} samples/s  "
            f"ETA {human_seconds(status.eta_seconds)}  consumers {running} running, {pending} pending")
