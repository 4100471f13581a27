"""The Nodes table: one row per node, computed over all nodes at once with numpy.

Every pod event moves some node's requested figures, so node rows are recomputed as a whole per
refresh from `model.allocation()` (a 5,000 x R copy, a few milliseconds) and ordered with one
`np.lexsort`; only the ~40 visible rows are ever formatted. Requested figures count pods: until the
pods are listed completely they read "…/32" (allocatable is the node's own), and while a relist runs
they are dimmed (`NodeRows.fresh`, model/freshness.py).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from rich.text import Text

from kubeview.model.cluster import ClusterModel
from kubeview.model.freshness import FACT, Freshness
from kubeview.model.gpus.reads import GpuShapes
from kubeview.model.views import NodeView
from kubeview.tui import format as fmt
from kubeview.tui.format import GPU
from kubeview.tui.rows.column import Column
from kubeview.tui.rows.gpu_units import NodeUnit, units

COLUMNS = [  # names whole; on a narrow screen the bars get shorter first (see `fit_widths`)
    Column("name", "NAME", 0, whole=True),
    Column("cpu", "CPU req/alloc", 18, least=9, descending=True),
    Column("memory", "MEMORY req/alloc", 18, least=9, descending=True),
    Column("gpu", "GPU req/alloc", 16, least=9, descending=True),
    Column("pods", "PODS", 7, "right", descending=True),
    Column("fit", "FIT", 5, "right", least=3, descending=True),
    # as wide as its widest cell (`Ready` most of the time): the rest goes to TAINTS (at 100 columns
    # STATUS padded `Ready` with ~10 blanks while TAINTS read `nvi…`)
    Column("status", "STATUS", 0, whole=True, least=6),
    Column("taints", "TAINTS", 0, least=12),  # before the bars keep their full width (`nvi…` at 100)
]
BAR = {"cpu": 8, "memory": 8, "gpu": 6}  # bar cells at full width; the figure after it always shows
SORTS = {c.key: c.label.split()[0].lower() for c in COLUMNS}
NUMERIC = ("cpu", "memory", "gpu", "pods", "fit")


@dataclass(slots=True)
class NodeRows:
    """Figures of every node, rows in allocation (name) order."""

    names: list[str] = field(default_factory=list)
    views: list[NodeView] = field(default_factory=list)
    req: dict[str, np.ndarray] = field(default_factory=dict)  # cpu, memory, gpu, pods
    alloc: dict[str, np.ndarray] = field(default_factory=dict)
    used: dict[str, np.ndarray] = field(default_factory=dict)  # NaN where not measured
    pods: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    fit: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    row: dict[str, int] = field(default_factory=dict)
    # nodes whose GPUs are shared replicas, MIG slices or another vendor's: their GPU figures and FIT
    # (in `req`, `alloc`, `fit`) are in that unit, and the cell says which (rows/gpu_units.py)
    unit: dict[str, NodeUnit] = field(default_factory=dict)
    gpu_label: int = 4  # cells of the widest GPU figure ("3/8 ×4"): every row's bar leaves room for it
    fresh: Freshness = FACT  # pending: no requested figure, FIT or pod count is shown; stale: dimmed

    def __len__(self) -> int:
        return len(self.names)


def _usage_arrays(model: ClusterModel, names: list[str], cache: dict) -> dict[str, np.ndarray]:
    """Per node used cpu, memory, GPUs (NaN: not measured), rebuilt only when usage or nodes change."""
    usage = model.usage
    stamp = (id(usage.nodes), usage.at, len(usage.nodes))
    if cache.get("stamp") == stamp and cache.get("names") == names:
        return cache["arrays"]
    n = len(names)
    out = {key: np.full(n, np.nan) for key in ("cpu", "memory", "gpu")}
    nodes = usage.nodes
    if nodes:
        for i, name in enumerate(names):
            u = nodes.get(name)
            if u is None:
                continue
            if u.cpu is not None:
                out["cpu"][i] = u.cpu
            if u.memory is not None:
                out["memory"][i] = u.memory
            if u.gpu_util:
                out["gpu"][i] = sum(u.gpu_util) / 100
    cache.update(stamp=stamp, names=list(names), arrays=out)
    return out


def build(model: ClusterModel, fit: np.ndarray | None = None, cache: dict | None = None,
          shapes: GpuShapes | None = None, fresh: Freshness = FACT) -> NodeRows:
    """All node figures (call under the state's lock); `fit`: the model's largest GPU fit per node,
    `cache`: the caller's, keeps usage arrays between refreshes; `shapes`: the unusual GPU nodes'
    (`gpu_units.shaped`), whose GPU figures and FIT are read in their own unit; `fresh`: whether the
    figures counting pods are facts (model/freshness.py)."""
    a = model.allocation()
    out = NodeRows(names=a.nodes, views=a.views, fresh=fresh)
    n = len(a.nodes)
    for res, key in (("cpu", "cpu"), ("memory", "memory"), (GPU, "gpu"), ("pods", "pods")):
        col = a.column(res)
        if col is None:
            out.req[key] = out.alloc[key] = np.zeros(n, dtype=np.int64)
        else:
            out.req[key], out.alloc[key] = a.requested[:, col], a.allocatable[:, col]
    out.pods = model.pod_counts()
    out.fit = model.largest_fit(GPU) if fit is None else fit
    out.used = _usage_arrays(model, a.nodes, {} if cache is None else cache)
    out.row = {name: i for i, name in enumerate(a.nodes)}
    if shapes is not None and shapes.nodes:
        _own_units(model, out, units(shapes))
    return out


def _own_units(model: ClusterModel, out: NodeRows, unit: dict[str, NodeUnit]) -> None:
    """The unusual nodes' GPU figures and FIT in their own unit (copies: the arrays are the model's)."""
    out.unit = {n: u for n, u in unit.items() if n in out.row}
    if not out.unit:
        return
    out.req["gpu"], out.alloc["gpu"], out.fit = out.req["gpu"].copy(), out.alloc["gpu"].copy(), out.fit.copy()
    fits: dict[str, np.ndarray] = {}
    for name, u in out.unit.items():
        i = out.row[name]
        out.req["gpu"][i], out.alloc["gpu"][i] = u.requested, u.advertised
        if u.resource not in fits:
            fits[u.resource] = model.largest_fit(u.resource)
        out.fit[i] = fits[u.resource][i]
        out.gpu_label = max(out.gpu_label, len(_gpu_label(u.requested, u.advertised, u)))


def _gpu_label(req: int, alloc: int, unit: NodeUnit | None) -> str:
    return f"{req}/{alloc}".rjust(4) + (f" {unit.suffix}" if unit is not None else "")


def _frac(rows: NodeRows, key: str) -> np.ndarray:
    alloc = rows.alloc[key].astype(np.float64)
    return np.divide(rows.req[key], alloc, out=np.zeros_like(alloc), where=alloc > 0)


def order(rows: NodeRows, column: str, match: np.ndarray | None = None) -> list[str]:
    """Names in display order for `column` (numbers: fullest first; ties by name), filtered by `match`."""
    n = len(rows)
    idx = np.arange(n)
    if column in ("cpu", "memory", "pods"):
        primary = -_frac(rows, column) if column != "pods" else -rows.pods.astype(np.float64)
    elif column == "gpu":
        primary = -(rows.req["gpu"] * 1000 + _frac(rows, "gpu"))
    elif column == "fit":
        primary = -rows.fit.astype(np.float64)
    elif column in ("status", "taints"):
        text = [(status_text(v) if column == "status" else fmt.taints(v.taints)) for v in rows.views]
        primary = np.unique(np.asarray(text, dtype=str), return_inverse=True)[1] if n else np.zeros(0)
    else:
        primary = np.zeros(n)
    keys = np.lexsort((idx, primary)) if n else idx
    if match is not None:
        keys = keys[match[keys]]
    return [rows.names[i] for i in keys]


def status_text(view: NodeView) -> str:
    return fmt.conditions(view.conditions, view.unschedulable).plain


def search_text(view: NodeView) -> str:
    """What `/` matches a node against: name, status, taints, label values."""
    return " ".join((view.name, status_text(view), fmt.taints(view.taints), *view.labels.values())).lower()


def matches(rows: NodeRows, text: str, cache: dict[str, tuple[str, str]]) -> np.ndarray | None:
    """Boolean mask of nodes matching the filter; `cache` keeps search strings per resourceVersion.
    A shared, MIG or other vendor's node also matches its GPUs' words ("mig", "time-slicing", "amd")."""
    if not text:
        return None
    out = np.zeros(len(rows), dtype=bool)
    for i, view in enumerate(rows.views):
        hit = cache.get(view.name)
        if hit is None or hit[0] != view.resource_version:
            hit = (view.resource_version, search_text(view))
            cache[view.name] = hit
        u = rows.unit.get(view.name)
        out[i] = text in hit[1] or (u is not None and text in u.words)
    return out


def measure_stamp(rows: NodeRows, name: str) -> object:
    """What the measured columns show (the name, and STATUS: the node's conditions), for `Rows.measure`."""
    i = rows.row.get(name)
    return None if i is None else rows.views[i].resource_version


def stamp(rows: NodeRows, name: str) -> tuple:
    """Everything a node's row shows, as one hashable value (the table caches the row's strip by it)."""
    i = rows.row.get(name)
    if i is None:
        return (name,)
    u = rows.unit.get(name)
    return (rows.fresh.state, rows.views[i].resource_version, int(rows.pods[i]), int(rows.fit[i]), u and u.suffix,
            rows.gpu_label,
            *(int(rows.req[k][i]) for k in ("cpu", "memory", "gpu")),
            *(int(rows.alloc[k][i]) for k in ("cpu", "memory", "gpu", "pods")),
            *(None if np.isnan(v) else float(v) for v in (rows.used[k][i] for k in ("cpu", "memory", "gpu"))))


def _bar(key: str, width_of: dict[str, int], used: float | None, label: int = 4) -> int:
    """A bar's cells in a column `width_of[key]` wide: what the figure after it leaves, at most `BAR`."""
    figure = 1 + max(label, 4) + (5 if used is not None else 0)  # " 31%" (" 8/8", " 3/8 ×4") and " u12%"
    return max(1, min(BAR[key], width_of.get(key, 99) - figure))


def cells(rows: NodeRows, name: str, width_of: dict[str, int] | None = None) -> list[Text | str]:
    i = rows.row.get(name)
    if i is None:
        return [name]
    if rows.fresh.pending:
        return _pending_cells(rows, i)
    out = _cells(rows, name, i, width_of or {})
    return out if rows.fresh.fact else fmt.dimmed(out, range(1, 6))  # what counts pods


def _pending_cells(rows: NodeRows, i: int) -> list[Text | str]:
    """A node's row while its pods are not all listed: what the node says of itself, "…" for what
    counts pods (#41: "0/32 0%" from a partial list read as an empty node)."""
    view = rows.views[i]
    out: list[Text | str] = [Text(view.name, style="bold")]
    for key in ("cpu", "memory", "gpu"):
        alloc = int(rows.alloc[key][i])
        shown = (fmt.cpu if key == "cpu" else fmt.mem if key == "memory" else str)(alloc)
        out.append(Text(f"…/{shown}", style="dim") if alloc or key != "gpu" else Text("-", style="dim"))
    out.append(Text(f"…/{int(rows.alloc['pods'][i])}", style="dim"))
    out.append(Text("…" if int(rows.alloc["gpu"][i]) else "-", style="dim"))
    out.append(fmt.conditions(view.conditions, view.unschedulable))
    out.append(Text(fmt.taints(view.taints), style="dim" if not view.taints else ""))
    return out


def _cells(rows: NodeRows, name: str, i: int, width_of: dict[str, int]) -> list[Text | str]:
    view = rows.views[i]
    out: list[Text | str] = [Text(name, style="bold")]
    for key in ("cpu", "memory"):
        req, alloc, u = int(rows.req[key][i]), int(rows.alloc[key][i]), rows.used[key][i]
        used = None if np.isnan(u) else float(u)
        out.append(fmt.bar_cell(req, alloc, _bar(key, width_of, used), used))
    g_req, g_alloc, g_u = int(rows.req["gpu"][i]), int(rows.alloc["gpu"][i]), rows.used["gpu"][i]
    unit = rows.unit.get(name)
    if g_alloc:
        used = None if np.isnan(g_u) or (unit is not None and not unit.whole) else float(g_u)
        # the same bar width on every row (the widest figure's room), the figures' units lined up
        label = _gpu_label(g_req, g_alloc, unit).ljust(rows.gpu_label)
        out.append(fmt.bar_cell(g_req, g_alloc, _bar("gpu", width_of, used, rows.gpu_label), used, label=label))
    else:
        out.append(Text("-", style="dim"))
    out.append(f"{int(rows.pods[i])}/{int(rows.alloc['pods'][i])}")
    out.append(Text(str(int(rows.fit[i])), style="bold") if g_alloc else Text("-", style="dim"))
    out.append(fmt.conditions(view.conditions, view.unschedulable))
    out.append(Text(fmt.taints(view.taints), style="dim" if not view.taints else ""))
    return out
