"""The Workloads table: ReplicaSets, Deployments and StatefulSets with desired / ready replicas, and
Jobs with completions / succeeded (their cells and panel: rows/jobs.py)."""

from __future__ import annotations

from collections.abc import Callable

from rich.text import Text

from kubeview.model.jobs import JobView
from kubeview.model.workloads import WorkloadView
from kubeview.tui import format as fmt
from kubeview.tui.key_index import ItemValue
from kubeview.tui.rows import jobs
from kubeview.tui.rows.column import Column

COLUMNS = [
    Column("kind", "KIND", 11),
    Column("namespace", "NAMESPACE", 11),
    Column("name", "NAME", 0),
    Column("desired", "DESIRED", 7, "right", descending=True),
    Column("ready", "READY", 7, "right", descending=True),
    Column("bar", "READY/DESIRED", 16),
    Column("owner", "OWNER", 0),
]

Key = tuple[str, str, str]
_GONE = WorkloadView("", "", "", 0, 0, 0, 0, {}, None)


def sort_value(column: str, items: dict[Key, WorkloadView]) -> Callable[[Key], object] | None:
    if column in ("kind", ""):
        return None
    getters: dict[str, Callable[[jobs.Row], object]] = {
        "namespace": lambda w: f"{w.namespace}/{w.name}",
        "name": lambda w: w.name,
        "desired": lambda w: -jobs.desired(w),
        "ready": lambda w: -jobs.ready(w),
        "bar": lambda w: (jobs.ready(w) / jobs.desired(w)) if jobs.desired(w) else 2.0,
        "owner": lambda w: jobs.summary(w) if isinstance(w, JobView) else "/".join(w.owner) if w.owner else "",
    }
    return ItemValue(items, getters[column], _GONE)  # _GONE: a row deleted while a worker sorts


def search_text(w: WorkloadView) -> str:
    """What `/` matches a workload against: kind, namespace/name, owner."""
    owner = "/".join(w.owner) if w.owner else ""
    return f"{w.kind} {w.namespace}/{w.name} {owner}".lower()


def cells(w: WorkloadView | JobView | None, key: Key) -> list[Text | str]:
    if w is None:
        return [key[0], key[1], Text(key[2], style="strike dim")]
    if isinstance(w, JobView):
        return jobs.cells(w)
    short = w.ready < w.desired
    return [
        w.kind,
        w.namespace,
        Text(w.name, style="bold"),
        str(w.desired),
        Text(str(w.ready), style="bold yellow" if short else "green"),
        fmt.bar_cell(w.ready, w.desired, 8, label=fmt.pct(w.ready, w.desired).rjust(4),
                     style=fmt.readiness_style(w.ready / w.desired)) if w.desired
        else Text("scaled to 0", style="dim"),
        Text("/".join(w.owner), style="dim") if w.owner else "",
    ]
