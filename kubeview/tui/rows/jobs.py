"""Jobs on the Workloads screen: their rows beside the ReplicaSets, and the panel of the selected Job.

A Job's row reads like a workload's, each figure in its own column: DESIRED is its completions,
READY its ready pods, DONE its succeeded count, PROGRESS succeeded/completions, STATE its state and the
other counts the API keeps (parallelism, active, terminating, failed); OWNER stays empty. The panel under the table shows the selected Job in full: the index strip of
an Indexed Job, one cell per index, and the pods that ended by disruption with what became of their
index. `WorkloadItems` lets the one table hold both kinds under one key shape (kind, namespace, name).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from rich.text import Text

from kubeview.model.jobs.progress import IndexState, disrupted_pods, index_strip, strip_counts
from kubeview.model.jobs.store import JobStore
from kubeview.model.jobs.views import JobPodView, JobView
from kubeview.model.queues.objects import QueuedWorkload
from kubeview.model.quota.held import Held, never_created
from kubeview.model.workloads import WorkloadView
from kubeview.tui import format as fmt

Key = tuple[str, str, str]
Row = WorkloadView | JobView

STRIP_STYLE = {IndexState.SUCCEEDED: ("█", "green"), IndexState.FAILED: ("█", "bold red"),
               IndexState.RUNNING: ("▆", "cyan"), IndexState.PENDING: ("▂", "yellow"),
               IndexState.NOT_STARTED: ("·", "dim")}
STATE_STYLE = {"Complete": "green", "Failed": "bold red", "Suspended": "yellow", "Running": ""}
QUEUED_STYLE = "bold yellow"  # held by a Kueue queue (its Workload has no quota reserved)
HELD_STYLE = "bold magenta"  # held by quota: the row's words, the strip's never-created indexes
HELD_CELL = ("✕", HELD_STYLE)
STRIP_WIDTH = 100  # cells per line of the strip in the panel
STRIP_LINES = 6  # more indexes than fit share cells
# a shared cell shows the state that most needs a look: any failure, else anything still to do
_WORST = (IndexState.FAILED, IndexState.PENDING, IndexState.RUNNING, IndexState.NOT_STARTED, IndexState.SUCCEEDED)


class WorkloadItems(Mapping[Key, Row]):
    """The model's workloads and Jobs as one read-only mapping keyed (kind, namespace, name)."""

    __slots__ = ("_workloads", "_jobs")

    def __init__(self, workloads: dict[Key, WorkloadView], jobs: dict[tuple[str, str], JobView]) -> None:
        self._workloads, self._jobs = workloads, jobs

    def __getitem__(self, key: Key) -> Row:
        if key[0] == "Job":
            return self._jobs[(key[1], key[2])]
        return self._workloads[key]

    def __contains__(self, key: object) -> bool:
        if not isinstance(key, tuple) or len(key) != 3:
            return False
        return (key[1], key[2]) in self._jobs if key[0] == "Job" else key in self._workloads

    def __iter__(self) -> Iterator[Key]:
        yield from self._workloads
        for ns, name in self._jobs:
            yield ("Job", ns, name)

    def __len__(self) -> int:
        return len(self._workloads) + len(self._jobs)


def desired(w: Row) -> int:
    """What the DESIRED column shows: replicas, or a Job's completions (its parallelism if it has none)."""
    if isinstance(w, JobView):
        return w.completions if w.completions is not None else w.parallelism
    return w.desired


def progress(w: Row) -> int:
    """What the PROGRESS bar counts: a Job's succeeded pods, a workload's ready replicas."""
    return w.succeeded if isinstance(w, JobView) else w.ready


def search_text(j: JobView) -> str:
    return f"job {j.namespace}/{j.name} {j.state} {j.completion_mode}".lower()


def summary(j: JobView) -> str:
    """The STATE column: the state and the API's counts not in a column of their own."""
    parts = [j.state, f"par {j.parallelism}", f"active {j.active}"]
    if j.terminating:
        parts.append(f"terminating {j.terminating}")
    if j.failed:
        parts.append(f"failed {j.failed}")
    return " · ".join(parts)


def held_text(held: Held | None) -> Text:
    """The STATE column's hold, after the state: " · held by quota gpus: … — 1 pod not created"."""
    return Text() if held is None else Text.assemble((" · ", "dim"), (held.words(), HELD_STYLE))


def queued_text(queued: QueuedWorkload | None) -> Text:
    """The STATE column's Kueue hold: " · held by queue team-q: Pending"."""
    return Text() if queued is None else Text.assemble((" · ", "dim"), (queued.words(), QUEUED_STYLE))


def cells(j: JobView, bar: int = 8, held: Held | None = None, queued: QueuedWorkload | None = None) -> list[Text | str]:
    want = desired(j)
    return [
        "Job",
        j.namespace,
        Text(j.name, style="bold"),
        str(want) if j.completions is not None else "-",
        str(j.ready),
        Text(str(j.succeeded), style="green" if j.succeeded >= want else "bold yellow"),
        fmt.bar_cell(j.succeeded, want, bar, label=fmt.pct(j.succeeded, want).rjust(4),
                     style="green" if j.state != "Failed" else "bold red") if want else Text("-", style="dim"),
        Text.assemble((j.state, STATE_STYLE.get(j.state, "")), summary(j).removeprefix(j.state), held_text(held),
                     queued_text(queued)),
        "",  # (the model keeps no owner of a Job)
    ]


def cell_size(n: int, width: int = STRIP_WIDTH, lines: int = STRIP_LINES) -> int:
    """Indexes per cell so that `n` fit in `lines` lines (1 for up to width x lines)."""
    return max(1, -(-n // (width * lines)))


def strip_cells(strip: list[IndexState], width: int = STRIP_WIDTH, lines: int = STRIP_LINES,
                held: frozenset[int] = frozenset()) -> Text:
    """The index strip, `width` cells per line (index 0 at the top left); a cell is one index, or for
    big Jobs `cell_size` consecutive indexes showing the one that most needs a look. `held`: indexes
    the quota admission kept from being created (a not-started cell holding one shows ✕)."""
    k = cell_size(len(strip), width, lines)
    out = Text()
    for c, start in enumerate(range(0, len(strip), k)):
        if c and c % width == 0:
            out.append("\n")
        group = set(strip[start:start + k])
        state = next(s for s in _WORST if s in group)
        char, style = STRIP_STYLE[state]
        if state == IndexState.NOT_STARTED and held and not held.isdisjoint(range(start, start + k)):
            char, style = HELD_CELL
        out.append(char, style=style)
    return out


def panel(store: JobStore, key: Key, width: int = STRIP_WIDTH, lines: int = STRIP_LINES,
          held: Held | None = None, queued: QueuedWorkload | None = None) -> Text:
    """The selected Job: spec and counts, held by quota (the API server's words and where they come
    from), the index strip (Indexed) in at most `width` cells a line and `lines` lines (at 80 columns a
    100-cell line wrapped 78/22) with the never-created indexes marked, disrupted pods and their indexes."""
    width = max(10, min(width, STRIP_WIDTH))
    job = store.jobs.get((key[1], key[2]))
    if job is None:
        return Text(f"Job {key[1]}/{key[2]} is gone.", style="dim")
    pods: list[JobPodView] = store.history_of(job.namespace, job.name)
    out = Text()
    out.append(f"Job {job.namespace}/{job.name}", style="bold")
    out.append(f"  {job.state}", style=STATE_STYLE.get(job.state, ""))
    completions = "-" if job.completions is None else str(job.completions)
    out.append(f"  {job.completion_mode} · completions {completions} · parallelism {job.parallelism}"
               f" · backoffLimit {backoff_text(job.backoff_limit)}")
    if job.backoff_limit_per_index is not None:
        out.append(f" · perIndex {job.backoff_limit_per_index}")
    out.append(f"\nactive {job.active} · ready {job.ready} · terminating {job.terminating}"
               f" · succeeded {job.succeeded} · failed {job.failed}")
    if held is not None:
        out.append(f"\n{held.words()}", style=HELD_STYLE)
        out.append(f"\n  {held.message}", style="")
        out.append(f"\n  {held.origin()}", style="dim")
    if queued is not None:
        out.append(f"\n{queued.words()}", style=QUEUED_STYLE)
        if queued.message:
            out.append(f"\n  {queued.message}", style="")
        out.append(f"\n  {queued.origin()}", style="dim")
    strip = index_strip(job, pods)
    if strip:
        counts = strip_counts(strip)
        missing = never_created(job, store.pods_of(job.namespace, job.name), held)
        out.append("\nindexes  ")
        for state in IndexState:
            char, style = STRIP_STYLE[state]
            out.append(char, style=style)
            out.append(f" {state.value} {counts[state]}  ")
        if missing:
            out.append(HELD_CELL[0], style=HELD_CELL[1])
            out.append(f" held by quota {len(missing)}  ")
        k = cell_size(len(strip), width, lines)
        if k > 1:
            out.append(f"(a cell is {k} indexes)", style="dim")
        out.append("\n")
        out.append_text(strip_cells(strip, width, lines, missing))
    gone = disrupted_pods(job, pods)
    if gone:
        policy = "ignored by podFailurePolicy" if job.ignores_disruption else "counted against backoffLimit"
        out.append(f"\ndisrupted pods ({len(gone)}, {policy}):", style="bold")
        for d in gone[-8:]:
            where = f"index {d.index}" if d.index is not None else "pod"
            out.append(f"\n  {d.pod}  {where}  on {d.node or '-'}  {d.disruption.reason}: ")
            out.append(d.disruption.message[:60], style="dim")
            out.append(f"  → {d.outcome}", style="green" if d.outcome == "succeeded later" else "yellow")
        if len(gone) > 8:
            out.append(f"\n  … and {len(gone) - 8} earlier", style="dim")
    return out


def backoff_text(limit: int) -> str:
    """2147483647 (MaxInt32, what the API defaults `backoffLimit` to beside `backoffLimitPerIndex`)
    means no limit: say "unlimited" instead of the number."""
    return "unlimited" if limit >= 2**31 - 1 else str(limit)
