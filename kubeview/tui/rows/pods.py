"""The Pods table: columns, sort values and cells of one pod; the order itself is a `KeyIndex`.

A pending pod's REASON is what an autoscaler says it waits for where one said something
("waiting for a node: node group gpu-pool scaling 6 → 38 (in progress, 2 min)", "NodePool gpu at
its limit nvidia.com/gpu 48/48": model/autoscaling/waits.py), else the scheduler's message (also where
the autoscaler only says no group's node would fit it: then in red).

Sort values are plain numbers or strings so that a rebuild over 150,000 pods is one numpy argsort;
numbers sort largest first (negated), as k9s does for cpu and memory. The GPU column counts what a
pod holds: device-plugin GPUs from its requests plus the DRA devices its claims hold (`Held`, from
the GPU ledger); a `nvidia.com/gpu` served through a claim is not in `requests`, so it counts once.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from rich.text import Text

from kubeview.model.autoscaling.groups import WAIT_NEVER, PodWait
from kubeview.model.cluster import ClusterModel
from kubeview.model.gpus.vendors import DEFAULT as DEFAULT_GPUS
from kubeview.model.gpus.vendors import MIG
from kubeview.model.views import PodView
from kubeview.tui import format as fmt
from kubeview.tui.format import GPU
from kubeview.tui.key_index import ItemValue, natural
from kubeview.tui.rows.column import Column

COLUMNS = [  # names whole; the reason gets the rest, never less than its point (`reason_cell`)
    Column("namespace", "NAMESPACE", 0, whole=True, least=12),  # kube-flannel, kube-system whole
    Column("name", "NAME", 0, whole=True),
    Column("node", "NODE", 0, whole=True),
    Column("phase", "PHASE", 9, least=7),  # Running, Pending whole
    Column("cpu", "CPU", 6, "right", least=5, descending=True),
    Column("memory", "MEM", 7, "right", least=6, descending=True),
    Column("gpu", "GPU", 5, "right", descending=True),  # "1 mig": a MIG slice
    Column("restarts", "RST", 4, "right", least=3, descending=True),
    Column("reason", "REASON", 0, point=fmt.reason_point, full=fmt.reason_key),
]
PHASE_STYLE = {"Running": "green", "Pending": "bold yellow", "Succeeded": "dim", "Failed": "bold red"}

Key = tuple[str, str]
Held = Mapping[Key, tuple[int, bool]]  # DRA GPUs a pod's claims hold: (how many, any of them a MIG slice)
Waits = Mapping[Key, PodWait]  # what pending pods wait for, where an autoscaler said (ClusterModel.pod_waits)
WAIT_STYLE = {WAIT_NEVER: "bold red"}  # waiting for nodes on their way: cyan
# Cluster Autoscaler's NotTriggerScaleUp naming no group, only predicates on its groups' templates (waits.py's
# words): the scheduler's words about the nodes there are say more; they stay, in red (nothing will come)
NO_GROUP_FITS = "will not get a node: no node group fits"
_GONE = PodView("", "", None, "", {}, {}, [], 0, None, False, None)


def dra_held(model: ClusterModel) -> dict[Key, tuple[int, bool]]:
    """`Held` for every pod holding DRA GPUs (call under the state's lock; a few per DRA node)."""
    return {pod: (len(devices), any(d.type == "mig" for d in devices))
            for pod, devices in model.gpus.pod_gpus().items()}


def gpus(pod: PodView, held: Held) -> tuple[int, bool]:
    """GPUs the pod asks for or holds, counted once, and whether a MIG slice is among them (a DRA
    device, or the device plugin's `nvidia.com/mig-<profile>`); other GPU resources (AMD's, Intel's,
    `nvidia.com/gpu.shared`: `vendors.DEFAULT`) count too (#35)."""
    n, mig = held.get(pod.key, (0, False))
    r = pod.requests
    for k, v in r.items():
        if k != GPU and "/" in k:
            g = DEFAULT_GPUS.classify(k)
            if g is not None:
                n += v
                mig = mig or g.kind == MIG
    return r.get(GPU, 0) + n, mig


def sort_value(column: str, pods: Mapping[Key, PodView], held: Held | None = None,
               waits: Waits | None = None) -> Callable[[Key], object] | None:
    """The `KeyIndex` value function for `column` (None: by namespace/name, the key order; NAME sorts by
    the pod's name across namespaces, as its header says: #42, "NAME ▲" listed kube-system after default)."""
    held = held or {}
    if column in ("namespace", ""):
        return None
    if column == "reason" and waits:
        said = waits
        return ItemValue(pods, lambda p: reason_of(p, said.get(p.key)), _GONE)
    getters: dict[str, Callable[[PodView], object]] = {
        "name": lambda p: natural(p.name),
        "node": lambda p: p.node or "",
        "phase": lambda p: ("~" if p.deleting else "") + p.phase,
        "cpu": lambda p: -p.requests.get("cpu", 0),
        "memory": lambda p: -p.requests.get("memory", 0),
        "gpu": lambda p: -gpus(p, held)[0],
        "restarts": lambda p: -p.restarts,
        "reason": lambda p: p.pending_reason or "",
    }
    return ItemValue(pods, getters[column], _GONE)  # _GONE: a row deleted while a worker sorts


def search_text(pod: PodView) -> str:
    """What `/` matches a pod against: namespace/name, node and phase (short: 150,000 of them)."""
    return f"{pod.namespace}/{pod.name} {pod.node or '<none>'} {pod.phase}".lower()


def reason_of(pod: PodView, wait: PodWait | None) -> str:
    """The REASON a pending pod shows: what an autoscaler says it waits for, else the scheduler's words."""
    if wait is None or not wait.words or (wait.group is None and wait.words.startswith(NO_GROUP_FITS)):
        return pod.pending_reason or ""
    return wait.words


def asks_gpus(pod: PodView) -> bool:
    """The pod asks for GPUs: device-plugin ones, ones a claim would serve, or claims of its own."""
    return bool(pod.requests.get(GPU) or pod.mapped or pod.pod_claims)


def reason_cell(reason: str, width: int | None = None, gpu_first: bool = False) -> str:
    """The scheduler's message, or when `width` cuts it its key part: `0/5 nodes are available: 2
    Insufficient nvidia.com/gpu, 3 Insufficient cpu. preemption: ...` -> `2 Insufficient nvidia.com/gpu,
    3 Insufficient cpu`, as many whole parts as fit. Something cut always says so: `, +2 more` (or `, …`
    where that does not fit) after the parts shown; narrower than that, the table's own cut ends in `…`. `gpu_first`: the
    pod asks for GPUs, so the GPU parts lead (`fmt.reason_parts`)."""
    if width is None or len(reason) <= width:
        return reason
    parts = fmt.reason_parts(reason, gpu_first)
    for n in range(len(parts), 0, -1):
        shown = ", ".join(parts[:n])
        left = len(parts) - n
        marks = [""] if not left else [f", +{left} more", ", …"]
        for mark in marks:
            if len(shown) + len(mark) <= width:
                return shown + mark
    # narrower than the point: the point itself, which the table cuts with `…` (and measures whole)
    return parts[0] + (", …" if len(parts) > 1 else "")


def name_cell(pod: PodView) -> Text | str:
    """A static pod's name ends with its node's (`kube-apiserver-cpu-node-1`), which NODE shows: that
    end is dim, and a cut name loses it first (`kube-apis…`; cut in the middle the three control-plane
    pods all read `kube-…de-1`). Other names are cut in the middle (their ends differ)."""
    if pod.node and pod.name.endswith("-" + pod.node) and len(pod.name) > len(pod.node) + 1:
        text = Text(pod.name)
        text.stylize("dim", len(pod.name) - len(pod.node) - 1)
        return text
    return pod.name


def cells(pod: PodView | None, key: Key, width_of: dict[str, int] | None = None,
          held: Held | None = None, waits: Waits | None = None) -> list[Text | str]:
    if pod is None:
        return [key[0], Text(key[1], style="strike dim")]
    phase = "Terminating" if pod.deleting else pod.phase
    r = pod.requests
    gpu, mig = gpus(pod, held or {})
    return [
        pod.namespace,
        name_cell(pod),
        Text(pod.node or "<none>", style="" if pod.node else "dim"),
        Text(phase, style=PHASE_STYLE.get(phase, "yellow")),
        fmt.cpu(r["cpu"]) if "cpu" in r else "-",
        fmt.mem(r["memory"]) if "memory" in r else "-",
        Text(f"{gpu} mig" if mig else str(gpu), style="bold") if gpu else Text("-", style="dim"),
        Text(str(pod.restarts), style="bold red" if pod.restarts else ""),
        _reason(pod, (waits or {}).get(key), (width_of or {}).get("reason")) if pod.pending else "",
    ]


def _reason(pod: PodView, wait: PodWait | None, width: int | None) -> Text:
    """An autoscaler's words whole (the table cuts them), else the scheduler's message's key part."""
    if wait is not None and wait.group is None and wait.words.startswith(NO_GROUP_FITS) and pod.pending_reason:
        return Text(reason_cell(pod.pending_reason, width, asks_gpus(pod)), style="red")
    if wait is not None and wait.words:
        return Text(wait.words, style=WAIT_STYLE.get(wait.state, "cyan"))
    return Text(reason_cell(pod.pending_reason or "", width, asks_gpus(pod)), style="yellow")
