"""Workloads: desired / ready per ReplicaSet, Deployment and StatefulSet; scale with `+`, `-`, `s`.

Jobs are rows too (completions / succeeded); on a Job the same keys change its parallelism, `z`
suspends or resumes it, and the panel under the table shows the selected Job's index strip and
disrupted pods. A jump of more than 10x (either way) or to 0 asks first, for replicas and
parallelism alike, and so does a suspend (it stops every running pod of the Job, like scaling to 0).
Actions run in a worker; the result or the API's refusal appears in the banner, one line.

Gangs (upstream PodGroups and the batch schedulers' groups) have a table of their own under the
workloads, each figure under its own header (rows/gangs.py); Tab moves between the two tables and
Enter on a gang opens its panel: members, where each is or why it waits, and the fit now.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping, Sequence

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.widgets import Static

from kubeview.model.jobs.views import JobView
from kubeview.model.kinds import gangs_unavailable
from kubeview.model.queues.objects import QueuedWorkload
from kubeview.model.quota.held import Held
from kubeview.model.workloads import WorkloadView
from kubeview.tui.key_index import KeyIndex
from kubeview.tui.rows import gangs as gang_rows
from kubeview.tui.rows import jobs as job_rows
from kubeview.tui.rows import workloads as rows
from kubeview.tui.screens.gang_detail import NAME as GANG_DETAIL
from kubeview.tui.screens.gang_detail import install_gang_detail
from kubeview.tui.screens.indexed import IndexedScreen
from kubeview.tui.screens.prompts import Confirm, NumberPrompt
from kubeview.tui.state import ClusterState
from kubeview.tui.widgets.table_rows import Cell, Rows
from kubeview.tui.widgets.virtual_table import VirtualTable

JUMP = 10  # a change by more than this factor asks for confirmation


def needs_confirmation(current: int, target: int) -> bool:
    """Scaling to 0, or by more than 10x up or down, is worth a second look."""
    if target == current:
        return False
    if target == 0:
        return True
    return target > JUMP * max(current, 1) or current > JUMP * target


class WorkloadsScreen(IndexedScreen[rows.Key, job_rows.Row]):
    SCREEN_TITLE = "Workloads"
    KINDS = ("ReplicaSet", "Deployment", "StatefulSet", "Job")
    COLUMNS = rows.COLUMNS
    EMPTY = "no workloads (yet)"
    DEFAULT_SORT = "kind"
    BINDINGS = [
        Binding("plus,equals_sign", "scale_by(1)", "Scale +1", id="workloads.scale_up",
                tooltip="Add one replica to the selected workload"),
        Binding("minus", "scale_by(-1)", "Scale -1", id="workloads.scale_down",
                tooltip="Remove one replica from the selected workload"),
        Binding("s", "scale_to", "Scale to…", id="workloads.scale_to",
                tooltip="Ask for a replica count (a Job: its parallelism) for the selected workload"),
        Binding("z", "suspend", "Suspend/resume", id="workloads.suspend",
                tooltip="Suspend the selected Job (asks first: its running pods stop) or resume it "
                        "(asks first too when that starts more than 10 pods)"),
        Binding("tab", "switch_table", "Gangs", id="workloads.switch_table",
                tooltip="Move between the workloads table and the gangs table"),
        Binding("enter", "open_gang", "Open gang", id="workloads.open_gang",
                tooltip="Open the selected gang: its members, where each is or why it waits, and its fit now"),
    ]

    held: dict[rows.Key, Held] = {}  # held by quota (model.held()), taken at each refresh
    queued: dict[tuple[str, str, str], QueuedWorkload] = {}  # Jobs whose Kueue Workload waits (model/queues/)

    def compose_body(self) -> ComposeResult:
        table = self.make_table()
        table.id = "workload-table"
        yield table
        yield VirtualTable(gang_rows.COLUMNS, empty="no gang matches the filter", id="gangs")
        yield Static(id="job-panel")

    def on_mount(self) -> None:
        super().on_mount()
        self.query_one("#gangs").border_title = "Gangs (Tab: here and back, Enter: open)"

    def gang_table(self) -> VirtualTable:
        return self.query_one("#gangs", VirtualTable)

    def show_gangs(self) -> None:
        """The gangs table: the groups the model knows (in the `-n` namespace only, as the pods), matching
        the filter; hidden when there is none, unless some gang lists were refused: then it says so."""
        table = self.gang_table()
        with self.state.lock:
            model = self.state.model
            ns, refused = model.display_namespace, gangs_unavailable(model.unavailable)
            gangs = [g for g in model.gangs.gangs() if ns is None or g.namespace == ns]
        items = {g.key: g for g in gangs}
        keys = gang_rows.order(gangs, self.filter_text)
        table.empty = refused or ("no gang matches the filter" if gangs else "no gangs")
        if table.display != bool(gangs or refused):
            table.display = bool(gangs or refused)
            self.refresh_bindings()  # Tab and Enter's gang keys show while there are gangs
        # as tall as its rows (header and title line included), at most a third of the screen
        table.styles.height = max(3, min(len(keys) + 2, self.app.size.height // 3))
        position = {k: i for i, k in enumerate(keys)}
        table.rows = Rows(keys, lambda k: gang_rows.cells(items.get(k), k), position.get,
                          stamp=lambda k: gang_rows.stamp(items.get(k)))

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in ("switch_table", "open_gang"):
            tables = self.query("#gangs")  # no gangs: hidden from the footer, Tab and Enter as before
            return bool(tables) and tables.first().display
        return super().check_action(action, parameters)

    def action_switch_table(self) -> None:
        gangs = self.gang_table()
        if gangs.has_focus or not gangs.display:
            self.table().focus()
            if not gangs.display:
                self.kv.banner = ("no gangs in this cluster (PodGroups, KAI, Kueue or Volcano groups)", "")
        else:
            gangs.focus()

    def action_open_gang(self) -> None:
        gangs = self.gang_table()
        key = gangs.cursor_key if gangs.display else None
        if key is None:
            self.kv.banner = ("no gang to open: PodGroups and the batch schedulers' groups list under the "
                              "workloads", "error")
            return
        install_gang_detail(self.app).show(key)  # type: ignore[arg-type]
        self.app.push_screen(GANG_DETAIL)

    @on(VirtualTable.HeaderClicked, "#gangs")
    def _gang_header(self, event: VirtualTable.HeaderClicked) -> None:
        event.prevent_default()  # the gangs keep their order; a click sorts the workloads' table only

    @on(VirtualTable.Selected, "#gangs")
    def _gang_selected(self, event: VirtualTable.Selected) -> None:
        self.action_open_gang()

    def apply_filter(self, text: str) -> None:
        super().apply_filter(text)
        self.show_gangs()

    def items(self, state: ClusterState) -> Mapping[rows.Key, job_rows.Row]:
        return state.workload_items()

    def update_from_state(self, state: ClusterState) -> None:
        with state.lock:
            self.held = held_rows(state.model.held(), state.model.workloads)
            # only the Workloads of Jobs the table has are read (held_owners reads none)
            queues, items = state.model.queues, state.workload_items()
            self.queued = {k: w for k, wl in queues.held_owners().items()
                           if k in items and (w := queues.workload(*wl)) is not None}
        super().update_from_state(state)
        self.show_gangs()
        self.show_job_panel()

    @on(VirtualTable.Highlighted, "#workload-table")
    def _highlighted(self) -> None:
        self.show_job_panel()

    def on_resize(self) -> None:
        if self.is_current:
            self.show_gangs()  # its height follows the screen's
            self.show_job_panel()  # the index strip follows the width

    def show_job_panel(self) -> None:
        """The selected Job in full under the table; hidden when the cursor is on another kind."""
        box = self.query_one("#job-panel", Static)
        key = self.table().cursor_key
        if not (isinstance(key, tuple) and key[:1] == ("Job",)):
            box.display = False
            return
        with self.state.lock:
            width = (box.content_region.width or self.app.size.width - 2)
            lines = 2 if self.app.size.height < 30 else job_rows.STRIP_LINES  # small: rows of the table first
            text = job_rows.panel(self.state.model.jobs, key, width, lines, self.held.get(key), self.queued.get(key))
        box.update(text)
        box.display = True

    def by_name(self, state: ClusterState) -> KeyIndex:
        return state.workloads_by_name

    def sort_value(self, column: str, items: Mapping[rows.Key, job_rows.Row]) -> Callable[[rows.Key], object] | None:
        return rows.sort_value(column, items)

    def search(self, state: ClusterState) -> Mapping[rows.Key, str]:
        return state.workload_search

    def cells(self, items: Mapping[rows.Key, job_rows.Row], key: rows.Key) -> Sequence[Cell]:
        return rows.cells(items.get(key), key, self.table().width_of, self.held.get(key), self.queued.get(key))

    def stamp(self, items: Mapping[rows.Key, job_rows.Row], key: rows.Key) -> Hashable:
        queued = self.queued.get(key)
        return super().stamp(items, key), self.held.get(key), queued.resource_version if queued else None

    def selected(self) -> tuple[tuple[str, str, str], int] | None:
        """The row under the cursor and what `+`/`-`/`s` change: replicas, or a Job's parallelism."""
        key = self.table().cursor_key
        if not isinstance(key, tuple) or self.gang_table().has_focus:  # a gang scales through its workload
            return None
        w = self.state.workload_items().get(key)
        if w is None:
            return None
        return (key, w.parallelism if isinstance(w, JobView) else w.desired)

    def action_scale_by(self, delta: int) -> None:
        sel = self.selected()
        if sel is None:
            self.kv.banner = ("select a workload first", "error")
            return
        key, desired = sel
        self.request_scale(key, max(0, desired + delta), desired)

    def action_scale_to(self) -> None:
        sel = self.selected()
        if sel is None:
            self.kv.banner = ("select a workload first", "error")
            return
        key, desired = sel
        kind, ns, name = key

        def answered(n: int | None) -> None:
            if n is not None:
                self.request_scale(key, n, desired)

        what = "Parallelism" if kind == "Job" else "Replicas"
        self.app.push_screen(NumberPrompt(f"{what} for {kind} {ns}/{name} (now {desired}):", desired), answered)

    def request_scale(self, key: tuple[str, str, str], target: int, current: int) -> None:
        kind, ns, name = key
        noun = "parallelism" if kind == "Job" else "replicas"
        if target == current:
            self.kv.banner = (f"{kind} {ns}/{name} already has {noun} {current}." if kind == "Job"
                              else f"{kind} {ns}/{name} already has {current} replica{'' if current == 1 else 's'}.", "ok")
            return
        if not needs_confirmation(current, target):
            self._scale(key, target)
            return

        def answered(yes: bool | None) -> None:
            if yes:
                self._scale(key, target)
            else:
                self.kv.banner = (left_at(kind, ns, name, noun, current), "ok")

        question = (f"Set the parallelism of Job {ns}/{name} from {current} to {target}?" if kind == "Job"
                    else f"Scale {kind} {ns}/{name} from {current} to {target}?")
        self.app.push_screen(Confirm(question), answered)

    def _scale(self, key: tuple[str, str, str], target: int) -> None:
        kind, ns, name = key
        if kind == "Job":
            self.kv.banner = (f"setting the parallelism of Job {ns}/{name} to {target}…", "")
            self.kv.job_action(ns, name, parallelism=target)
            return
        self.kv.banner = (f"scaling {kind} {ns}/{name} to {target}…", "")
        self.kv.scale(kind, ns, name, target)

    def action_suspend(self) -> None:
        key = self.table().cursor_key
        job = self.state.workload_items().get(key) if isinstance(key, tuple) else None
        if not isinstance(job, JobView):
            self.kv.banner = ("select a Job first: only Jobs can be suspended", "error")
            return
        ns, name = job.namespace, job.name
        if job.state in ("Complete", "Failed"):
            self.kv.banner = (f"Job {ns}/{name} has finished ({job.state}): nothing to suspend or resume.", "error")
            return
        suspend = not job.suspend

        def go() -> None:
            self.kv.banner = (f"{'suspending' if suspend else 'resuming'} Job {ns}/{name}…", "")
            self.kv.job_action(ns, name, suspend=suspend)

        # suspending stops every running pod (like scaling to 0): ask; resuming asks as a jump would
        if suspend or needs_confirmation(0, job.parallelism):
            question = (f"Suspend Job {ns}/{name}? Its {job.active} running pod(s) will be stopped." if suspend
                        else f"Resume Job {ns}/{name} with parallelism {job.parallelism}?")

            def answered(yes: bool | None) -> None:
                if yes:
                    go()
                else:
                    self.kv.banner = (f"Job {ns}/{name} left {'running' if suspend else 'suspended'}.", "ok")

            self.app.push_screen(Confirm(question), answered)
            return
        go()


def held_rows(held: Mapping[rows.Key, Held], workloads: Mapping[rows.Key, WorkloadView]) -> dict[rows.Key, Held]:
    """Held by quota per row (model/quota/held.py): each held workload, and a Deployment whose ReplicaSet is
    held says it too (its row is where one looks)."""
    out = dict(held)
    for key, h in held.items():
        rs = workloads.get(key) if key[0] == "ReplicaSet" else None
        if rs is not None and rs.owner is not None and rs.owner[0] == "Deployment":
            out.setdefault(("Deployment", key[1], rs.owner[1]), h)
    return out


def left_at(kind: str, ns: str, name: str, noun: str, current: int) -> str:
    """The banner after a declined change: "left at 1 replica." (it said "1 replicas")."""
    if kind == "Job":
        return f"{kind} {ns}/{name} left at {noun} {current}."
    return f"{kind} {ns}/{name} left at {current} replica{'' if current == 1 else 's'}."
