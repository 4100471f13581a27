"""The what-if table: each node's filter result and score under the live policy and the edited one.

Both come from `kubeview.scheduling.evaluate`, the function the extender and the embedded scheduler
run, so the preview is what the scheduler will do, not an imitation of it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from rich.text import Text

from kubeview.model.allocation import Allocation
from kubeview.model.views import PodView
from kubeview.scheduling.config import PackingConfig
from kubeview.scheduling.evaluate import Placement, evaluate
from kubeview.tui import format as fmt
from kubeview.tui.format import GPU
from kubeview.tui.rows.column import Column

# WHY NOT wants its first reason's short words (`short of GPU`): at 80 columns the fixed columns give
# their padding for it, as it read `Insufficient …` beside 12 blank cells
WHY_POINT = Column("why", "WHY NOT", 0, point=lambda text: fmt.short_reason(text.split(", ")[0]))
COLUMNS = [
    Column("node", "NODE", 16, least=14),  # dra-mig-node-1 whole
    Column("free", "FREE cpu/mem/GPU", 18, least=12, short="FREE"),
    Column("live", "LIVE", 7, "right", least=4),
    Column("edited", "EDITED", 7, "right", least=6),
    Column("delta", "Δ", 3, "right"),
    Column("adjust", "BIAS", 6, least=5),
    WHY_POINT,
]


def hypothetical_pod(gpus: int) -> PodView:
    """A pod asking for `gpus` GPUs (plus 1 cpu, 1Gi), tolerating the GPU taint, as GPU jobs do."""
    return PodView.from_api({
        "metadata": {"namespace": "what-if", "name": f"{gpus}-gpu-pod"},
        "spec": {"containers": [{"name": "main", "resources": {"requests": {
            "cpu": "1", "memory": "1Gi", GPU: str(gpus)}, "limits": {GPU: str(gpus)}}}],
                 "tolerations": [{"key": GPU, "operator": "Exists", "effect": "NoSchedule"}]},
        "status": {"phase": "Pending"},
    })


@dataclass(slots=True)
class WhatIf:
    alloc: Allocation
    live: Placement
    edited: Placement
    config: PackingConfig
    order: list[str]
    row: dict[str, int]
    live_best: int | None
    edited_best: int | None
    ties: tuple[int, int] = (0, 0)  # other nodes tied with the best, live and edited, under native scoring

    @staticmethod
    def tied(placement: Placement, config: PackingConfig) -> int:
        """Nodes tied with the best that kube-scheduler may pick instead, at random (native scoring: the
        extender makes its best unique, scheduling/evaluated.decide)."""
        return max(len(placement.best_set) - 1, 0) if config.native is not None else 0

    @property
    def summary(self) -> Text:
        out = Text()
        for label, p, best, tied in (("live", self.live, self.live_best, self.ties[0]),
                                     ("edited", self.edited, self.edited_best, self.ties[1])):
            out.append(f"{label} → ", style="bold")
            if best is None:
                out.append("nowhere", style="bold red")
            else:
                out.append(p.nodes[best], style="bold green")
                out.append(f" (score {int(p.scores[best])})")
                if tied:
                    out.append(f" or {tied} other{'s' * (tied != 1)} tied: kube-scheduler picks at random",
                               style="yellow")
            out.append("   ")
        out.append(self.live.message, style="dim")
        for note in self.live.notes:
            out.append(f"   {note}", style="yellow")
        return out


def compute(alloc: Allocation, pod: PodView, live: PackingConfig, edited: PackingConfig) -> WhatIf:
    a = evaluate(alloc, pod, live)
    b = evaluate(alloc, pod, edited)
    rank = np.arange(len(alloc.nodes))  # nodes are sorted by name
    keys = np.lexsort((rank, ~a.feasible, -a.scores, -b.scores, ~b.feasible))  # last key first
    order = [alloc.nodes[i] for i in keys]
    return WhatIf(alloc, a, b, edited, order, {n: i for i, n in enumerate(alloc.nodes)}, a.best_row, b.best_row,
                  (WhatIf.tied(a, live), WhatIf.tied(b, edited)))


def _score(p: Placement, i: int, best: bool) -> Text:
    if not p.feasible[i]:
        return Text("✗", style="red")
    return Text(("★ " if best else "") + str(int(p.scores[i])), style="bold green" if best else "")


def cells_base(a: Allocation, i: int, node: str, config: PackingConfig) -> tuple[str, str, Text]:
    """What a node's row shows whatever is placed: its name, what is free on it, the edited bias/avoid."""
    free = a.free[i]

    def col(res: str) -> int:
        c = a.column(res)
        return int(free[c]) if c is not None else 0

    gpu_alloc = int(a.allocatable[i, a.column(GPU)]) if a.column(GPU) is not None else 0
    free_text = f"{fmt.cpu(col('cpu'))}/{fmt.mem(col('memory'))}" + (f"/{col(GPU)}" if gpu_alloc else "")
    adjust = Text("")
    if node in config.avoid:
        adjust = Text("avoid", style="bold red")
    elif node in config.bias:
        adjust = Text(f"{config.bias[node]:+g}", style="cyan")
    return node, free_text, adjust


def cells(w: WhatIf, node: str, width_of: dict[str, int] | None = None) -> list[Text | str]:
    i = w.row[node]
    name, free_text, adjust = cells_base(w.alloc, i, node, w.config)
    live_s = int(w.live.scores[i]) if w.live.feasible[i] else None
    new_s = int(w.edited.scores[i]) if w.edited.feasible[i] else None
    delta = Text("")
    if live_s is not None and new_s is not None and new_s != live_s:
        delta = Text(f"{new_s - live_s:+d}", style="green" if new_s > live_s else "red")
    why = "" if w.edited.feasible[i] else fmt.reasons_in(w.edited.reasons_of(i), (width_of or {}).get("why"))
    return [name, free_text, _score(w.live, i, i == w.live_best), _score(w.edited, i, i == w.edited_best),
            delta, adjust, Text(why, style="dim")]
