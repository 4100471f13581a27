"""How much of the machine a benchmark really had: CPU time stolen by the hypervisor while it ran.

On a shared VM (these 2-core CI machines) other tenants take the CPU in bursts of hundreds of
milliseconds; a latency percentile measured through such a burst says more about the neighbours
than about kubeview. Benchmarks print the steal share of their run beside their figures.
"""

from __future__ import annotations

from pathlib import Path

STAT = Path("/proc/stat")


def cpu_times() -> tuple[int, int] | None:
    """(steal, total) jiffies over all CPUs since boot, or None where /proc/stat is not Linux's."""
    try:
        fields = STAT.read_text().split("\n", 1)[0].split()
    except OSError:
        return None
    if not fields or fields[0] != "cpu" or len(fields) < 9:
        return None
    values = [int(v) for v in fields[1:]]
    return values[7], sum(values[:8])  # user nice system idle iowait irq softirq steal


class StealMeter:
    """`with StealMeter() as m: ...` (or `m = StealMeter().start()` ... `m.stop()`), then `m.share`:
    the fraction of CPU time the hypervisor stole meanwhile (None where unknown)."""

    def start(self) -> StealMeter:
        self.begin = cpu_times()
        self.share: float | None = None
        return self

    def stop(self) -> None:
        end = cpu_times()
        if self.begin is not None and end is not None and end[1] > self.begin[1]:
            self.share = (end[0] - self.begin[0]) / (end[1] - self.begin[1])

    def __enter__(self) -> StealMeter:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def describe(share: float | None) -> str:
    """How a benchmark line says it: "3% of CPU time stolen", or that it is unknown."""
    return "steal unknown" if share is None else f"{share:.0%} of CPU time stolen"
