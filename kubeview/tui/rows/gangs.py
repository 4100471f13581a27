"""The gangs table on the Workloads screen: one row per group object, upstream and batch schedulers alike.

Each figure has its own header (#24: a figure under another's header misleads): which scheduler runs
the group, minCount of its size, the members placed (bound, not running yet), running, pending and
finished (counted from the pods: 1.37's PodGroup has no counts), the gang's state in one word and why
it is in it: the group's condition when it says, else what its pending members carry.
"""

from __future__ import annotations

from collections.abc import Hashable

from rich.text import Text

from kubeview.model.gangs.messages import group_point
from kubeview.model.gangs.store import Gang
from kubeview.tui.rows.column import Column

COLUMNS = [
    Column("scheduler", "SCHEDULER", 10, least=5, short="SCHED"),
    Column("namespace", "NAMESPACE", 0, whole=True, least=6, short="NS"),  # `vision` whole, REASON the room
    Column("name", "NAME", 0, whole=True),
    Column("min", "MIN/SIZE", 8, "right", least=5, short="MIN/N"),  # narrow: short headers, not `PL… RU…`
    Column("placed", "PLACED", 6, "right", least=3, short="PLC"),
    Column("running", "RUNNING", 7, "right", least=3, short="RUN"),
    Column("pending", "PENDING", 7, "right", least=4, short="PEND"),
    Column("finished", "FINISHED", 8, "right", least=4, short="DONE"),
    Column("state", "STATE", 0, whole=True, least=7),
    Column("reason", "REASON", 0, point=lambda text: text[:REASON_POINT]),  # cut last: the names give first
]
REASON_POINT = 24  # a reason keeps this much before names are cut: "minCount (2) cannot be…"
STATE_STYLE = {"running": "green", "scheduled": "cyan", "finished": "dim", "waiting": "bold yellow",
               "incomplete": "bold yellow", "empty": "dim"}
Key = tuple[str, str, str]  # the gang's key: (kind, namespace, name)


def size(g: Gang) -> int:
    """The group's size: what its object says (Kueue's podSets), else the member pods that exist."""
    return g.size if g.size is not None else len(g.members)


def reason(g: Gang) -> str:
    """Why the gang is in its state, in one line: the group's own condition when it is not well (its
    message says more than "Unschedulable"), else the words most of its pending members carry; nothing
    for a gang that runs."""
    if g.state in ("running", "finished"):
        return ""
    said = "" if g.condition_ok else (group_point(g.condition_message or "") or g.condition_reason or "")
    if g.state == "incomplete":
        live = len(g.members) - g.finished
        return f"{live} of minCount {g.min_count} members exist" + (f"; {said}" if said else "")
    if said:
        return said
    if g.state == "empty":
        return "no member pods yet"
    waiting = g.waiting_reasons()
    if waiting:
        text, n = next(iter(waiting.items()))
        return f"{n} pending: {text}" if n > 1 else text
    return ""


def search_text(g: Gang) -> str:
    """What `/` matches a gang against: scheduler, kind, namespace/name, queue, workload, state."""
    return f"{g.scheduler} {g.kind} {g.namespace}/{g.name} {g.queue or ''} {g.workload or ''} {g.state}".lower()


def order(gangs: list[Gang], needle: str = "") -> list[Key]:
    """The rows: gangs matching the filter, by namespace and name (as the model keeps them)."""
    return [g.key for g in gangs if not needle or needle in search_text(g)]


def stamp(g: Gang | None) -> Hashable:
    """What a row shows (a Gang holds dicts: not hashable itself)."""
    if g is None:
        return None
    return (g.min_count, size(g), g.placed, g.running, g.pending, g.finished, g.state, reason(g))


def _count(n: int, style: str) -> Text:
    return Text(str(n), style=style if n else "dim")


def cells(g: Gang | None, key: Key) -> list[Text | str]:
    if g is None:
        return ["", key[1], Text(key[2], style="strike dim")]
    short = g.bound < g.min_count and g.state not in ("finished",)
    return [
        g.scheduler,
        g.namespace,
        Text(g.name, style="bold"),
        f"{g.min_count}/{size(g)}",
        _count(g.placed, "cyan"),
        _count(g.running, "green"),
        _count(g.pending, "bold yellow" if short else ""),
        _count(g.finished, ""),
        Text(g.state, style=STATE_STYLE.get(g.state, "")),
        Text(reason(g), style="yellow" if short else "dim"),
    ]


def members_line(g: Gang) -> str:
    """`minCount 4 · 4 members: placed 0 · running 0 · pending 4 · finished 0`."""
    return (f"minCount {g.min_count} · {len(g.members)} member{'' if len(g.members) == 1 else 's'}"
            + (f" (size {g.size})" if g.size is not None else "")
            + f": placed {g.placed} · running {g.running} · pending {g.pending} · finished {g.finished}")

