"""What `kubeview tune` searches: consumer replicas, their cpu request, samples per task and tile size.

Pure: ranges parsed from `MIN:MAX` options, the parameters of one trial, and how a trial draws them
(anything with Optuna's `suggest_int`). A range of one value (`--tile 32`) fixes that knob.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Protocol

MAX_REPLICAS = 10_000
MAX_CPU_MILLIS = 64_000
MAX_TILE = 512  # renderer.scene's limit


class RangeError(ValueError):
    """A range option that cannot be used; the message is one sentence naming the option."""


@dataclass(frozen=True, slots=True)
class IntRange:
    low: int
    high: int
    log: bool = False  # sample on a log scale (knobs whose effect is a ratio: cpu, task size)

    def clamp(self, value: int) -> int:
        return min(self.high, max(self.low, value))

    def text(self, unit: str = "") -> str:
        return f"{self.low}{unit}" if self.low == self.high else f"{self.low}{unit}:{self.high}{unit}"


@dataclass(frozen=True, slots=True)
class TrialParams:
    """One point of the search: what a trial's render job is run with."""

    replicas: int
    cpu_millis: int
    samples_per_task: int
    tile: int

    @property
    def cpu(self) -> str:
        return f"{self.cpu_millis}m"

    def as_dict(self) -> dict[str, int]:
        return asdict(self)

    def job_args(self) -> tuple[str, ...]:
        """The producer's (and the reference render's) task-size options."""
        return ("--chunk", str(self.samples_per_task), "--tile", str(self.tile))


@dataclass(frozen=True, slots=True)
class SearchSpace:
    replicas: IntRange
    cpu_millis: IntRange
    samples_per_task: IntRange
    tile: IntRange

    def describe(self) -> str:
        return (f"replicas {self.replicas.text()}, cpu {self.cpu_millis.text('m')}, "
                f"samples/task {self.samples_per_task.text()}, tile {self.tile.text()}")

    def contains(self, params: dict[str, int]) -> bool:
        return all(getattr(self, k).low <= v <= getattr(self, k).high for k, v in params.items())


class Suggests(Protocol):
    def suggest_int(self, name: str, low: int, high: int, *, log: bool = False) -> int: ...


def suggest(trial: Suggests, space: SearchSpace) -> TrialParams:
    """Draw one trial's parameters (the names are the study's parameter names)."""
    values = {name: trial.suggest_int(name, r.low, r.high, log=r.log)
              for name, r in ((n, getattr(space, n)) for n in ("replicas", "cpu_millis", "samples_per_task", "tile"))}
    return TrialParams(**values)


def baseline(space: SearchSpace, *, replicas: int, samples_per_task: int, tile: int) -> TrialParams:
    """What `kubeview --render` would run (its replicas at 1000m, the scene's task size), inside the
    ranges: the first trial of a new study, so "best vs first" is the gain over the default."""
    return TrialParams(space.replicas.clamp(replicas), space.cpu_millis.clamp(1000),
                       space.samples_per_task.clamp(samples_per_task), space.tile.clamp(tile))


def _int(text: str, flag: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise RangeError(f"{flag}: {text!r} is not a whole number") from None


def _millis(text: str, flag: str) -> int:
    from kubeview.model.quantity import QuantityError, to_units

    try:
        return int(to_units("cpu", text))
    except QuantityError:
        raise RangeError(f"{flag}: {text!r} is not a cpu amount (examples: 100m, 0.5, 2)") from None


def parse_range(text: str, flag: str, *, low: int, high: int, log: bool = False,
                unit: Callable[[str, str], int] = _int, suffix: str = "") -> IntRange:
    """`MIN:MAX` or one value, each between `low` and `high`; raises RangeError (one sentence).
    `suffix` is the unit the bounds are written in (cpu: "m", millicores)."""
    parts = text.split(":")
    if len(parts) > 2 or not all(p.strip() for p in parts):
        raise RangeError(f"{flag}: expected MIN:MAX or one value, got {text!r}")
    lo, hi = (unit(p.strip(), flag) for p in (parts if len(parts) == 2 else parts * 2))
    if lo > hi:
        raise RangeError(f"{flag}: MIN is above MAX in {text!r}")
    if lo < low or hi > high:
        raise RangeError(f"{flag}: {text!r} is outside {low:,}{suffix}..{high:,}{suffix}")
    return IntRange(lo, hi, log)


def parse_space(replicas: str, cpu: str, samples_per_task: str, tile: str, *, spp: int) -> SearchSpace:
    """The four range options; samples per task cannot exceed the job's samples per pixel."""
    return SearchSpace(
        replicas=parse_range(replicas, "--replicas", low=1, high=MAX_REPLICAS),
        cpu_millis=parse_range(cpu, "--cpu", low=1, high=MAX_CPU_MILLIS, log=True, unit=_millis,
                               suffix="m"),
        samples_per_task=parse_range(samples_per_task, "--samples-per-task", low=1, high=spp, log=True),
        tile=parse_range(tile, "--tile", low=1, high=MAX_TILE, log=True),
    )
