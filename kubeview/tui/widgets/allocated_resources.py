"""The "Allocated resources" block of `kubectl describe node`, plus allocatable and used.

A view of its `node` reactive (`NodeFigures`); percentages are of allocatable, as kubectl prints them.
"""

from __future__ import annotations

from dataclasses import dataclass

from rich.console import RenderableType
from rich.table import Table
from rich.text import Text
from textual.reactive import reactive
from textual.widget import Widget

from kubeview.model.freshness import FACT, Freshness
from kubeview.tui import format as fmt


@dataclass(frozen=True, slots=True)
class NodeFigures:
    name: str
    resources: tuple[str, ...]
    allocatable: tuple[int, ...]
    requested: tuple[int, ...]
    limits: tuple[int, ...]
    used: tuple[float | None, ...]
    conditions: str
    taints: str
    pods: int
    gpu_fit: int | None  # None: the node has no GPUs
    fit_unit: str = "GPU"  # what `gpu_fit` counts: "replica", "1g.10gb slice", "amd GPU" (#35)
    fresh: Freshness = FACT  # pending: requests, limits, pods and fit read "…"; stale: dimmed (model/freshness.py)


class AllocatedResources(Widget):
    node: reactive[NodeFigures | None] = reactive(None, layout=True)

    def render(self) -> RenderableType:
        n = self.node
        if n is None:
            return Text("node not found (deleted?)", style="bold red")
        table = Table(box=None, padding=(0, 2, 0, 0), show_edge=False, header_style="bold",
                      title="Allocated resources", title_justify="left", title_style="bold underline",
                      caption="(Total limits may be over 100 percent, i.e., overcommitted.)",
                      caption_justify="left", caption_style="dim")
        for label, justify in (("Resource", "left"), ("Requests", "right"), ("Limits", "right"),
                               ("Allocatable", "right"), ("Used", "right"), ("", "left")):
            table.add_column(label, justify=justify)  # type: ignore[arg-type]
        pending = n.fresh.pending
        for res, alloc, req, lim, used in zip(n.resources, n.allocatable, n.requested, n.limits, n.used,
                                              strict=True):
            table.add_row(
                res,
                "…" if pending else f"{fmt.amount(res, req)} ({fmt.pct(req, alloc)})",
                "…" if pending else f"{fmt.amount(res, lim)} ({fmt.pct(lim, alloc)})",
                fmt.amount(res, alloc),
                fmt.amount(res, used) if used is not None else "-",
                "" if pending else fmt.bar(req, alloc, 12, used),
                style="dim" if not n.fresh.fact else None,
            )
        if not n.fresh.fact:  # what the figures wait for, or since when they are not current
            table.title = f"Allocated resources ({n.fresh.why})" if pending else \
                f"Allocated resources (as of {fmt.clock(n.fresh.as_of)}, {n.fresh.why})"
        fields = [("Conditions", n.conditions), ("Pods", "…" if pending else str(n.pods))]
        if n.gpu_fit is not None:
            fields.append((f"Largest {n.fit_unit} request that fits", "…" if pending else str(n.gpu_fit)))
        info = Text()
        for i, (label, value) in enumerate(fields):
            # the gap ends the value's span: an SVG viewer (rsvg) draws a span's leading spaces after
            # its text, which ran "ReadyPods:" together in the screenshots
            info.append(f"{label}: ", style="bold").append(value + ("   " if i < len(fields) - 1 else ""))
        info.append("\n").append("Taints: ", style="bold").append(n.taints)
        from rich.console import Group

        return Group(info, Text(""), table)
