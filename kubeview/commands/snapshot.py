"""`kubeview snapshot`: the cluster's allocation once, headless, for people (tables) and scripts.

Opens the source (`select.open_source`: the kubeconfig's cluster, else the local one), waits for
the first list of every kind (bounded), reads utilization once if `--prometheus` is given, prints,
and exits. `--json` prints the document of kubeview.snapshot.document (field reference:
docs/snapshot.md), `--schema` its JSON Schema, `--metrics` kube-state-metrics-named series.
Source failures are one line on stderr and exit code 1.
"""

from __future__ import annotations

import argparse
import json
import queue
import sys
import threading
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING

from kubeview.cluster.source import ClusterSource, ListsKinds, SourceError
from kubeview.commands import table_text
from kubeview.commands.options import connection_options
from kubeview.model.allocation import GPU
from kubeview.scheduling.config import PackingConfig

if TYPE_CHECKING:  # the work's imports wait for `run`: cli.py imports this module to build its parser
    from rich.console import Console

    from kubeview.model.cluster import ClusterModel

SYNC_TIMEOUT = 30.0  # seconds the initial sync may go without an event (a list page, a kind listed)
POSITIONS_TIMEOUT = 15.0  # seconds `snapshot` waits for the first round of Kueue's queue positions (kube/queue_positions.py)
_BIN = (("Ti", 2**40), ("Gi", 2**30), ("Mi", 2**20), ("Ki", 2**10))


NAME = "snapshot"  # `kubeview snapshot`


def add_parser(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    snap = sub.add_parser(NAME, parents=[connection_options(True, ("cluster", "prometheus"))],
                          help="print the cluster's allocation once, headless",
                          description="Print the cluster's allocation once, for scripts and CI.")
    fmt = snap.add_mutually_exclusive_group()
    fmt.add_argument("--json", action="store_true", help="one JSON document (see --schema)")
    fmt.add_argument("--schema", action="store_true", help="print the JSON Schema of --json and exit")
    fmt.add_argument("--metrics", action="store_true",
                     help="kube-state-metrics-named series in Prometheus text format")
    return snap


def run(args: argparse.Namespace) -> int:
    from kubeview.snapshot.document import SNAPSHOT_SCHEMA, build_snapshot, snapshot_json
    from kubeview.snapshot.ksm import exposition

    if getattr(args, "schema", False):
        print(json.dumps(SNAPSHOT_SCHEMA, indent=2))
        return 0
    try:
        model, packing, _ = collect_packed(args, positions=bool(getattr(args, "json", False)))
    except SourceError as exc:
        sys.stderr.write(f"kubeview: {exc}\n")
        return exc.exit_code
    _read_usage(args, model)
    if model.partial:  # what the figures leave out (a 403 narrowed them), said once, beside any output
        sys.stderr.write(f"kubeview: {model.partial}\n")
    try:
        from kubeview.scheduling.waiting_fits import waiting_fits

        fits = waiting_fits(model, packing) if not getattr(args, "metrics", False) else None
        if getattr(args, "json", False):
            # small clusters print indented for people; big ones compact, built fast (snapshot.document.snapshot_json)
            text = json.dumps(build_snapshot(model, gang_fits=fits), indent=2) if len(model.pods) <= 2000 \
                else snapshot_json(model, gang_fits=fits)
            sys.stdout.write(text)  # not `text + "\n"`: a copy of 77 MB at 150,000 pods
            sys.stdout.write("\n")
        elif getattr(args, "metrics", False):
            sys.stdout.write(exposition(model))
        else:
            print_tables(model, _pipe_console(), gang_fits=fits)
        sys.stdout.flush()
    except BrokenPipeError:
        # `snapshot | head -2`: the reader had what it wanted. Exit 0 whatever the output's size, so
        # the status never depends on whether the pipe's buffer held it all (tables, --json alike)
        from kubeview.terminate import discard_stdout

        discard_stdout()
    return 0


def _pipe_console() -> Console:
    from rich.console import Console

    class _PipeConsole(Console):
        """rich's Console exits 1 on a closed pipe (`on_broken_pipe`); let `run` decide instead."""

        def on_broken_pipe(self) -> None:
            raise BrokenPipeError

    return _PipeConsole(soft_wrap=False, highlight=False)


def collect(args: argparse.Namespace, timeout: float = SYNC_TIMEOUT) -> ClusterModel:
    """Open the source for `args`, apply its events until every kind is listed, close it."""
    return collect_packed(args, timeout)[0]


def collect_packed(args: argparse.Namespace, timeout: float = SYNC_TIMEOUT, policy: str | None = None,
                   positions: bool = False) -> tuple[ClusterModel, PackingConfig, str]:
    """`collect`, and the packing the source schedules with (cluster/packing.py), read before it closes;
    `positions`: also one round of Kueue's queue positions where the source reads them (`sync`)."""
    from kubeview.cluster.packing import current_packing
    from kubeview.cluster.select import open_source

    # Events too: what a pending pod waits for is in the autoscalers' Events on it (model/autoscaling/waits.py)
    source = open_source(args, events=True)
    try:
        model = sync(source, timeout, positions)
        return (model, *current_packing(source, policy))
    finally:
        source.close()


def sync(source: ClusterSource, timeout: float = SYNC_TIMEOUT, positions: bool = False) -> ClusterModel:
    """Run `source` in a thread until its initial sync is complete; SourceError if it fails or stalls.
    `positions`: where the source reads Kueue's queue positions and the ClusterQueues are listed, also
    until its first round of them (at most POSITIONS_TIMEOUT; then the snapshot says none came)."""
    from kubeview.cluster.source import ReportsQueuePositions
    from kubeview.model.cluster import ClusterModel
    from kubeview.model.events import KINDS, ConnectionState, QueuePositions
    from kubeview.model.queues.objects import KIND_CLUSTER_QUEUE
    from kubeview.model.queues.positions import Positions

    events: queue.Queue = queue.Queue()
    stop = threading.Event()
    failure: list[BaseException] = []

    def body() -> None:
        try:
            source.run(events.put, stop)
        except BaseException as exc:  # reported below as one line
            failure.append(exc)

    polled = positions and isinstance(source, ReportsQueuePositions)
    if positions and isinstance(source, ReportsQueuePositions):
        source.want_positions.set()
    thread = threading.Thread(target=body, name="kubeview-snapshot-source", daemon=True)
    thread.start()
    model = ClusterModel(title=source.title, slim_pages=True)  # the only reader of the events
    deadline = time.monotonic() + timeout  # from the last event: a big list's pages keep it going
    try:  # the kinds are read each time: a kube source adds the DRA kinds once discovery answered
        # Events are optional (never fatal) but waited for once asked: listed, or refused (`unavailable`)
        extra = ("Event",) if getattr(source, "events", False) else ()
        while not (model.is_synced(kinds := tuple(source.kinds if isinstance(source, ListsKinds) else KINDS))
                   and all(k in model.synced or k in model.unavailable for k in extra)):
            if failure:
                raise _as_source_error(failure[0])
            left = deadline - time.monotonic()
            if left <= 0:
                missing = ", ".join(k + (f" ({model.listing[k]:,} read)" if k in model.listing else "")
                                    for k in (*kinds, *extra) if k not in model.synced and k not in model.unavailable)
                detail = f" ({model.connection.detail})" if model.connection.detail else ""
                raise SourceError(f"The cluster sent nothing for {timeout:g} s during its initial sync "
                                  f"(still waiting for: {missing}){detail}; check the API server and try again.")
            try:
                event = events.get(timeout=min(left, 0.1))
            except queue.Empty:
                continue
            deadline = time.monotonic() + timeout
            model.apply(event)
            if isinstance(event, ConnectionState) and event.state == "failed":
                raise SourceError(event.detail)
        if polled and KIND_CLUSTER_QUEUE in model.synced:  # one round of Kueue's positions
            until = time.monotonic() + POSITIONS_TIMEOUT
            while True:
                try:
                    event = events.get(timeout=max(0.0, until - time.monotonic()))
                except queue.Empty:
                    model.apply(QueuePositions(Positions({}, f"positions: Kueue's visibility API did not answer "
                                                              f"within {POSITIONS_TIMEOUT:g} s")))
                    break
                model.apply(event)
                if isinstance(event, QueuePositions):
                    break
        while True:  # whatever arrived with the lists
            try:
                model.apply(events.get_nowait())
            except queue.Empty:
                break
    finally:
        stop.set()
        thread.join(timeout=5)
    return model


def _as_source_error(exc: BaseException) -> SourceError:
    if isinstance(exc, SourceError):
        return exc
    return SourceError(f"The cluster source stopped: {exc}.")


def _read_usage(args: argparse.Namespace, model: ClusterModel) -> None:
    """One Prometheus reading when `--prometheus` is given; its failure is a warning, not an exit."""
    if not getattr(args, "prometheus", None):
        return
    try:
        from kubeview.cluster.prometheus.source import PrometheusUsage

        usage = PrometheusUsage.from_args(args)
        if usage is None:
            return
        try:
            update = usage.poll()
        finally:
            usage.close()
    except Exception as exc:  # the snapshot still has requests: say what failed, keep going
        sys.stderr.write(f"kubeview: no utilization: {exc}\n")
        return
    model.apply(update)
    if update.error:
        sys.stderr.write(f"kubeview: no utilization: {update.error}\n")


# -- tables ----------------------------------------------------------------------------------------
def fmt(resource: str, amount: float | None) -> str:
    """An amount in the unit kubectl shows: cpu `250m`/`2`, bytes `1.5Gi`, counts as is."""
    if amount is None:
        return "-"
    if resource == "cpu":
        return f"{amount:.0f}m" if amount % 1000 else f"{amount / 1000:.0f}"
    if resource in ("memory", "ephemeral-storage") or resource.startswith("hugepages-"):
        for suffix, size in _BIN:
            if abs(amount) >= size:
                v = amount / size
                return f"{v:.0f}{suffix}" if v == int(v) else f"{v:.1f}{suffix}"
        return f"{amount:.0f}"
    return f"{amount:.0f}"


def _pct(part: int, whole: int) -> str:
    return f"{100 * part / whole:.0f}%" if whole > 0 else "-"


def _shown(resources: list[str], allocatable, requested) -> list[int]:
    """Columns worth a row: base resources and anything allocatable or requested somewhere."""
    return [j for j, r in enumerate(resources)
            if r in ("cpu", "memory", "pods") or allocatable[..., j].any() or requested[..., j].any()]


def _section(console: Console, title: str, headers: list[str], right: list[bool], rows: list[list[str]],
             fold: str = "") -> None:
    """A blank line, the title (markup) on a line of its own, the table. rich wraps a table's own title
    to the table's width, which cut "largest fit 1" in two beside four narrow columns at any terminal
    width. Without styles (a pipe, a file) the text is written as rich would print it, by table_text:
    rich's own layout of one small table per node cost 3.2 s at 2,000 nodes (#28). `fold`: the
    column whose long cells rich folds when the table is wider than the console."""
    from rich.table import Table
    from rich.text import Text

    fast = table_text.lines(headers, right, rows, console.width) if console.color_system is None else None
    if fast is not None:
        console.file.write(f"\n{Text.from_markup(title).plain}\n" + "\n".join(fast) + "\n")
        return
    table = Table(show_edge=False, pad_edge=False)
    for name, r in zip(headers, right, strict=True):
        table.add_column(name, justify="right" if r else "left", overflow="fold" if name == fold else "ellipsis")
    for row in rows:
        table.add_row(*row)
    console.print()
    console.print(title)
    console.print(table)


def _resource_section(console: Console, title: str, resources: list[str], cols: list[int], alloc_row, req_row,
                      lim_row, usage: dict[str, float | None]) -> None:
    has_usage = any(v is not None for v in usage.values())
    headers = ["Resource", "Requests", "Limits", "Allocatable", "%"] + (["Used"] if has_usage else [])
    rows = []
    for j in cols:
        r = resources[j]
        a, q, lim = int(alloc_row[j]), int(req_row[j]), int(lim_row[j])
        row = [r, fmt(r, q), fmt(r, lim), fmt(r, a), _pct(q, a)]
        if has_usage:
            row.append(fmt(r, usage.get(r)))
        rows.append(row)
    _section(console, title, headers, [False] + [True] * (len(headers) - 1), rows)


def print_tables(model: ClusterModel, console: Console, gang_fits: Mapping | None = None) -> None:
    """Per node the "Allocated resources" block of `kubectl describe node`, then totals, fragmentation,
    pending pods, workloads, Jobs and gangs (`gang_fits` as for the JSON document's gangs)."""
    alloc = model.allocation()
    cols = _shown(alloc.resources, alloc.allocatable, alloc.requested)
    counts = model.pod_counts()
    fits = model.largest_fit(GPU)
    has_gpu = alloc.column(GPU) is not None
    console.print(f"[bold]{model.title or 'cluster'}[/]  {model.connection.state}  "
                  f"{len(alloc.nodes)} nodes, {len(model.shown_pods())} pods ({model.pending_count()} pending)")
    for i, view in enumerate(alloc.views):
        state = "Ready" if view.ready else "NotReady"
        if view.unschedulable:
            state += ",SchedulingDisabled"
        gpu = f"  largest GPU fit {int(fits[i])}" if has_gpu and alloc.allocatable[i, alloc.column(GPU)] else ""
        nu = model.usage.nodes.get(view.name)
        usage = {"cpu": nu.cpu, "memory": nu.memory} if nu else {}
        mine = _shown(alloc.resources, alloc.allocatable[i], alloc.requested[i])
        _resource_section(console, f"[bold]{view.name}[/]  {state}  pods {int(counts[i])}{gpu}", alloc.resources,
                          mine, alloc.allocatable[i], alloc.requested[i], alloc.limits[i], usage)
    totals = model.totals()
    known = [u for u in model.usage.nodes.values()]
    usage_totals = {r: (sum(v for v in (getattr(u, r) for u in known) if v is not None) if known else None)
                    for r in ("cpu", "memory")}
    _resource_section(
        console, "[bold]Cluster totals[/]", alloc.resources, cols,
        [totals[r]["allocatable"] for r in alloc.resources], [totals[r]["requested"] for r in alloc.resources],
        [totals[r]["limits"] for r in alloc.resources], usage_totals)
    if has_gpu:
        frag = model.fragmentation(GPU)
        # a size bigger than every node is not lost to fragmentation: it can never fit
        rows = [[str(s.size), str(s.placeable), str(s.ideal), str(s.stranded) if s.fits_a_node else "never fits"]
                for s in frag.sizes]
        _section(console, f"[bold]GPU fragmentation[/]  {frag.free_total} free on {frag.nodes} nodes, "
                          f"largest fit {frag.largest_fit}",
                 ["GPUs per pod", "Placeable", "If unfragmented", "Lost"], [True] * 4, rows)
    pending = model.pending()
    if pending:
        rows = [[f"{p.namespace}/{p.name}", ", ".join(f"{r} {fmt(r, v)}" for r, v in p.requests.items() if r != "pods"),
                 p.pending_reason or "not scheduled yet"] for p in pending[:50]]
        _section(console, "[bold]Pending pods[/]", ["Pod", "Requests", "Reason"], [False] * 3, rows, fold="Reason")
        if len(pending) > 50:
            console.print(f"... and {len(pending) - 50} more pending pods")
    if model.workloads:
        rows = [[kind, f"{ns}/{name}", str(w.ready), str(w.desired)]
                for (kind, ns, name), w in sorted(model.workloads.items())]
        _section(console, "[bold]Workloads[/]", ["Kind", "Name", "Ready", "Desired"], [False] * 4, rows)
    _jobs_and_gangs(console, model, gang_fits)


def _jobs_and_gangs(console: Console, model: ClusterModel, gang_fits: Mapping | None) -> None:
    """The Jobs and gangs of `--json` as tables, read from the same documents (snapshot/jobs.py,
    snapshot/gangs.py): the text output left them out (issue 42 item 11)."""
    from kubeview.snapshot.gangs import gangs_doc
    from kubeview.snapshot.jobs import jobs_doc

    jobs = jobs_doc(model.jobs, model.display_namespace)
    if jobs:  # narrow headers: 80 columns hold a demo Job's row
        rows = [[f"{j['namespace']}/{j['name']}", j["state"],
                 f"{j['succeeded']}/{j['completions'] if j['completions'] is not None else '-'}",
                 str(j["parallelism"]), str(j["active"]), str(j["failed"]), str(len(j["disrupted"]))] for j in jobs]
        _section(console, "[bold]Jobs[/]", ["Job", "State", "Done", "Parallel", "Active", "Failed", "Disrupted"],
                 [False] * 2 + [True] * 5, rows)
    gangs = gangs_doc(model.gangs, model.display_namespace, gang_fits)
    if gangs:
        rows = [[f"{g['namespace']}/{g['name']}", g["kind"], g["state"], f"{g['counts']['placed']}/{g['minCount']}",
                 str(g["counts"]["pending"]), _fit_now(g["fit"])] for g in gangs]
        _section(console, "[bold]Gangs[/]", ["Gang", "Kind", "State", "Placed", "Pending", "Fit now"],
                 [False] * 3 + [True] * 2 + [False], rows)


def _fit_now(fit: dict | None) -> str:
    """A waiting gang's fit in a few words (the whole summary is in --json and `kubeview fit`)."""
    if fit is None:
        return "-"
    return "fits" if fit["fits"] else f"room for {fit['room']}"
