"""The Pods table: columns, sort values and cells of one pod; the order itself is a `KeyIndex`.

Sort values are plain numbers or strings so that a rebuild over 150,000 pods is one numpy argsort;
numbers sort largest first (negated), as k9s does for cpu and memory.
"""

from __future__ import annotations

from collections.abc import Callable

from rich.text import Text

from kubeview.model.views import PodView
from kubeview.tui import format as fmt
from kubeview.tui.format import GPU
from kubeview.tui.key_index import ItemValue
from kubeview.tui.rows.column import Column

COLUMNS = [  # names whole; the reason gets the rest, its key part first when cut (`reason_cell`)
    Column("namespace", "NAMESPACE", 11, least=7),
    Column("name", "NAME", 0, whole=True),
    Column("node", "NODE", 0, whole=True),
    Column("phase", "PHASE", 9),
    Column("cpu", "CPU", 6, "right", descending=True),
    Column("memory", "MEM", 7, "right", descending=True),
    Column("gpu", "GPU", 3, "right", descending=True),
    Column("restarts", "RST", 4, "right", descending=True),
    Column("reason", "REASON", 0),
]
PHASE_STYLE = {"Running": "green", "Pending": "bold yellow", "Succeeded": "dim", "Failed": "bold red"}

Key = tuple[str, str]
_GONE = PodView("", "", None, "", {}, {}, [], 0, None, False, None)


def sort_value(column: str, pods: dict[Key, PodView]) -> Callable[[Key], object] | None:
    """The `KeyIndex` value function for `column` (None: by namespace/name)."""
    if column in ("name", "namespace", ""):
        return None
    getters: dict[str, Callable[[PodView], object]] = {
        "node": lambda p: p.node or "",
        "phase": lambda p: ("~" if p.deleting else "") + p.phase,
        "cpu": lambda p: -p.requests.get("cpu", 0),
        "memory": lambda p: -p.requests.get("memory", 0),
        "gpu": lambda p: -p.requests.get(GPU, 0),
        "restarts": lambda p: -p.restarts,
        "reason": lambda p: p.pending_reason or "",
    }
    return ItemValue(pods, getters[column], _GONE)  # _GONE: a row deleted while a worker sorts


def search_text(pod: PodView) -> str:
    """What `/` matches a pod against: namespace/name, node and phase (short: 150,000 of them)."""
    return f"{pod.namespace}/{pod.name} {pod.node or '<none>'} {pod.phase}".lower()


def reason_cell(reason: str, width: int | None = None) -> str:
    """The scheduler's message, or its key part when `width` cuts it: `0/5 nodes are available: 2
    Insufficient nvidia.com/gpu, 3 Insufficient cpu. preemption: ...` -> `2 Insufficient nvidia.com/gpu,
    3 Insufficient cpu`."""
    if width is None or len(reason) <= width:
        return reason
    return fmt.reason_key(reason)


def cells(pod: PodView | None, key: Key, width_of: dict[str, int] | None = None) -> list[Text | str]:
    if pod is None:
        return [key[0], Text(key[1], style="strike dim")]
    phase = "Terminating" if pod.deleting else pod.phase
    r = pod.requests
    gpu = r.get(GPU, 0)
    return [
        pod.namespace,
        pod.name,
        Text(pod.node or "<none>", style="" if pod.node else "dim"),
        Text(phase, style=PHASE_STYLE.get(phase, "yellow")),
        fmt.cpu(r["cpu"]) if "cpu" in r else "-",
        fmt.mem(r["memory"]) if "memory" in r else "-",
        Text(str(gpu), style="bold") if gpu else Text("-", style="dim"),
        Text(str(pod.restarts), style="bold red" if pod.restarts else ""),
        Text(reason_cell(pod.pending_reason or "", (width_of or {}).get("reason")), style="yellow")
        if pod.pending else "",
    ]
