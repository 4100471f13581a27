"""Saying what happened when the render's producer died, and what of the work was kept.

Pure: fed the producer pod's container status and the producer's fresh `/status` answers, it
returns one line per event for the user. A death reads the pod's `lastState.terminated`
(exit code, reason; 128+N is signal N, as kubelets report it); the first answer of the
restarted producer says how much came back from its checkpoint. The render gives up only when
the producer keeps dying without the job getting further (issue 16 item 15: before, one kill
silently restarted progress from 0 and three gave "the producer keeps failing").
"""

from __future__ import annotations

import signal
from dataclasses import dataclass

from kubeview.render.status import RenderStatus

MAX_FRUITLESS_DEATHS = 3
"""Deaths in a row with no more samples done in between before the render gives up."""


def describe_exit(terminated: dict | None) -> str:
    """`lastState.terminated` -> "killed by SIGKILL, exit 137", "out of memory (OOMKilled), exit 137"."""
    if not terminated:
        return "no exit status recorded"
    code = terminated.get("exitCode")
    reason = terminated.get("reason") or ""
    sig = terminated.get("signal") or (code - 128 if isinstance(code, int) and 128 < code < 160 else None)
    parts = []
    if reason == "OOMKilled":
        parts.append("out of memory (OOMKilled)")
    elif sig:
        try:
            parts.append(f"killed by {signal.Signals(sig).name}")
        except ValueError:
            parts.append(f"killed by signal {sig}")
    if isinstance(code, int):
        parts.append(f"exit {code}")
    return ", ".join(parts) or reason or "no exit status recorded"


def _pct(done: int, total: int) -> str:
    return f"{100.0 * done / total:.1f}%" if total > 0 else "0.0%"


@dataclass
class DeathWatch:
    """Feed `observe` on every poll; it returns the new lines to show."""

    checkpoint: str | None = None  # where the producer checkpoints, for the messages
    deaths: int = 0
    fruitless: int = 0  # deaths in a row with no more samples done than before the previous one
    last_exit: str = ""
    _done: int = 0  # samples done in the producer's latest answer
    _best: int = 0  # most samples done ever seen
    _best_at_death: int = -1  # _best when the producer last died
    _total: int = 0
    _awaiting_resume: bool = False

    def observe(self, restarts: int, terminated: dict | None, status: RenderStatus | None) -> list[str]:
        """`restarts`: the producer container's restartCount; `terminated`: its lastState.terminated;
        `status`: a fresh /status answer (None if the producer did not answer this time)."""
        out: list[str] = []
        if restarts > self.deaths:
            new = restarts - self.deaths
            self.deaths = restarts
            self.last_exit = describe_exit(terminated)
            self.fruitless = self.fruitless + new if self._best <= self._best_at_death else new
            self._best_at_death = self._best
            times = f", {new} deaths since the last look" if new > 1 else ""
            at = f" at {_pct(self._done, self._total)}" if self._total else " before it answered"
            out.append(f"render: the producer died{at} ({self.last_exit}{times}); restarting it "
                       f"(death {self.deaths})")
            self._awaiting_resume = True
        if status is not None:
            self._total = status.samples_total
            if self._awaiting_resume:
                self._awaiting_resume = False
                kept = status.samples_done
                where = f"from its checkpoint {self.checkpoint}" if self.checkpoint else "with no checkpoint"
                lost = max(0, self._done - kept)
                out.append(f"render: the producer is back {where} at {_pct(kept, status.samples_total)}; "
                           f"{_pct(lost, status.samples_total)} of the work is done again")
            self._done = status.samples_done
            self._best = max(self._best, self._done)
        return out

    def give_up(self) -> str | None:
        """The one-line reason to stop, once the producer died MAX_FRUITLESS_DEATHS times in a row
        without the render getting further; None while it should be given another chance."""
        if self.fruitless < MAX_FRUITLESS_DEATHS:
            return None
        done = _pct(self._best, self._total) if self._total else "nothing"
        kept = f", kept in {self.checkpoint}" if self.checkpoint and self._best else ""
        return (f"the producer died {self.deaths} times, the last {self.fruitless} without the render getting "
                f"further (last: {self.last_exit}); {done} of the image was done{kept}")
