"""The Workloads table: ReplicaSets, Deployments and StatefulSets with desired / ready replicas, and
Jobs with completions / ready pods / succeeded (their cells and panel: rows/jobs.py).

Each figure has its own column, for both kinds (#24: a Job's succeeded count stood under READY and
its state under OWNER): DONE and STATE are a Job's, `-`/empty on a ReplicaSet; PROGRESS is ready of
desired for a ReplicaSet, succeeded of completions for a Job."""

from __future__ import annotations

from collections.abc import Callable, Mapping

from rich.text import Text

from kubeview.model.jobs.views import JobView
from kubeview.model.queues.objects import QueuedWorkload
from kubeview.model.quota.held import Held
from kubeview.model.workloads import WorkloadView
from kubeview.tui import format as fmt
from kubeview.tui.key_index import ItemValue
from kubeview.tui.rows import jobs
from kubeview.tui.rows.column import Column

COLUMNS = [
    Column("kind", "KIND", 11, least=10),  # StatefulSet whole; Deployment, ReplicaSet whole at 80 columns
    Column("namespace", "NAMESPACE", 0, whole=True, least=9),
    Column("name", "NAME", 0, whole=True),
    Column("desired", "DESIRED", 7, "right", least=4, descending=True, short="WANT"),  # not `DES…` at 80
    Column("ready", "READY", 5, "right", descending=True),
    Column("done", "DONE", 5, "right", least=4, descending=True),  # a Job's succeeded pods
    Column("bar", "PROGRESS", 16, least=9),
    # a Job's state and the API's counts: as wide as they are, cut at the end (the cell has spans)
    Column("state", "STATE", 0, whole=True, least=9),
    Column("owner", "OWNER", 0, least=5),  # its header whole at 80 columns (DONE gives the cell), not `OWN…`
]

Key = tuple[str, str, str]
_GONE = WorkloadView("", "", "", 0, 0, 0, 0, {}, None)


def sort_value(column: str, items: Mapping[Key, jobs.Row]) -> Callable[[Key], object] | None:
    if column in ("kind", ""):
        return None
    getters: dict[str, Callable[[jobs.Row], object]] = {
        "namespace": lambda w: f"{w.namespace}/{w.name}",
        "name": lambda w: w.name,
        "desired": lambda w: -jobs.desired(w),
        "ready": lambda w: -w.ready,
        "done": lambda w: -w.succeeded if isinstance(w, JobView) else 1,
        "bar": lambda w: (jobs.progress(w) / jobs.desired(w)) if jobs.desired(w) else 2.0,
        "state": lambda w: jobs.summary(w) if isinstance(w, JobView) else "",
        "owner": lambda w: "/".join(w.owner) if isinstance(w, WorkloadView) and w.owner else "",  # (a Job: none)
    }
    return ItemValue(items, getters[column], _GONE)  # _GONE: a row deleted while a worker sorts


def search_text(w: WorkloadView) -> str:
    """What `/` matches a workload against: kind, namespace/name, owner."""
    owner = "/".join(w.owner) if w.owner else ""
    return f"{w.kind} {w.namespace}/{w.name} {owner}".lower()


def bar_width(width_of: dict[str, int] | None) -> int:
    """PROGRESS bar cells: what its `100%` leaves in the column, at most 8 (at 80 columns the figure
    was cut off a full bar: `████████…`)."""
    return max(1, min(8, (width_of or {}).get("bar", 99) - 5))


def cells(w: WorkloadView | JobView | None, key: Key, width_of: dict[str, int] | None = None,
          held: Held | None = None, queued: QueuedWorkload | None = None) -> list[Text | str]:
    """One row; `held`: the workload's hold by quota (model.held()), `queued`: a Job's Workload Kueue holds
    (by model.queues.held_owners()), said in STATE."""
    if w is None:
        return [key[0], key[1], Text(key[2], style="strike dim")]
    if isinstance(w, JobView):
        return jobs.cells(w, bar_width(width_of), held, queued)
    short = w.ready < w.desired
    return [
        w.kind,
        w.namespace,
        Text(w.name, style="bold"),
        str(w.desired),
        Text(str(w.ready), style="bold yellow" if short else "green"),
        Text("-", style="dim"),
        fmt.bar_cell(w.ready, w.desired, bar_width(width_of), label=fmt.pct(w.ready, w.desired).rjust(4),
                     style=fmt.readiness_style(w.ready / w.desired)) if w.desired
        else Text("scaled to 0", style="dim"),
        Text(held.words(), style=jobs.HELD_STYLE) if held is not None else "",
        Text("/".join(w.owner), style="dim") if w.owner else "",
    ]
