"""Plan: the fewest disruptions that make a pending pod (its gang) or a hypothetical request fit, shown
before anything happens; `a` applies after asking, then follows until bound; `l` shows the audit log.

Opened from Packing (the pod or hypothetical request picked there) and from a pending pod's detail.
The plan is `kubeview.scheduling.planner.plan_for` on the model under the live policy (the same as
`kubeview plan`), computed in a worker thread (the budgets are read from the cluster there too);
applying is `cluster.plan_apply.apply_plan`, in a worker thread whose lines come back through
`call_from_thread`. Every apply is written to the audit log (cluster/plan_log.py).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.markup import escape
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Label, Static

from kubeview.scheduling.config import PackingConfig
from kubeview.scheduling.plan_text import describe_plan
from kubeview.scheduling.plan_types import Plan, Target
from kubeview.tui.host import host_of

if TYPE_CHECKING:
    from kubeview.cluster.source import Evicts
    from kubeview.model.cluster import ClusterModel
    from kubeview.model.disruption import BudgetView

APPLY_TIMEOUT = 120.0


class PlanScreen(ModalScreen[None]):
    BINDINGS = [
        Binding("a", "apply", "Apply", id="plan.apply", tooltip="Evict the plan's pods (asks first), then follow"),
        Binding("b", "bare", "Bare pods", id="plan.bare", tooltip="Also consider bare pods (none recreates them)"),
        Binding("l", "log", "Audit log", id="plan.log", tooltip="Show the applied plans (audit log)"),
        Binding("escape", "close", "Close", id="plan.close", tooltip="Back, nothing applied"),
    ]

    def __init__(self, pod_key: tuple[str, str] | None = None, gpus: int = 2, pods: int = 1,
                 allow_bare: bool = False, *, gang_key: tuple[str, str, str] | None = None,
                 requests: dict[str, int] | None = None) -> None:
        """For a pod (`pod_key`: its gang when it has one), a gang of the cluster (`gang_key`), or else
        `pods` hypothetical pods asking `gpus` GPUs (and `requests`: what Packing's what-if asks)."""
        super().__init__()
        self.pod_key, self.gpus, self.pods, self.allow_bare = pod_key, gpus, pods, allow_bare
        self.gang_key, self.requests = gang_key, requests
        self.plan: Plan | None = None
        self.applying = False
        self.showing_log = False
        self.lines: list[str] = []
        self.cluster: Evicts | None = None  # what evicts here (plan_apply.evictor_for), None: this source cannot

    def compose(self) -> ComposeResult:
        with VerticalScroll(classes="dialog", id="plan"):
            yield Label("Plan", classes="question", id="plan-title")
            yield Static("planning…", id="plan-text")
            yield Label("a apply (asks first) · b bare pods · l audit log · Escape back", classes="hint")

    def on_mount(self) -> None:
        self.compute()

    # -- the plan ----------------------------------------------------------------------------------
    @work(thread=True, exclusive=True, group="plan", exit_on_error=False)
    def compute(self) -> None:
        from kubeview.cluster.plan_apply import evictor_for
        from kubeview.cluster.source import ActionError
        from kubeview.model.disruption import budgets_of
        from kubeview.scheduling.planner import plan_for

        kv = host_of(self.app)
        cluster = evictor_for(kv.source)
        budgets: list[BudgetView] = []
        note = None
        if cluster is not None:
            try:
                budgets = budgets_of(cluster.budgets())
            except ActionError as exc:
                note = f"PodDisruptionBudgets not read ({exc}): the plan does not know them"
        config = kv.packing_live or PackingConfig()
        with kv.state.lock:
            target = self._target(kv.state.model)
            plan = None if isinstance(target, str) else plan_for(kv.state.model, target, config, budgets,
                                                                 allow_bare=self.allow_bare)
        if plan is not None and note:
            plan.notes.append(note)
        self.app.call_from_thread(self._show, plan, target if isinstance(target, str) else None, cluster,
                                  config.policy)

    def _target(self, model: ClusterModel) -> Target | str:
        """What to plan for, or why there is nothing to plan."""
        from kubeview.scheduling.plan_types import hypothetical
        from kubeview.scheduling.planner import target_of_gang

        if self.gang_key is not None:
            gang = model.gangs.get(*self.gang_key)
            return target_of_gang(model, gang) if gang is not None else f"gang {'/'.join(self.gang_key[1:])} is gone"
        if self.pod_key is None:
            return hypothetical(self.gpus, self.pods, requests=self.requests)
        pod = model.pods.get(self.pod_key)
        if pod is None:
            return f"pod {'/'.join(self.pod_key)} is gone"
        gangs = model.gangs.of_pod(*self.pod_key)
        if gangs:
            return target_of_gang(model, gangs[0])
        if pod.node is not None:
            return f"pod {'/'.join(self.pod_key)} is bound to {pod.node}: nothing to plan"
        return Target.of_pods([pod])

    def _show(self, plan: Plan | None, error: str | None, cluster: Evicts | None, policy: str) -> None:
        self.plan, self.cluster = plan, cluster
        if plan is None:
            self._text(escape(error or "no plan"))
            return
        text = describe_plan(plan, policy)
        self.query_one("#plan-title", Label).update(f"Plan for {plan.target}")
        if cluster is None:
            text += "  this cluster has no Eviction API here: the plan cannot be applied\n"
        self._text(escape(text.rstrip()))

    def _text(self, markup: str) -> None:
        self.query_one("#plan-text", Static).update(markup)

    # -- actions -----------------------------------------------------------------------------------
    def action_bare(self) -> None:
        if self.applying:
            return
        self.allow_bare = not self.allow_bare
        self._text("planning…")
        self.compute()

    def action_apply(self) -> None:
        from kubeview.tui.screens.prompts import Confirm

        plan, cluster = self.plan, self.cluster
        if self.applying or plan is None or cluster is None:
            return
        if not plan.found or not plan.moves:
            self.app.notify("nothing to apply" if plan.found else "no plan to apply")
            return
        if plan.over_budget:
            self.app.notify("not applied: " + "; ".join(plan.over_budget), severity="warning")
            return
        pods = ", ".join(m.pod for m in plan.moves)

        def answered(yes: bool | None) -> None:
            if yes:
                self.applying = True
                self.lines = []
                self._apply(plan, cluster)

        self.app.push_screen(Confirm(f"Evict {pods} to make room for {plan.target}?"), answered)

    @work(thread=True, exclusive=True, group="plan-apply", exit_on_error=False)
    def _apply(self, plan: Plan, cluster: Evicts) -> None:
        from kubeview.cluster.plan_apply import apply_plan
        from kubeview.cluster.plan_log import PlanLog

        try:
            log = PlanLog()
        except OSError as exc:
            self.app.call_from_thread(self._line, f"audit log not writable ({exc}): not applied")
            self.applying = False
            return
        out = apply_plan(cluster, plan, APPLY_TIMEOUT, log=log, title=host_of(self.app).source.title,
                         say=lambda line: self.app.call_from_thread(self._line, line))
        self.applying = False
        self.app.call_from_thread(self._done, out.outcome, out.detail)

    def _line(self, line: str) -> None:
        """The plan as shown, then what the apply said so far."""
        self.lines.append(line)
        policy = (host_of(self.app).packing_live or PackingConfig()).policy
        shown = describe_plan(self.plan, policy) if self.plan is not None else ""
        self._text(escape(shown + "\n" + "\n".join(f"  {x}" for x in self.lines)))

    def _done(self, outcome: str, detail: str) -> None:
        self.app.notify(detail, severity="information" if outcome in ("bound", "done") else "warning")

    def action_log(self) -> None:
        from kubeview.cluster.plan_log import PlanLog

        self.showing_log = not self.showing_log
        if not self.showing_log:
            self.compute()
            return
        try:
            entries = PlanLog().entries(20)
        except OSError as exc:
            self._text(escape(f"audit log not readable: {exc}"))
            return
        rows = [f"#{e.id} {e.at} {e.who} on {e.cluster}: {e.target}: evicted "
                f"{', '.join(m['pod'] for m in e.plan.get('moves', [])) or 'nothing'}: {e.outcome}"
                + (f" ({e.detail})" if e.detail else "") for e in entries]
        self.query_one("#plan-title", Label).update("Applied plans (audit log, newest first)")
        self._text(escape("\n".join(rows) or "no plan applied yet"))

    def action_close(self) -> None:
        self.dismiss(None)

