"""One pod: phase, node, requests and limits with their units, conditions, the scheduler's whole
message, wrapped (the Pods table can only show its key part), and its recent Events as `kubectl
describe pod` lists them (type, reason, age with count, from, message; newest last).

Conditions, containers, labels and tolerations come from the whole pod: the source's own copy when
it keeps one (`source.get`, the local cluster), or read from the API server when the screen opens and
again when the model sees the pod change (`source.fetch`, off the UI thread: the model decodes a
trimmed pod, #41). Until it arrives, or where neither exists, what the model knows (PodScheduled).
Installed once and reused, like the node screen.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

from rich.markup import escape
from textual import work
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.widgets import Static
from textual.worker import get_current_worker

from kubeview.cluster.source import ClusterSource, FetchesObjects, GetsObjects
from kubeview.model.autoscaling.groups import WAIT_NEVER, WAIT_NODES, WAIT_ROOM, PodWait
from kubeview.model.kinds import events_unavailable
from kubeview.model.kube_events import EventView
from kubeview.model.views import PodView
from kubeview.tui import format as fmt
from kubeview.tui.format import hanging, wrap_long_lines
from kubeview.tui.rows.devices import pod_claim_lines
from kubeview.tui.rows.gpu_block import pod_warnings
from kubeview.tui.rows.gpu_units import shaped
from kubeview.tui.rows.pod_whole import whole_pod_lines
from kubeview.tui.screens.base import ClusterScreen, installed
from kubeview.tui.state import ClusterState

NAME = "pod-detail"


def install_pod_detail(app: App) -> PodDetailScreen:
    return installed(app, NAME, PodDetailScreen)  # type: ignore[return-value]


class PodDetailScreen(ClusterScreen):
    SCREEN_TITLE = "Pod"
    FILTERABLE = False
    BINDINGS = [Binding("escape", "back", "Back", id="pod.back", tooltip="Back to the pods"),
                Binding("P", "plan", "Plan", id="pod.plan",
                        tooltip="A pending pod: the fewest disruptions that make it fit (apply asks first)")]

    def __init__(self) -> None:
        super().__init__()
        self.key: tuple[str, str] = ("", "")
        self._whole: dict | None = None  # this pod as the API server last answered (`fetch`)
        self._answered = False  # a read came back (with `_whole` None: it could not be read)
        self._asked_for: PodView | None = None  # the model's pod when the last read was asked for

    def show(self, key: tuple[str, str]) -> None:
        self.key = key
        self._whole, self._answered, self._asked_for = None, False, None
        self.retitle(f"Pod {key[0]}/{key[1]}")

    def compose_body(self) -> ComposeResult:
        with VerticalScroll(id="pod-detail"):
            yield Static(id="pod-text")

    def main_widget(self) -> VerticalScroll:
        return self.query_one("#pod-detail", VerticalScroll)

    def update_from_state(self, state: ClusterState) -> None:
        with state.lock:
            pod = state.model.pods.get(self.key)
            events = state.model.pod_events(self.key)
            no_events = events_unavailable(state.model.unavailable)
            claims = pod_claim_lines(state.model, pod) if pod is not None else []
            if pod is not None and pod.node:  # ≥2 replicas of a time-sliced GPU: maybe one GPU (#35)
                model = state.model
                claims += shared_gpu_lines(pod_warnings(state.memo("gpu_shaped", lambda: shaped(model)), pod))
            wait = state.model.pod_wait(self.key) if pod is not None else None
        raw = self._raw(pod)
        width = self._text_width()
        text = describe(pod, self.key, raw, claims, width, wait)
        if pod is not None:
            whole = whole_pod_lines(raw) if raw is not None else []
            if whole:
                text += "\n\n" + "\n".join(whole)
            elif raw is None and isinstance(self.kv.source, FetchesObjects):
                text += ("\n\n[dim]the whole pod could not be read from the API server: showing what kubeview "
                         "keeps[/dim]" if self._answered else "\n\n[dim]reading the whole pod from the API server…[/dim]")
            text += "\n\n" + describe_events(events, time.time(), no_events, width)
        self.query_one("#pod-text", Static).update(wrap_long_lines(text, width))

    def _raw(self, pod: PodView | None) -> dict | None:
        source = self.kv.source
        if pod is None:
            return None
        if not isinstance(source, FetchesObjects):
            return _raw_pod(source, self.key)
        if pod is not self._asked_for:  # just opened, or the model's pod changed since the last read
            self._asked_for = pod
            self._fetch(source, self.key)
        return self._whole

    @work(thread=True, exclusive=True, group="pod-fetch", exit_on_error=False, name="reading the pod")
    def _fetch(self, source: FetchesObjects, key: tuple[str, str]) -> None:
        doc = source.fetch("Pod", *key)
        if not get_current_worker().is_cancelled:  # a newer read was asked for: its answer stands
            self.app.call_from_thread(self._fetched, key, doc)

    def _fetched(self, key: tuple[str, str], doc: dict | None) -> None:
        if key != self.key:  # another pod opened meanwhile
            return
        self._answered = True
        if doc is not None:  # (a re-read that failed leaves the last whole pod read standing)
            self._whole = doc
        if self.is_current:
            self.refresh_data()
        else:
            self._stale = True

    def _text_width(self) -> int:
        """Cells a line of the text has (the long messages are wrapped here, with a hanging indent)."""
        box = self.query_one("#pod-detail", VerticalScroll)
        return box.scrollable_content_region.width or max(self.app.size.width - 4, 20)

    def on_resize(self) -> None:
        self.refresh_data()  # the wrapped messages follow the width

    def action_back(self) -> None:
        self.app.pop_screen()

    def action_plan(self) -> None:
        from kubeview.tui.screens.plan import PlanScreen

        self.app.push_screen(PlanScreen(pod_key=self.key))


def _raw_pod(source: ClusterSource, key: tuple[str, str]) -> dict | None:
    if not isinstance(source, GetsObjects):
        return None
    try:
        return source.get("Pod", *key)
    except Exception:  # a source that cannot answer: what the model knows will do
        return None


def describe(pod: PodView | None, key: tuple[str, str], raw: dict | None = None, claims: Sequence[str] = (),
             width: int | None = None, wait: PodWait | None = None) -> str:
    """The pod as markup, `kubectl describe` style, one fact a line; `claims`: the DRA lines
    (rows/devices.py: claim -> device -> UUID); the scheduler's message wrapped to `width` under its indent;
    `wait`: what an autoscaler says the pending pod waits for (model/autoscaling/waits.py)."""
    if pod is None:
        return f"[b]{escape('/'.join(key))}[/b]\n\n[dim]this pod is gone[/dim]"
    phase = "Terminating" if pod.deleting else pod.phase
    lines = [
        f"[b]Namespace[/b]  {escape(pod.namespace)}",
        f"[b]Name[/b]       {escape(pod.name)}",
        f"[b]Phase[/b]      {escape(phase)}",
        f"[b]Node[/b]       {escape(pod.node or '<none> (not scheduled)')}",
        f"[b]Restarts[/b]   {pod.restarts}",
    ]
    if pod.owner:
        lines.append(f"[b]Owner[/b]      {escape(pod.owner[0])}/{escape(pod.owner[1])}")
    lines += ["", "[b]Resources[/b]     request    limit"]
    for res in sorted(set(pod.requests) | set(pod.limits)):
        if res == "pods":
            continue
        req = fmt.amount(res, pod.requests[res]) if res in pod.requests else "-"
        lim = fmt.amount(res, pod.limits[res]) if res in pod.limits else "-"
        lines.append(f"  {escape(_unit_name(res)):<12}{req:>8} {lim:>8}")
    lines += list(claims)
    lines += ["", "[b]Conditions[/b]"]
    lines += [f"  {escape(c)}" for c in _conditions(pod, raw)]
    lines += wait_lines(wait, width)
    if pod.pending_reason:
        lines += ["", "[b]Why it is not scheduled[/b] (the scheduler's message)"]
        lines += [f"  [yellow]{escape(part)}[/yellow]"
                  for part in hanging("", pod.pending_reason, None if width is None else width - 2)]
    return "\n".join(lines)


def shared_gpu_lines(warnings: list[str]) -> list[str]:
    """The pod's shared-GPU warnings as markup lines under its resources."""
    return (["", "[b]Shared GPUs[/b]"] + [f"  [b yellow]⚠ {escape(w)}[/b yellow]" for w in warnings]) if warnings else []


WAIT_HEADS = {WAIT_ROOM: "room on the nodes there are", WAIT_NODES: "a node an autoscaler is adding",
              WAIT_NEVER: "nothing that will come"}
WAIT_STYLES = {WAIT_NODES: "cyan", WAIT_NEVER: "bold red"}


def wait_lines(wait: PodWait | None, width: int | None = None) -> list[str]:
    """"What it waits for": the views' words, then the autoscaler's own (its event's message), wrapped."""
    if wait is None or not (wait.words or wait.detail):
        return []
    style = WAIT_STYLES.get(wait.state, "")
    inner = None if width is None else width - 2
    lines = ["", f"[b]What it waits for[/b]: {WAIT_HEADS.get(wait.state, wait.state)}"]
    if wait.words:
        lines += [f"  [{style}]{escape(part)}[/{style}]" if style else f"  {escape(part)}"
                  for part in hanging("", wait.words, inner)]
    if wait.detail and wait.detail != wait.words:
        lines += [f"  [dim]{escape(part)}[/dim]" for part in hanging("autoscaler: ", wait.detail, inner)]
    return lines


def describe_events(events: list[EventView], now: float, unavailable: str | None = None,
                    width: int | None = None) -> str:
    """The Events block of `kubectl describe pod` as markup: newest last, Warnings in yellow; a message
    longer than the line wraps under the Message column (a hanging indent), not to column 0."""
    if not events:
        why = f"[dim]{escape(unavailable)}[/dim]" if unavailable else "<none>"
        return f"[b]Events[/b]  {why}"
    rows = [(e.type, e.reason, e.interval(now), e.source, e.message) for e in events]
    head = ("Type", "Reason", "Age", "From", "Message")
    widths = [max(len(r[i]) for r in [head, *rows]) for i in range(4)]
    def line(cells: tuple[str, ...]) -> list[str]:
        lead = "  ".join(c.ljust(w) for c, w in zip(cells, widths, strict=False)) + "  "
        return [escape(part) for part in hanging(lead, cells[4], None if width is None else width - 2)]

    lines = ["[b]Events[/b]", "  " + line(head)[0]]
    for event, row in zip(events, rows, strict=True):
        lines += [f"  [yellow]{part}[/yellow]" if event.warning else f"  {part}" for part in line(row)]
    return "\n".join(lines)


def _unit_name(resource: str) -> str:
    return {"memory": "memory", "cpu": "cpu", fmt.GPU: "GPU (nvidia)"}.get(resource, resource)


def _conditions(pod: PodView, raw: dict | None) -> list[str]:
    found = ((raw or {}).get("status") or {}).get("conditions") or []
    if found:
        return [f"{c.get('type', '?')}={c.get('status', '?')}" + (f" ({c['reason']})" if c.get("reason") else "")
                for c in found]
    if pod.node:
        return ["PodScheduled=True"]
    return ["PodScheduled=False (Unschedulable)" if pod.pending_reason else "PodScheduled: not yet"]
