"""The Quota screen's ClusterQueue table (Kueue, #40): one row per ClusterQueue, its GPU, cpu and memory
reserved against nominal quota as bars, borrowing, Kueue's counts and the Workloads waiting on it; and
the words of its panel and of the queue screen Enter opens. Pure (rich only).

Read from the model's queue store (model/queues/): a column is the sum over the flavors covering the
resource of `status.flavorsReservation` (quota reserved: what Kueue's scheduler counts) against
`nominalQuota`; GPU is any resource whose name says gpu. A Workload's words are Kueue's own (the
QuotaReserved condition's reason and message); a pending one's position is Kueue's (its visibility API,
model/queues/positions.py: "3rd in vision (2nd in training)"), and where Kueue's visibility API did not
answer, the panel says why once.
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass, field

from rich.markup import escape
from rich.text import Text

from kubeview.model.queues.objects import ClusterQueueView, FlavorResource, LocalQueueView, QueuedWorkload
from kubeview.model.queues.positions import Key, Position
from kubeview.model.queues.store import QueueStore
from kubeview.tui import format as fmt
from kubeview.tui.rows.column import Column

BAR = 10
COLUMNS = [
    Column("queue", "CLUSTERQUEUE", 0, whole=True, least=8, short="CQ"),
    Column("cohort", "COHORT", 0, whole=True, least=4, short="COH"),
    Column("gpu", "GPU", 15, least=6, descending=True),
    Column("cpu", "CPU", 16, least=8, descending=True),
    Column("memory", "MEMORY", 20, least=12, descending=True),
    Column("admitted", "ADMIT", 5, "right", least=4, descending=True, short="ADM"),
    Column("pending", "PEND", 5, "right", least=4, descending=True),
    Column("note", "NOTE", 0, point=lambda text: text[:NOTE_POINT]),
]
NOTE_POINT = 24
KINDS = ("gpu", "cpu", "memory")


def kind_of(resource: str) -> str | None:
    if resource in ("cpu", "memory"):
        return resource
    return "gpu" if "gpu" in resource else None


@dataclass(frozen=True, slots=True)
class QueueRow:
    """One ClusterQueue with the LocalQueues feeding it and its Workloads."""

    cq: ClusterQueueView
    local: tuple[LocalQueueView, ...]
    waiting: tuple[QueuedWorkload, ...]  # in queue order
    admitted: tuple[QueuedWorkload, ...]  # holding quota (admitted or reserved)
    positions: dict[Key, Position]  # Kueue's, of the Workloads waiting it reported
    positions_unavailable: str | None = None  # why Kueue's visibility API gave none (with Workloads waiting)

    def totals(self, kind: str) -> tuple[str, int, int] | None:
        """(resource, reserved, nominal) of the column's resource (the fullest if several say gpu)."""
        found = {r.resource for r in self.cq.resources if kind_of(r.resource) == kind}
        if not found:
            return None
        sums = [(res, *self.cq.total(res)) for res in sorted(found)]
        return max(sums, key=lambda s: (s[1] / s[2] if s[2] else float(s[1] > 0), s[0]))


@dataclass(slots=True)
class QueueRows:
    queues: dict[str, QueueRow] = field(default_factory=dict)


def build(store: QueueStore, shown: str | None = None) -> QueueRows:
    """Every ClusterQueue (with `-n`, those a LocalQueue of that namespace feeds)."""
    out = QueueRows()
    for cq in store.cluster_queues():
        local = tuple(store.local_queues_of(cq.name))
        if shown is not None and not any(q.namespace == shown for q in local):
            continue
        holding = tuple(w for w in store.workloads_of(cq.name) if not w.waiting)
        waiting = tuple(store.waiting(cq.name))
        places = store.positions_of(cq.name)
        out.queues[cq.name] = QueueRow(cq, local, waiting, holding, {w.key: p for w in waiting if (p := places.get(w.key))},
                                       store.positions.unavailable if waiting else None)
    return out


def use_cell(row: QueueRow, kind: str, width: int) -> Text:
    got = row.totals(kind)
    if got is None:
        return Text("-", style="dim")
    resource, reserved, nominal = got
    label = f"{fmt.amount(resource, reserved)}/{fmt.amount(resource, nominal)}"
    full = nominal > 0 and reserved >= nominal or nominal == 0 and reserved > 0
    cells = min(BAR, width - len(label) - 1)
    if cells < 2:
        return Text(label, style="bold red" if full else "")
    return fmt.bar_cell(reserved, nominal, cells, label=label, style="bold red" if full else None)


def borrow_words(r: FlavorResource) -> str:
    return f"{r.resource} {fmt.amount(r.resource, r.reserved_borrowed or r.borrowed)} in {r.flavor}"


def workload_words(w: QueuedWorkload, position: Position | None = None) -> str:
    """`team-a/job-big-ghi56, 1st in team-a-cq (1st in team-a): Pending — couldn't assign flavors …` (Kueue's
    position, reason and message)."""
    where = f", {position.words()}" if position is not None else ""
    why = f"{w.reason} — {w.message}" if w.message else (w.reason or "no condition from Kueue yet")
    return f"{w.namespace}/{w.name}{where}: {why}"


def note(row: QueueRow) -> Text:
    """Borrowing first, else the first Workload waiting, else an inactive queue's reason."""
    borrowing = row.cq.borrowing()
    if borrowing:
        return Text(f"borrowing {', '.join(borrow_words(r) for r in borrowing)} from cohort {row.cq.cohort}",
                    style="cyan")
    if row.waiting:
        first = row.waiting[0]
        more = f" (+{len(row.waiting) - 1} more)" if len(row.waiting) > 1 else ""
        return Text(workload_words(first, row.positions.get(first.key)) + more, style="yellow")
    active = row.cq.active
    if active is not None and active.status != "True":
        return Text(f"inactive: {active.reason} {active.message}".strip(), style="bold red")
    return Text("")


def order(data: QueueRows, needle: str = "") -> list[str]:
    """ClusterQueues matching the filter: those with Workloads waiting first, then the fullest GPU."""
    def key(name: str) -> tuple:
        row = data.queues[name]
        gpu = row.totals("gpu")
        frac = gpu[1] / gpu[2] if gpu is not None and gpu[2] else -1.0
        return (-len(row.waiting), -frac, name)

    def text(row: QueueRow) -> str:
        return " ".join([row.cq.name, row.cq.cohort or "", *(f"{q.namespace}/{q.name}" for q in row.local),
                         *(w.name for w in row.waiting)]).lower()
    return sorted((n for n, row in data.queues.items() if not needle or needle in text(row)), key=key)


def stamp(data: QueueRows, name: str) -> Hashable:
    row = data.queues.get(name)
    if row is None:
        return None
    return (row.cq.resource_version, tuple(w.resource_version for w in row.waiting + row.admitted),
            tuple(row.positions.items()))


def cells(data: QueueRows, name: str, width_of: dict[str, int] | None = None) -> list[Text | str]:
    row = data.queues.get(name)
    if row is None:
        return [Text(name, style="strike dim")]
    width_of = width_of or {}
    return [
        Text(name, style="bold"),
        Text(row.cq.cohort or "-", style="" if row.cq.cohort else "dim"),
        *(use_cell(row, k, width_of.get(k, 99)) for k in KINDS),
        Text(str(row.cq.admitted), style="" if row.cq.admitted else "dim"),
        Text(str(row.cq.pending), style="bold yellow" if row.cq.pending else "dim"),
        note(row),
    ]


def _limit(value: int | None, resource: str) -> str:
    return "none" if value is None else fmt.amount(resource, value)


def panel(row: QueueRow | None, admitted: bool = False) -> list[str]:
    """The ClusterQueue in words: its quota per flavor, the LocalQueues feeding it, what waits (and, for
    the queue screen, what holds quota)."""
    if row is None:
        return []
    cq = row.cq
    active = "" if cq.active is None else f" · Active {escape(cq.active.status)} {escape(cq.active.reason)}"
    lines = [f"ClusterQueue [b]{escape(cq.name)}[/b] · cohort {escape(cq.cohort or 'none')}{active} · "
             f"{cq.admitted} admitted, {cq.reserving} reserving, {cq.pending} pending (Kueue's counts)"]
    for r in cq.resources:
        full = r.nominal > 0 and r.reserved >= r.nominal
        figure = f"{fmt.amount(r.resource, r.reserved)}/{fmt.amount(r.resource, r.nominal)}"
        text = f"  {escape(r.flavor)} {escape(r.resource)} {figure}" + (" (full)" if full else "")
        text = f"[bold red]{text}[/bold red]" if full else text
        extra = [f"admitted {fmt.amount(r.resource, r.used)}"] if r.used != r.reserved else []
        if cq.cohort:
            extra.append(f"borrowing limit {_limit(r.borrowing_limit, r.resource)}, "
                         f"lending limit {_limit(r.lending_limit, r.resource)}")
        if r.reserved_borrowed or r.borrowed:
            extra.append(f"[cyan]borrowed {fmt.amount(r.resource, r.reserved_borrowed or r.borrowed)}[/cyan]")
        lines.append(text + (f" · {' · '.join(extra)}" if extra else ""))
    lines.append("LocalQueues: " + (", ".join(
        f"{escape(q.namespace)}/{escape(q.name)} ({q.pending} pending, {q.admitted} admitted)" for q in row.local)
        or "[dim]none[/dim]"))
    if row.waiting:
        lines += ["", f"[b]Waiting[/b] ({len(row.waiting)}, in queue order)"]
        lines += [f"[yellow]{escape(workload_words(w, row.positions.get(w.key)))}[/yellow]" for w in row.waiting]
        if row.positions_unavailable:
            lines.append(f"[dim]{escape(row.positions_unavailable)}[/dim]")
    else:
        lines += ["", "[dim]no Workload is waiting on it[/dim]"]
    if admitted:
        lines += ["", f"[b]Holding quota[/b] ({len(row.admitted)})"]
        lines += [f"{escape(w.namespace)}/{escape(w.name)}: {escape(w.state)} · "
                  + ", ".join(f"{escape(k)} {fmt.amount(k, v)}" for k, v in sorted(w.requests.items()))
                  for w in row.admitted] or ["[dim]none[/dim]"]
    lines += ["", "[dim]from the ClusterQueue's status (flavorsReservation against nominalQuota) and the "
                  "Workloads' conditions, as Kueue wrote them[/dim]"]
    return lines
