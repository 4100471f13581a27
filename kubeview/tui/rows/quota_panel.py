"""What the Quota screen says of one namespace: the panel under the table (its quotas' keys, the
workloads held) and the namespace screen Enter opens (every key with hard, the controller's used and
kubeview's count; each workload held, with the API server's message and where that comes from).
Pure: values in, Rich markup out (the screens wrap long lines to their width).
"""

from __future__ import annotations

import time

from rich.markup import escape

from kubeview.model.quota.counting import QuotaUse, unevaluated_scopes
from kubeview.model.quota.held import Held
from kubeview.model.quota.objects import QuotaView
from kubeview.tui import format as fmt
from kubeview.tui.rows.quota import NamespaceQuota, figure


def use_words(use: QuotaUse) -> str:
    """`requests.nvidia.com/gpu 4/4 (full)`, with kubeview's count where it differs."""
    used = figure(use.key, use.used, use.used_text) if use.used is not None else "not reported"
    out = f"{escape(use.key)} {escape(used)}/{escape(figure(use.key, use.hard, use.hard_text))}"
    if use.full:
        out = f"[bold red]{out} (full)[/bold red]"
    if use.differs:
        out += f" [cyan](kubeview counts {escape(use.counted_text())})[/cyan]"
    return out


def _scopes(q: QuotaView) -> str:
    parts = [*q.scopes, *(str(r) for r in q.scope_selector)]
    return f" · scopes {escape(', '.join(parts))}" if parts else ""


def held_line(h: Held) -> str:
    return f"[yellow]{escape(h.kind)} {escape(h.name)}[/yellow]: {escape(h.words())}"


def panel(row: NamespaceQuota | None) -> list[str]:
    """The panel: each quota's keys on one line, then the workloads held and where that comes from."""
    if row is None:
        return []
    lines = []
    for q in row.quotas:
        uses = row.uses.get(q.key, ())
        lines.append(f"[b]{escape(row.namespace)}[/b] quota [b]{escape(q.name)}[/b]{_scopes(q)}: "
                     + (" · ".join(use_words(u) for u in uses) or "[dim]no limits[/dim]"))
    if row.held:
        lines += ["", f"[b]Held by quota[/b] ({len(row.held)})"]
        for h in row.held:
            lines += [held_line(h), f"[dim]  {escape(h.origin())}[/dim]"]
    elif row.quotas:
        lines += ["", "[dim]no workload is held by its quota[/dim]"]
    return lines


def _key_table(q: QuotaView, uses: tuple[QuotaUse, ...]) -> list[str]:
    if not uses:
        return ["  [dim]no limits[/dim]"]
    width = max(len(u.key) for u in uses)
    lines = [f"  [dim]{'KEY'.ljust(width)}  {'HARD':>9}  {'USED':>9}  {'KUBEVIEW':>9}  FULL[/dim]"]
    for u in uses:
        used = figure(u.key, u.used, u.used_text) if u.used is not None else "-"
        counted = u.counted_text() or "-"
        flag = "[bold red]full[/bold red]" if u.full else ""
        counted_cell = f"[cyan]{escape(counted.rjust(9))}[/cyan]" if u.differs else escape(counted.rjust(9))
        lines.append(f"  {escape(u.key.ljust(width))}  {escape(figure(u.key, u.hard, u.hard_text).rjust(9))}  "
                     f"{escape(used.rjust(9))}  {counted_cell}  {flag}")
    return lines


def detail(namespace: str, row: NamespaceQuota | None, now: float | None = None) -> str:
    """The namespace screen: its quotas key by key, and each workload held with the API server's words."""
    now = time.time() if now is None else now
    if row is None:
        return f"[b]namespace {escape(namespace)}[/b]\n\n[dim]no quota here any more[/dim]"
    lines = [f"[b]namespace {escape(namespace)}[/b]: {len(row.quotas)} ResourceQuota"
             f"{'s' * (len(row.quotas) != 1)}, {len(row.held)} workload{'s' * (len(row.held) != 1)} held by quota",
             "[dim]USED is the quota controller's status.used; KUBEVIEW what kubeview counts from the pods it "
             "sees (- where it does not count that key or scope)[/dim]"]
    for q in row.quotas:
        lines += ["", f"[b]Quota {escape(q.name)}[/b]{_scopes(q)}"
                  + ("" if q.reported else " [yellow](the quota controller has not counted it yet)[/yellow]")]
        uncounted = unevaluated_scopes(q)
        if uncounted:
            lines.append(f"  [dim]kubeview does not count scope {escape(', '.join(uncounted))}: the controller's "
                         "figures only[/dim]")
        lines += _key_table(q, row.uses.get(q.key, ()))
    lines += ["", f"[b]Held by quota[/b] ({len(row.held)})"]
    if not row.held:
        lines.append("  [dim]none: every pod its workloads asked for was created[/dim]")
    for h in row.held:
        said = f"{fmt.duration(now - h.last)} ago" if h.last is not None else "when, unknown"
        times = f", {h.count} times" if h.count > 1 else ""
        lines += [f"  {held_line(h)}",
                  f"    the API server said ({said}{times}): {escape(h.message)}",
                  f"    [dim]{escape(h.origin())}[/dim]"]
    return "\n".join(lines)
