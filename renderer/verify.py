"""Opt-in result verification: a sample of tasks is traced by two different consumers.

The renderer is deterministic, so two honest results for a task are the same bits.  A sampled
task's first result is held and the task is leased again to someone else; the result is
accepted once two consumers agree.  When they differ the task goes to a third consumer, and
whoever disagrees with the agreeing pair is guilty: the producer refuses it and discards its
work (as volunteer-computing systems such as BOINC do with redundant computing).

Pure: no I/O.  Identity is the connection (the lease owner), so a consumer that holds the token
and reconnects could be chosen to confirm its own earlier result; verification catches a faulty
or lying consumer, not one that also games identities.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

_GOLDEN = 0x9E3779B1


@dataclass(frozen=True)
class Verdict:
    accepted: bool  # record this result now
    guilty: tuple[str, ...] = ()  # owners whose result disagreed with the agreeing pair
    exclude: frozenset[str] = frozenset()  # if not accepted: who must not trace the task again


@dataclass
class Verifier:
    fraction: float  # share of tasks traced twice, 0..1
    opinions: dict[int, list[tuple[str, bytes]]] = field(default_factory=dict)  # task -> [(owner, bits)]
    checked: int = 0  # tasks confirmed by two consumers
    disputes: int = 0

    def sampled(self, task_id: int) -> bool:
        """A fixed pseudo-random sample of task ids (the same every run of the job)."""
        return ((task_id * _GOLDEN) & 0xFFFFFFFF) < self.fraction * 2**32

    def result(self, task_id: int, owner: str, data: np.ndarray) -> Verdict:
        bits = data.tobytes()
        held = self.opinions.setdefault(task_id, [])
        if any(o == owner for o, _ in held):  # one opinion per consumer
            return Verdict(False, exclude=frozenset(o for o, _ in held))
        if any(b == bits for _, b in held):
            guilty = tuple(o for o, b in held if b != bits)
            del self.opinions[task_id]
            self.checked += 1
            return Verdict(True, guilty)
        if held:
            self.disputes += 1
        held.append((owner, bits))
        return Verdict(False, exclude=frozenset(o for o, _ in held))

    def forget(self, owner: str) -> None:
        """A refused consumer's opinions count for nothing."""
        for held in self.opinions.values():
            held[:] = [(o, b) for o, b in held if o != owner]
