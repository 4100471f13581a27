"""Packing: edit the policy, weights and per-node bias/avoid, see where a pod would land, then apply.

The what-if table scores the chosen pod (a pending one, or a hypothetical k-GPU pod) on every node
under the live config and the edited one, side by side, before anything is sent. `a` applies:
to the embedded scheduler (local cluster), the extender's `/config` (real cluster), or with
`--native-scheduler` the second scheduler's native profile, which restarts it (scores then 0..100,
kube-scheduler's NodeResourcesFit; the policy cycles pack and spread only).

It takes a gang too (`m`, many pods: "4 pods × 8 GPUs", or one of the cluster's waiting gangs from the picker):
then both columns are `gang_fit`'s answer, all or nothing, and the table shows members per node
(rows/gang_whatif.py).

Its scores count pods: until every list they count is complete the what-if computes nothing and says
what it waits for; while a relist runs it shows the last complete one, dimmed, "as of" then
(model/freshness.py).
"""

from __future__ import annotations

import time

from rich.markup import escape
from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.timer import Timer
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from kubeview.model.freshness import Freshness
from kubeview.model.gangs.store import Gang
from kubeview.model.views import PodView
from kubeview.scheduling.config import MAX_SCORE, POLICIES, PackingConfig
from kubeview.scheduling.gang_fit import fit_of
from kubeview.scheduling.native_scoring import NATIVE_POLICIES
from kubeview.tui.format import clock, dimmed
from kubeview.tui.rows import gang_whatif, whatif
from kubeview.tui.screens.base import ClusterScreen
from kubeview.tui.screens.prompts import TextPrompt
from kubeview.tui.state import ClusterState
from kubeview.tui.widgets.policy_editor import PolicyEditor
from kubeview.tui.widgets.table_rows import Rows
from kubeview.tui.widgets.virtual_table import VirtualTable

GPU_SIZES = (1, 2, 4, 8)
MAX_PENDING_SHOWN = 200
RECOMPUTE_EVERY = 1.0  # seconds between what-if refreshes driven by cluster changes


class PackingScreen(ClusterScreen):
    SCREEN_TITLE = "Packing"
    FILTERABLE = False
    BINDINGS = [
        Binding("a", "apply", "Apply", id="packing.apply", tooltip="Make the edited policy live"),
        Binding("u", "reset", "Undo edits", id="packing.reset", tooltip="Go back to the live policy"),
        Binding("p", "next_policy", "Policy", id="packing.policy", tooltip="Cycle pack / spread / balanced"),
        Binding("n", "next_gpus", "GPUs", id="packing.gpus",  # the footer reads "n GPUs" (#42: "n n GPUs")
                tooltip="Cycle the hypothetical pod's GPU count: 1, 2, 4, 8"),
        Binding("m", "gang", "Gang…", id="packing.gang",
                tooltip="What if a gang came: type PODS x GPUS (4x8, 4 pods × 8 GPUs); fits all together or not"),
        Binding("right_square_bracket", "bias(1)", "Bias +1", id="packing.bias_up",
                tooltip="Raise the selected node's score by 1"),
        Binding("left_square_bracket", "bias(-1)", "Bias -1", show=False, id="packing.bias_down",
                tooltip="Lower the selected node's score by 1"),
        Binding("x", "avoid", "Avoid", id="packing.avoid", tooltip="Toggle avoiding the selected node"),
        Binding("P", "plan", "Plan", id="packing.plan",
                tooltip="The fewest disruptions that make the what-if's pod, gang or request fit (apply asks first)"),
        # Tab cycles the boxes on screen (policy, weights, pod picker, what-if table), never the prompt
        Binding("tab", "app.focus_next", "Next box", id="packing.next_box",
                tooltip="Move to the next box: policy, weights, pod picker, what-if table"),
        Binding("shift+tab", "app.focus_previous", "Previous box", show=False, id="packing.previous_box",
                tooltip="Move to the previous box"),
    ]

    def __init__(self) -> None:
        super().__init__()
        self.edited: PackingConfig | None = None
        self.gpus = 2
        self.pod_key: tuple[str, str] | None = None  # None: the hypothetical pod
        self.gang = False  # the subject is a gang: `gang_key`'s, or the hypothetical `gang_spec`
        self.gang_spec = gang_whatif.GangSpec(4, 2)
        self.gang_key: tuple[str, str, str] | None = None
        self.gang_whatif: gang_whatif.GangWhatIf | None = None
        self._pending: list[PodView] = []
        self._gangs: list[Gang] = []  # the cluster's gangs with members waiting (the picker lists them)
        self._last_compute = 0.0
        self._timer: Timer | None = None
        self.whatif: whatif.WhatIf | None = None

    def compose_body(self) -> ComposeResult:
        with Horizontal(id="packing-top"):
            yield PolicyEditor(id="policy-editor")
            yield OptionList(id="pod-picker")
        yield Static(id="whatif-summary")
        yield VirtualTable(whatif.COLUMNS, empty="no nodes", id="whatif")

    def main_widget(self) -> VirtualTable:
        return self.query_one("#whatif", VirtualTable)

    def on_mount(self) -> None:
        super().on_mount()
        self.query_one("#policy-editor").border_title = "Policy"
        self.query_one("#pod-picker").border_title = "Pod or gang (Enter picks)"
        self.query_one("#whatif-summary").border_title = "What if"
        self.watch(self.app, "packing_live", self._live_changed)

    def on_resize(self) -> None:
        self.set_class(self.size.height < 30, "-short")

    def _live_changed(self, live: PackingConfig | None) -> None:
        editor = self.query_one(PolicyEditor)
        editor.live = live
        if self.edited is None and live is not None:
            self.edited = live
            editor.edited = live
        if self.whatif is not None:
            self._compute()

    # -- data --------------------------------------------------------------------------------------
    def update_from_state(self, state: ClusterState) -> None:
        wait = self._last_compute + RECOMPUTE_EVERY - time.monotonic()
        if wait > 0 and self.whatif is not None:  # at most once a second; edits recompute at once
            if self._timer is None:
                self._timer = self.set_timer(wait, self._deferred)
            return
        with state.lock:
            pending = state.model.pending()[:MAX_PENDING_SHOWN]
            ns = state.model.display_namespace  # -n: that namespace's gangs, as its pending pods
            gangs = [g for g in state.model.gangs.gangs() if g.pending and (ns is None or g.namespace == ns)]
            gangs = gangs[:MAX_PENDING_SHOWN]
        if (self.whatif is None or [p.key for p in pending] != [p.key for p in self._pending]
                or [g.key for g in gangs] != [g.key for g in self._gangs]):
            self._pending, self._gangs = pending, gangs
            self._fill_picker()
        self._compute()
        self._last_compute = time.monotonic()

    def _deferred(self) -> None:
        self._timer = None
        if self.is_current:
            self.refresh_data()
        else:
            self._stale = True

    def _hypothetical_label(self) -> str:
        return f"hypothetical pod asking {self.gpus} GPU{'s' if self.gpus > 1 else ''} (n: more)"

    def _fill_picker(self) -> None:
        picker = self.query_one("#pod-picker", OptionList)
        highlighted = picker.highlighted
        # one line each, cut at the end (#24: entries wrapped on two lines and pushed train-c below)
        # (app.tcss: `text-wrap: nowrap`)
        # the cluster's waiting gangs after the pods (#24: train-c stays in sight at 80x24); `m` asks
        # for a hypothetical gang
        options = [Option(self._hypothetical_label(), id="hypothetical")]
        options += [Option(f"{p.namespace}/{p.name}  {_requests(p)}", id=f"{p.namespace}/{p.name}")
                    for p in self._pending]
        options += [Option(f"gang {g.namespace}/{g.name}  {g.pending} of {len(g.members)} waiting, min {g.min_count}",
                           id="gang|" + "|".join(g.key)) for g in self._gangs]
        picker.set_options(options)
        if options:
            picker.highlighted = min(highlighted or 0, len(options) - 1)

    def _pod(self, state: ClusterState) -> PodView:
        if self.pod_key is not None:
            pod = state.model.pods.get(self.pod_key)
            if pod is not None and pod.pending:
                return pod
            self.pod_key = None
        return whatif.hypothetical_pod(self.gpus)

    def _compute(self) -> None:
        live = self.kv.packing_live or PackingConfig()
        edited = self.edited or live
        table = self.main_widget()
        if self.gang:
            self._compute_gang(live, edited)
            return
        self.gang_whatif = None
        self.query_one("#whatif-summary").remove_class("-gang")
        table.set_columns(whatif.COLUMNS)
        with self.state.lock:
            alloc = self.state.model.allocation()
            pod = self._pod(self.state)
            fresh = self.node_figures()
        if self._wait_for_lists(fresh, whatif_title(pod)):
            return
        w = self.whatif = whatif.compute(alloc, pod, live, edited)
        self.query_one("#whatif-summary", Static).update(  # a fixed-height box: no layout
            whatif_title(pod) + "\n" + _as_of(fresh) + w.summary.markup, layout=False)
        position = {n: i for i, n in enumerate(w.order)}
        table.rows = Rows(w.order, lambda node: _row(fresh, whatif.cells(w, node, table.width_of)), position.get)

    def _wait_for_lists(self, fresh: Freshness, title: str) -> bool:
        """While the lists the scores count are incomplete: no what-if (a partial list's scores would read
        as the scheduler's answer), what it waits for instead; True when that is what is shown."""
        table = self.main_widget()
        if not fresh.pending:
            table.empty = "no nodes"
            return False
        self.whatif = self.gang_whatif = None
        self.query_one("#whatif-summary", Static).update(
            title + "\n" + f"[dim]… no what-if from a partial list ({escape(fresh.why)})[/dim]", layout=False)
        table.empty = f"… waiting for complete lists ({fresh.why})"
        table.rows = Rows([])
        table.refresh()
        return True

    def _compute_gang(self, live: PackingConfig, edited: PackingConfig) -> None:
        """Both policies' `gang_fit` for the chosen gang; the table: members per node under each."""
        with self.state.lock:
            model = self.state.model
            alloc = model.allocation()
            fresh = self.node_figures()
            gang = model.gangs.get(*self.gang_key) if self.gang_key is not None and not fresh.pending else None
            if gang is not None:
                members = [p for m in gang.members if (p := model.pods.get(m.key)) is not None]
                w = gang_whatif.compute(alloc, fit_of(model, gang, live), fit_of(model, gang, edited), edited)
                title = gang_whatif.title(f"{gang.namespace}/{gang.name}", members, gang.min_count)
        if fresh.pending:
            self._wait_for_lists(fresh, "gang what-if")
            return
        if gang is None:
            self.gang_key = None  # gone: back to the hypothetical gang
            members = gang_whatif.hypothetical_gang(self.gang_spec)
            w = gang_whatif.compute_hypothetical(alloc, self.gang_spec, live, edited)
            title = gang_whatif.title("what-if", members, self.gang_spec.pods)
        self.gang_whatif = w
        box = self.query_one("#whatif-summary", Static)
        box.add_class("-gang")  # a line per policy, cut rather than wrapped: both verdicts stay in the box
        box.update(title + "\n" + _as_of(fresh) + w.summary.markup, layout=False)
        table = self.main_widget()
        table.set_columns(gang_whatif.COLUMNS)
        position = {n: i for i, n in enumerate(w.order)}
        table.rows = Rows(w.order, lambda node: _row(fresh, gang_whatif.cells(w, node, table.width_of)), position.get)

    # -- edits -------------------------------------------------------------------------------------
    def _set_edited(self, config: PackingConfig) -> None:
        self.edited = config
        self.query_one(PolicyEditor).edited = config
        self._compute()

    @on(PolicyEditor.Edited)
    def _edited(self, event: PolicyEditor.Edited) -> None:
        if event.config is not None:
            self._set_edited(event.config)

    @on(OptionList.OptionSelected, "#pod-picker")
    def _picked(self, event: OptionList.OptionSelected) -> None:
        oid = event.option.id or "hypothetical"
        self.gang = oid.startswith("gang")
        if self.gang:
            self.gang_key = tuple(oid.split("|")[1:])  # type: ignore[assignment]
        else:
            self.pod_key = None if oid == "hypothetical" else tuple(oid.split("/", 1))  # type: ignore[assignment]
        self._compute()

    def action_gang(self) -> None:
        """Ask for a hypothetical gang ("4x8"); its fit replaces the pod's in the what-if."""
        def answered(spec: gang_whatif.GangSpec | None) -> None:
            if spec is None:
                return
            self.gang, self.gang_key, self.gang_spec = True, None, spec
            self._compute()

        self.app.push_screen(TextPrompt("Gang what-if: how many pods × how many GPUs each?", str(self.gang_spec),
                                        gang_whatif.parse_gang, "e.g. 4x8 or 4 pods × 8 GPUs · Enter: fit it, "
                                        "Escape: cancel"), answered)

    def _current(self) -> PackingConfig:
        return self.edited or self.kv.packing_live or PackingConfig()

    def action_next_policy(self) -> None:
        c = self._current()
        cycle = NATIVE_POLICIES if c.native is not None else POLICIES  # balanced has no native form
        nxt = cycle[(cycle.index(c.policy) + 1) % len(cycle)] if c.policy in cycle else cycle[0]
        self._set_edited(c.merged({"policy": nxt}))

    def action_next_gpus(self) -> None:
        self.gpus = GPU_SIZES[(GPU_SIZES.index(self.gpus) + 1) % len(GPU_SIZES)] if self.gpus in GPU_SIZES else 1
        self.pod_key, self.gang = None, False
        # one option's text: not a rebuild of the list (which re-lays out the screen)
        self.query_one("#pod-picker", OptionList).replace_option_prompt("hypothetical", self._hypothetical_label())
        self._compute()

    def action_bias(self, delta: int) -> None:
        node = self.main_widget().cursor_key
        if node is None:
            return
        c = self._current()
        bias = dict(c.bias)
        value = max(-MAX_SCORE, min(MAX_SCORE, bias.get(str(node), 0) + delta))
        if value:
            bias[str(node)] = value
        else:
            bias.pop(str(node), None)
        self._set_edited(c.merged({"bias": bias}))

    def action_avoid(self) -> None:
        node = self.main_widget().cursor_key
        if node is None:
            return
        c = self._current()
        self._set_edited(c.merged({"avoid": sorted(set(c.avoid) ^ {str(node)})}))

    def action_reset(self) -> None:
        self._set_edited(self.kv.packing_live or PackingConfig())

    def action_plan(self) -> None:
        """Plan for what the what-if shows: the picked pod, the cluster's gang, or the typed gang (#42)."""
        from kubeview.tui.screens.plan import PlanScreen

        if self.gang and self.gang_key is not None:
            screen = PlanScreen(gang_key=self.gang_key)
        elif self.gang:
            spec = self.gang_spec
            asks = gang_whatif.hypothetical_gang(gang_whatif.GangSpec(1, spec.gpus))[0].requests
            screen = PlanScreen(gpus=spec.gpus, pods=spec.pods, requests=dict(asks))
        else:
            screen = PlanScreen(pod_key=self.pod_key, gpus=self.gpus,
                                requests=dict(whatif.hypothetical_pod(self.gpus).requests))
        self.app.push_screen(screen)

    def action_apply(self) -> None:
        config = self._current()
        self.kv.banner = (f"applying packing policy {config.policy}…", "")
        self.kv.apply_packing(config)


def _as_of(fresh: Freshness) -> str:
    """Before a stale what-if's verdicts: since when they are not current, and why (markup)."""
    if fresh.fact:
        return ""
    return f"[b yellow]as of {clock(fresh.as_of)}, {escape(fresh.why)}:[/] "


def _row(fresh: Freshness, cells: list[Text | str]) -> list[Text | str]:
    """A what-if row: its figures dimmed while not current (the node's name stays)."""
    return cells if fresh.fact else dimmed(cells, range(1, len(cells)))


def whatif_title(pod: PodView) -> str:
    return f"[b]{escape(pod.namespace)}/{escape(pod.name)}[/b] asks {escape(_requests(pod))}"


def _requests(pod: PodView) -> str:
    from kubeview.tui.format import requests_summary

    return requests_summary(pod.requests)
