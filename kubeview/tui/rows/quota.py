"""The Quota screen's table: one row per namespace with a ResourceQuota (or a workload held by one), its
GPU, cpu and memory use against quota as bars, the workloads quota holds back. Pure (rich only).

Read from the model's quota API (model/quota/): `model.quotas` (QuotaView: hard, the quota
controller's status.used), `model.quota_uses()` (QuotaUse per key: used beside kubeview's own count
from the pods) and `model.held()` (Held: the API server's refusal from the controller's FailedCreate
Events). A column shows the namespace's tightest key of its kind (the fullest, over all its quotas):
GPU is any `requests.<name>` whose name says gpu and DRA device quota
(`<class>.deviceclass.resource.k8s.io/devices`); CPU `requests.cpu`/`cpu` (else `limits.cpu`); MEMORY
likewise. Where kubeview's count differs from the controller's, NOTE says both.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from dataclasses import dataclass, field

from rich.text import Text

from kubeview.model.quota.counting import QuotaUse
from kubeview.model.quota.held import Held
from kubeview.model.quota.objects import DEVICES_SUFFIX, QuotaKey, QuotaView
from kubeview.tui import format as fmt
from kubeview.tui.rows.column import Column

BAR = 10  # cells of a bar at most
COLUMNS = [
    Column("namespace", "NAMESPACE", 0, whole=True, least=6, short="NS"),
    Column("quotas", "QUOTAS", 0, whole=True, least=6),
    Column("gpu", "GPU", 15, least=6, descending=True),  # the bar, then used/hard as the quota writes them
    Column("cpu", "CPU", 16, least=8, descending=True),
    Column("memory", "MEMORY", 20, least=12, descending=True),
    Column("held", "HELD", 5, "right", least=4, descending=True),  # workloads held back by quota
    Column("note", "NOTE", 0, point=lambda text: text[:NOTE_POINT]),
]
NOTE_POINT = 24  # kept before names are cut: "Job finetune held by quo"
KINDS = ("gpu", "cpu", "memory")


def kind_of(key: str) -> str | None:
    """Which column a quota key belongs to (None: shown in the panel only)."""
    if key.endswith(DEVICES_SUFFIX):
        return "gpu"
    name = key.removeprefix("requests.").removeprefix("limits.")
    if name in ("cpu", "memory"):
        return name
    if key.startswith("requests.") and "gpu" in name:
        return "gpu"
    return None


def _rank(use: QuotaUse) -> tuple:
    """Requests before limits (what admission compares for a pod's requests), then the fullest."""
    return (use.key.startswith("limits."), -(use.used or 0) / use.hard if use.hard else 0.0, use.key)


@dataclass(frozen=True, slots=True)
class NamespaceQuota:
    """One namespace's row: its quotas, each key's use, the tightest per column, what is held."""

    namespace: str
    quotas: tuple[QuotaView, ...]
    uses: dict[QuotaKey, tuple[QuotaUse, ...]]
    tightest: dict[str, tuple[str, QuotaUse]]  # column -> (quota name, its key's use)
    held: tuple[Held, ...]

    def differing(self) -> list[tuple[str, QuotaUse]]:
        """(quota name, use) where kubeview's count and the controller's differ."""
        return [(q.name, u) for q in self.quotas for u in self.uses.get(q.key, ()) if u.differs]

    @property
    def held_pods(self) -> int:
        return sum(h.not_created for h in self.held)


@dataclass(slots=True)
class QuotaRows:
    """What the table shows, by namespace."""

    namespaces: dict[str, NamespaceQuota] = field(default_factory=dict)


def build(quotas: list[QuotaView], uses: Mapping[QuotaKey, tuple[QuotaUse, ...]],
          held: Mapping[tuple[str, str, str], Held], shown: str | None = None) -> QuotaRows:
    by_ns: dict[str, list[QuotaView]] = {}
    for q in quotas:
        by_ns.setdefault(q.namespace, []).append(q)
    held_by: dict[str, list[Held]] = {}
    for h in held.values():
        held_by.setdefault(h.namespace, []).append(h)
    out = QuotaRows()
    for ns in sorted(set(by_ns) | set(held_by)):
        if shown is not None and ns != shown:
            continue
        mine = tuple(by_ns.get(ns, ()))
        ns_uses = {q.key: uses.get(q.key, ()) for q in mine}
        tightest: dict[str, tuple[str, QuotaUse]] = {}
        for kind in KINDS:
            found = sorted(((q.name, u) for q in mine for u in ns_uses[q.key] if kind_of(u.key) == kind),
                           key=lambda pair: _rank(pair[1]))
            if found:
                tightest[kind] = found[0]
        out.namespaces[ns] = NamespaceQuota(ns, mine, ns_uses, tightest, tuple(held_by.get(ns, ())))
    return out


def figure(key: str, value: int | None, text: str = "") -> str:
    """An amount as the table writes it: the object's own string where there is one."""
    if text:
        return text
    if value is None:
        return "?"
    return fmt.amount(key.removeprefix("requests.").removeprefix("limits."), value)


def use_cell(use: QuotaUse | None, width: int) -> Text:
    """`██████···· 4/4`: the controller's used against hard, red when full."""
    if use is None:
        return Text("-", style="dim")
    label = f"{figure(use.key, use.used, use.used_text)}/{figure(use.key, use.hard, use.hard_text)}"
    cells = min(BAR, width - len(label) - 1)
    if cells < 2:  # the figure whole before any bar
        return Text(label, style="bold red" if use.full else "")
    return fmt.bar_cell(use.used or 0, use.hard, cells, label=label,
                        style="bold red" if use.full else None)


def note(row: NamespaceQuota) -> Text:
    """The first workload held, else where kubeview's count differs, else nothing."""
    if row.held:
        h = row.held[0]
        more = f" (+{len(row.held) - 1} more)" if len(row.held) > 1 else ""
        return Text(f"{h.kind} {h.name} {h.words()}{more}", style="yellow")
    differs = row.differing()
    if differs:
        name, u = differs[0]
        return Text(f"kubeview counts {u.key} {u.counted_text()}, {name}'s status says {u.used_text}", style="cyan")
    if not row.quotas:
        return Text("its quota is gone", style="dim")
    return Text("")


def search_text(row: NamespaceQuota) -> str:
    return " ".join([row.namespace, *(q.name for q in row.quotas), *(f"{h.kind} {h.name}" for h in row.held),
                     "held" if row.held else ""]).lower()


def order(data: QuotaRows, needle: str = "") -> list[str]:
    """Namespaces matching the filter: those holding workloads back first, then the fullest GPU quota."""
    def key(ns: str) -> tuple:
        row = data.namespaces[ns]
        gpu = row.tightest.get("gpu")
        frac = (gpu[1].used or 0) / gpu[1].hard if gpu is not None and gpu[1].hard else -1.0
        return (-len(row.held), -frac, ns)
    return sorted((ns for ns, row in data.namespaces.items() if not needle or needle in search_text(row)), key=key)


def stamp(data: QuotaRows, ns: str) -> Hashable:
    row = data.namespaces.get(ns)
    if row is None:
        return None
    return (tuple(q.resource_version for q in row.quotas), tuple((h.key, h.words(), h.count) for h in row.held),
            tuple(u for uses in row.uses.values() for u in uses))


def cells(data: QuotaRows, ns: str, width_of: dict[str, int] | None = None) -> list[Text | str]:
    row = data.namespaces.get(ns)
    if row is None:
        return [Text(ns, style="strike dim")]
    width_of = width_of or {}
    names = ", ".join(q.name for q in row.quotas) or "-"
    return [
        Text(ns, style="bold"),
        Text(names, style="" if row.quotas else "dim"),
        *(use_cell(row.tightest[k][1] if k in row.tightest else None, width_of.get(k, 99)) for k in KINDS),
        Text(str(len(row.held)), style="bold yellow" if row.held else "dim"),
        note(row),
    ]
