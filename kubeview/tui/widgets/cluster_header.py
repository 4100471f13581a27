"""The three header lines on every screen: source and link, cluster totals, GPU fragmentation.

A view of the app's `summary` and `packing_label` reactives (it watches them); it never reads the
model itself. A figure whose kinds are not listed completely reads "…" (pending: line 3 says what it
waits for); while one is relisted, or the link is down, the last complete figures are dimmed and line 1
says "figures as of 12:00:03, relisting Pod 40,000…" (`Summary.fresh`, model/freshness.py).
"""

from __future__ import annotations

from rich.console import RenderableType
from rich.text import Text
from textual.reactive import reactive
from textual.widget import Widget

from kubeview.model.freshness import Freshness
from kubeview.tui import format as fmt
from kubeview.tui.summary import STARTING, Summary, Totals, fit_parts, gpu_parts, pending_parts

_LINK = {
    "live": ("● live", "bold green"),
    "connecting": ("◌ connecting…", "yellow"),
    "reconnecting": ("↻ reconnecting", "bold yellow"),
    "stale": ("◐ stale", "bold yellow"),
    "failed": ("✖ failed", "bold red"),
}


# Line 2 from the widest to the narrowest: (cpu and memory bar cells, their usage shown, GPU bar cells,
# GPU usage shown); the first that fits is drawn.
LINE2_STEPS = ((8, True, 8, True), (8, False, 8, True), (4, False, 8, True), (0, False, 8, True),
               (0, False, 4, False), (0, False, 0, False))


PACKING_KEPT = len(" │ packing …")  # what of the packing policy line 1 keeps before the pending split goes


class ClusterHeader(Widget):
    """Source, connection, totals, pending pods, fragmentation, live packing policy."""

    summary: reactive[Summary] = reactive(STARTING, layout=False)
    packing: reactive[str] = reactive("")
    screen_title: reactive[str] = reactive("")

    def __init__(self, screen_title: str = "", *, id: str | None = None) -> None:  # noqa: A002
        super().__init__(id=id)
        self.set_reactive(ClusterHeader.screen_title, screen_title)

    def on_mount(self) -> None:
        self.watch(self.app, "summary", self._take_summary)
        self.watch(self.app, "packing_label", self._take_packing)

    def _take_summary(self, summary: Summary) -> None:
        self.summary = summary

    def _take_packing(self, label: str) -> None:
        self.packing = label

    def render(self) -> RenderableType:
        s = self.summary
        lines = [self._line1(s, max(self.size.width, 1)), self._line2(s, max(self.size.width, 1)), self._line3(s, max(self.size.width, 1))]
        for line in lines:
            line.truncate(max(self.size.width, 1), overflow="ellipsis")
        return Text("\n", no_wrap=True).join(lines)

    def _line1(self, s: Summary, width: int | None = None) -> Text:
        """Source, link, counts and the packing policy; what pending pods wait for (`pending_parts`)
        whole where it fits before the packing policy's first cells (the policy is cut first, as
        before), else only those waiting for nothing or held (bold), else none (the count stays)."""
        waits = pending_parts(s)
        room = None if width is None else width - (PACKING_KEPT if self.packing else 0)
        for shown in [waits, [p for p in waits if p[1].startswith("bold")]] if waits else []:
            if room is None or self._line1_with(s, shown, packing=False).cell_len <= room:
                return self._line1_with(s, shown)
        return self._line1_with(s, [])

    def _line1_with(self, s: Summary, waits: list[tuple[str, str]], packing: bool = True) -> Text:
        out = Text()
        out.append(f" {self.screen_title} ", style="bold reverse")
        out.append(" ")
        out.append(s.title or "…", style="bold")
        if s.kubernetes:
            _space(out)
            out.append(f"({s.kubernetes})", style="dim")
        _gap(out, "│", "dim")
        label, style = _LINK.get(s.connection.state, (s.connection.state, "yellow"))
        out.append(label, style=style)
        if s.connection.state in ("stale", "reconnecting", "failed") and s.connection.since:
            out.append(f" since {fmt.clock(s.connection.since)}", style=style)
        if s.connection.detail and s.connection.state != "live":
            _space(out)
            out.append(f"({s.connection.detail})", style="dim")
        figures = s.fresh()
        listing = [(kind, n) for kind, n in s.listing if n]  # (a list that has not read a page: not yet)
        if figures.state == "stale" and figures.why.startswith("relisting"):  # the last complete figures
            _space(out)
            out.append(f"figures as of {fmt.clock(figures.as_of)}, {figures.why}", style="bold yellow")
        elif listing:  # a big list's pages arriving: say it moves
            _space(out)
            out.append("listing " + ", ".join(f"{kind} {n:,}…" for kind, n in listing), style="dim")
        _gap(out, "│", "dim")
        pods = s.fresh("Pod")
        _figure(out, f"{s.nodes:,}", s.fresh("Node"))
        out.append(" nodes ")
        _figure(out, f"{s.pods:,}", pods)
        out.append(" pods ")
        _figure(out, f"{s.pending:,}", pods, "bold yellow" if s.pending else "")
        out.append(" pending", style="bold yellow" if s.pending and pods.fact else "")
        for i, (text, style) in enumerate(waits if not pods.pending else ()):  # what they wait for, where an autoscaler said something
            _space(out)
            out.append(("(" if i == 0 else ""), style="dim")
            out.append(text, style=style)
            out.append(("," if i < len(waits) - 1 else ")"), style="dim")
        if self.packing and packing:
            _gap(out, "│", "dim")
            out.append("packing ", style="dim")
            out.append(self.packing, style="bold cyan")
        return out

    def _line2(self, s: Summary, width: int | None = None) -> Text:
        """Totals of cpu, memory and GPUs; at `width`, the GPU total kept longest (a GPU tool): first
        the cpu and memory usage go, then their bars shrink and go (it dropped `GPU …` first). A total
        whose kinds are not listed yet reads "…", never a bar of 0/0. Where GPUs are shared, MIG-sliced
        or another vendor's, what the total is made of follows it (`gpu_words`): long while only the
        cpu and memory usage give way, then short, then only how many units are shared replicas (what
        would otherwise pass for whole GPUs), then none."""
        out = Text()
        listed = s.known("Node", "Pod")
        steps: list[tuple[tuple[int, bool, int, bool], str | None]] = [(st, None) for st in LINE2_STEPS]
        if s.gpu_words and s.known():
            least = [(st, "least") for st in LINE2_STEPS] if s.gpu_words.shared else []
            steps = [(st, "long") for st in LINE2_STEPS[:2]] + [(st, "short") for st in LINE2_STEPS] + least + steps
        for (cpu_mem_bar, cpu_mem_used, gpu_bar, gpu_used), words in steps:
            out = Text(" ")
            self._total(out, "cpu", s.cpu, fmt.cpu, cpu_mem_bar, cpu_mem_used, listed)
            _gap(out, "│", "dim")
            self._total(out, "mem", s.memory, fmt.mem, cpu_mem_bar, cpu_mem_used, listed)
            _gap(out, "│", "dim")
            self._total(out, "GPU", s.gpu, lambda v: f"{v:.0f}" if v == int(v) else f"{v:.1f}", gpu_bar, gpu_used,
                        s.known())
            if words:
                _gpu_words(out, s, words)
            if s.usage_error:
                _space(out)
                out.append("usage: unavailable", style="bold red")  # the banner says why
            if width is None or out.cell_len <= width:
                break
        if s.fresh("Node", "Pod").state == "stale":  # the last complete figures: not current
            out.stylize("dim")
        return out

    def _total(self, out: Text, name: str, t: Totals, unit, bar: int = 8, used: bool = True,  # noqa: ANN001
               known: bool = True) -> None:
        out.append(f"{name} ", style="bold")
        if not known:  # not a bar of 0/0
            out.append("…", style="dim")
            return
        if bar:
            out.append_text(fmt.bar(t.requested, t.allocatable, bar, t.used))
            _space(out)
        out.append(f"{unit(t.requested)}/{unit(t.allocatable)} {fmt.pct(t.requested, t.allocatable)}")
        if used and t.used is not None:
            _space(out)
            out.append(f"used {unit(t.used)}", style="cyan")

    def _line3(self, s: Summary, width: int | None = None) -> Text:
        """GPU fragmentation; at `width`, whole parts only (the least important dropped first)."""
        out = Text(" ")
        out.append("GPUs ", style="bold")
        parts = gpu_parts(s)
        if width is not None:
            parts = fit_parts(parts, width - out.cell_len)
        for part in parts:
            if part.sep:
                _gap(out, part.sep, part.style)
            out.append(part.text, style=part.style)
        if s.fresh().state == "stale":
            out.stylize("dim")
        return out


def _gpu_words(out: Text, s: Summary, mode: str) -> None:
    """"(8 = 2 physical × 4 shared, 2 MIG slices) + 3/7 MIG slices + amd 3/8" after the GPU total;
    `mode` "short": "(8 shared, 2 MIG) + 7 MIG + amd 8", "least": "(8 shared)"."""
    w = s.gpu_words
    pick = 0 if mode == "long" else 1
    inside = [w.shared] if mode == "least" else [p[pick] for p in w.inside]
    if inside:
        _space(out)
        out.append("(" + ", ".join(inside) + ")", style="yellow")
    for part in w.outside if mode != "least" else ():
        _space(out)
        out.append(part[pick], style="cyan")


def _figure(out: Text, text: str, fresh: Freshness, style: str = "") -> None:
    """A count as `fresh` allows: "…" while pending, dimmed while stale (model/freshness.py)."""
    if fresh.pending:
        out.append("…", style="dim")
    else:
        out.append(text, style="dim" if fresh.state == "stale" else style)


def _space(out: Text) -> None:
    """A space that ends the span before it: a span never starts with one, as an SVG viewer (rsvg)
    drew a span's leading spaces after its text, running parts together in the screenshots
    ("live│  7 nodes", "1· 1-GPU pods")."""
    last = out.spans[-1] if out.spans else None
    out.append(" ", style=last.style if last is not None and last.end == len(out.plain) else "")


def _gap(out: Text, sep: str, style: str) -> None:
    """` {sep} ` between two parts of a line (see `_space`)."""
    _space(out)
    out.append(f"{sep} ", style=style)
