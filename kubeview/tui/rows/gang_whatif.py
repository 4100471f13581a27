"""Packing's what-if for a gang: would the whole group fit, under the live policy and the edited one.

A gang is typed as "4 pods × 8 GPUs" (or "4x8", "4 x 8 gpus"), or picked among the cluster's gangs
with members waiting. Both columns come from `scheduling.gang_fit` (`fit_gang`, or `fit_of` for a gang
of the cluster: its minCount and shared claims), the function the embedded scheduler runs, so the
preview is what the scheduler will do: all or nothing. Per node the table shows how many members each
policy puts there, and why the edited one refuses the rest.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, replace

from rich.text import Text

from kubeview.model.allocation import Allocation
from kubeview.model.views import PodView
from kubeview.scheduling.config import PackingConfig
from kubeview.scheduling.gang_fit import GangFit, describe, fit_gang, uniform_members
from kubeview.tui import format as fmt
from kubeview.tui.format import GPU
from kubeview.tui.rows import whatif
from kubeview.tui.rows.column import Column

MAX_PODS = 512
MAX_GPUS = 64
_SPEC = re.compile(r"^\s*(\d+)\s*(?:pods?)?\s*[x×*]\s*(\d+)\s*(?:gpus?)?\s*$", re.IGNORECASE)
COLUMNS = [  # as narrow as the pod what-if's (rows/whatif.py) at 80 columns
    *whatif.COLUMNS[:2],
    Column("live", "LIVE PODS", 9, "right", least=4, short="LIVE"),
    Column("edited", "EDITED PODS", 11, "right", least=6, short="EDITED"),
    *whatif.COLUMNS[4:6],
    replace(whatif.WHY_POINT, label="WHY NOT (edited)", short="WHY NOT"),
]


@dataclass(frozen=True, slots=True)
class GangSpec:
    """A hypothetical gang: `pods` members, each asking `gpus` GPUs (and 1 cpu, 1Gi); minCount = pods."""

    pods: int
    gpus: int

    def __str__(self) -> str:
        return f"{self.pods} pod{'' if self.pods == 1 else 's'} × {self.gpus} GPU{'' if self.gpus == 1 else 's'}"


def parse_gang(text: str) -> GangSpec:
    """"4 pods × 8 GPUs", "4x8 gpus", "4*8" -> GangSpec(4, 8); ValueError with a one-line reason."""
    m = _SPEC.match(text)
    if m is None:
        raise ValueError(f"{text.strip()!r} is not a gang: say PODS x GPUS, e.g. 4x8 or 4 pods × 8 GPUs")
    pods, gpus = int(m.group(1)), int(m.group(2))
    if not 1 <= pods <= MAX_PODS:
        raise ValueError(f"a gang has 1 to {MAX_PODS} pods, not {pods}")
    if gpus > MAX_GPUS:
        raise ValueError(f"a member asks at most {MAX_GPUS} GPUs, not {gpus}")
    return GangSpec(pods, gpus)


def hypothetical_gang(spec: GangSpec) -> list[PodView]:
    """`spec.pods` members asking what the hypothetical pod asks (the GPU taint tolerated, as GPU jobs do)."""
    return uniform_members(spec.pods, {"cpu": "1", "memory": "1Gi", GPU: str(spec.gpus)}, namespace="what-if",
                           tolerations=[{"key": GPU, "operator": "Exists", "effect": "NoSchedule"}])


@dataclass(slots=True)
class GangWhatIf:
    alloc: Allocation
    live: GangFit
    edited: GangFit
    config: PackingConfig
    order: list[str]
    row: dict[str, int]
    live_on: Counter[str]
    edited_on: Counter[str]

    @property
    def summary(self) -> Text:
        """Two lines: each policy's verdict and the fit's summary (where, or room for how many and why)."""
        out = Text()
        for n, (label, fit) in enumerate((("live", self.live), ("edited", self.edited))):
            if n:
                out.append("\n")
            out.append(f"{label} → ", style="bold")
            out.append("fits" if fit.fits else "does not fit", style="bold green" if fit.fits else "bold red")
            out.append(f"  {verdict_detail(fit)}")
        return out


def verdict_detail(fit: GangFit) -> str:
    """The summary without what the verdict says already: "on a 2, b 2", or "room for 3 (largest …)"."""
    detail = fit.summary.split(": ", 1)[-1]
    if fit.fits and detail.startswith("fits"):
        return "on " + detail.removeprefix("fits").strip(" ()")
    return detail


def members_on(fit: GangFit) -> Counter[str]:
    """Members per node in the pass: where they go when it fits, where the ones that fit would wait
    otherwise (bound members where they are)."""
    return Counter(m.node for m in fit.members if m.node is not None)


def compute(alloc: Allocation, live: GangFit, edited: GangFit, config: PackingConfig) -> GangWhatIf:
    """The what-if of two fits of the same gang (`fit_gang` or `fit_of` under each policy)."""
    a, b = members_on(live), members_on(edited)
    order = sorted(alloc.nodes, key=lambda n: (-b[n], -a[n], n in edited.excluded, n))
    return GangWhatIf(alloc, live, edited, config, order, {n: i for i, n in enumerate(alloc.nodes)}, a, b)


def compute_hypothetical(alloc: Allocation, spec: GangSpec, live: PackingConfig, edited: PackingConfig) -> GangWhatIf:
    members = hypothetical_gang(spec)
    return compute(alloc, fit_gang(alloc, members, spec.pods, live), fit_gang(alloc, members, spec.pods, edited), edited)


def title(name: str, members: list[PodView], min_count: int) -> str:
    """The box's first line, short enough for 80 columns: which gang, its members' sizes (as gang_fit's
    summary says them: "4 × 8 GPUs"), its minCount."""
    from rich.markup import escape

    sizes = Counter(describe(p.requests) for p in members)
    what = " + ".join(f"{n} × {s}" for s, n in sizes.items()) or "no members"
    return f"[b]gang {escape(name)}[/b]: {escape(what)}, minCount {min_count}"


def _count(n: int, fit: GangFit, node: str) -> Text:
    if n:
        return Text(str(n), style="bold green" if fit.fits else "yellow")
    refused = node in fit.excluded or node in fit.saturated
    return Text("✗" if refused else "-", style="red" if refused else "dim")


def why_not(fit: GangFit, node: str, width: int | None = None) -> str:
    """Why the fit put no more members on `node`; in short words (`short of GPU`) where the whole ones
    are wider than `width`."""
    if node in fit.saturated:
        took = members_on(fit)[node]
        ranked = sorted(fit.saturated[node].items(), key=lambda kv: (-kv[1], kv[0]))
        said = f"took {took}, then " + ", ".join(f"{n} × {r}" for r, n in ranked)
        if width is None or len(said) <= width:
            return said
        return f"took {took}, then " + ", ".join(f"{n} × {fmt.short_reason(r)}" for r, n in ranked)
    return fmt.reasons_in(list(fit.excluded.get(node, ())), width)


def cells(w: GangWhatIf, node: str, width_of: dict[str, int] | None = None) -> list[Text | str]:
    a, b = w.live_on[node], w.edited_on[node]
    delta = Text(f"{b - a:+d}", style="green" if b > a else "red") if a != b else Text("")
    base = whatif.cells_base(w.alloc, w.row[node], node, w.config)
    return [base[0], base[1], _count(a, w.live, node), _count(b, w.edited, node), delta, base[2],
            Text(why_not(w.edited, node, (width_of or {}).get("why")), style="dim")]
