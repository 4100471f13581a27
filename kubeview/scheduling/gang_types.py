"""What a gang's fit says (`GangFit`, each member's `MemberFit`) and the few words for sizes and
amounts that its summary and the planner share; scheduling/gang_fit.py computes it. Pure.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

from kubeview.model.allocation import GPU
from kubeview.model.gpus import vendors
from kubeview.model.views import PodView


@dataclass(slots=True)
class MemberFit:
    """One member after the pass: where it went, or why not (kube-scheduler's message for it)."""

    pod: PodView
    node: str | None  # its node (bound before, or placed by the pass); None: no node took it
    bound: bool  # already on its node before the pass
    message: str | None  # PodScheduled=False message kube-scheduler would write; None when it binds


@dataclass(slots=True)
class GangFit:
    fits: bool  # at least min_count members placed together (bound ones count)
    placement: list[tuple[PodView, str]]  # every placed member and its node; empty when it does not fit
    room: int  # how many members could be placed together now (bound ones included)
    min_count: int
    size: int  # members considered (finished and terminating ones are not)
    summary: str  # "4 × 8 GPUs: room for 3 (largest free block per node: a 8, b 8, c 8, d 4)"
    message: str | None  # the group's reason when it does not fit (what the members that fit carry)
    saturated: dict[str, dict[str, int]] = field(default_factory=dict)  # took members, then refused: reason -> members
    excluded: dict[str, list[str]] = field(default_factory=dict)  # took none: the reasons it refused them
    members: list[MemberFit] = field(default_factory=list)  # in the order given
    notes: tuple[str, ...] = ()  # what this fit does not evaluate, said plainly
    topology_key: str | None = None  # the group's topology constraint: all inside one domain of this label
    domain: str | None = None  # with a key: the domain it goes to (None: no domain holds it)
    domains: dict[str, tuple[int, int, int]] = field(default_factory=dict)  # domain -> (room, members, free GPUs)

    def excluded_counts(self) -> dict[str, int]:
        """Reason -> nodes excluded for it (a node counts once per reason), most first."""
        counts = Counter(r for reasons in self.excluded.values() for r in reasons)
        return dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))


def describe(requests: dict[str, int]) -> str:
    """A member's size in a few words: its GPUs (a MIG slice or another vendor's GPU in its own name),
    else its cpu and memory."""
    gpus = requests.get(GPU, 0)
    if gpus:
        return f"{gpus} GPU" + ("" if gpus == 1 else "s")
    other = [(name, n) for name, n in sorted(requests.items()) if n > 0 and vendors.CONFIGURED.classify(name) is not None]
    if other:
        return ", ".join(f"{n} {name}" for name, n in other)
    parts = []
    if requests.get("cpu"):
        parts.append(f"{requests['cpu'] / 1000:g} cpu")
    if requests.get("memory"):
        parts.append(f"{requests['memory'] / 2**30:.3g}Gi")
    return ", ".join(parts) or "no requests"


def sizes(pods: Sequence[PodView]) -> str:
    counts = Counter(describe(p.requests) for p in pods)
    return " + ".join(f"{n} × {what}" for what, n in counts.items())


def amount_text(resource: str, value: int) -> str:
    """An amount with its unit: GPUs bare (where it is read the words say GPUs), cpu in cores, memory
    in Gi, anything else with its resource name."""
    if resource == GPU:
        return str(value)
    if resource == "cpu":
        return f"{value / 1000:g} cpu"
    if resource in ("memory", "ephemeral-storage"):
        return f"{value / 2**30:.3g}Gi {resource}"
    return f"{value} {resource}"
