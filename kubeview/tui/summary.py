"""What the header says about the whole cluster, computed once per refresh from the model.

A frozen value, so the header widget is a pure view of it (and tests can build one by hand).
Call `summarize` under the state's lock. `gpu_parts` and `fit_parts` say what the GPU line shows
at a width: whole parts, the least important dropped first (it was cut mid-word: "never fit (n…").
A figure counts objects of some kinds; until those are listed completely it is pending and the header
shows "…" for it, never a number it does not have (#42: an unreachable server read "GPU 0/0"; #41:
"GPUs 4000 free" from 90,000 of 150,000 pods), and while one is relisted (or the link is down) the last
complete figures are dimmed "as of" then (`Summary.fresh`, model/freshness.py).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, replace

import numpy as np

from kubeview.model.autoscaling.groups import WAIT_NEVER, WAIT_NODES
from kubeview.model.cluster import ClusterModel
from kubeview.model.events import ConnectionState
from kubeview.model.freshness import FACT, NODE_FIGURES, Freshness, Lists, depends
from kubeview.model.gpus.idle import find_idle
from kubeview.model.gpus.reads import GpuShapes
from kubeview.model.server_version import title_words
from kubeview.tui.format import GPU
from kubeview.tui.rows.gpu_units import HeaderWords, free_replicas, header_words


@dataclass(frozen=True, slots=True)
class Totals:
    requested: int
    allocatable: int
    used: float | None  # None: not measured


@dataclass(frozen=True, slots=True)
class Summary:
    title: str
    connection: ConnectionState
    nodes: int
    pods: int
    pending: int
    cpu: Totals
    memory: Totals
    gpu: Totals
    gpu_free: int
    gpu_largest: int  # largest GPU request one schedulable node can still take
    gpu_fits: tuple[tuple[int, int, int, bool], ...]  # (k, placeable, ideal, fits a node) for k = 1, 2, 4, 8
    usage_error: str | None = None
    idle_gpus: int | None = None  # allocated GPUs below 5% over the window; None: none measured
    listing: tuple[tuple[str, int], ...] = ()  # (kind, read so far) of lists in progress (pages)
    # the lists' state and the kinds the source lists (model/freshness.py); None: every figure is a fact
    lists: Lists | None = None
    source_kinds: tuple[str, ...] = ()
    # of `pending`, those waiting for nodes an autoscaler is adding, and those for nothing that will come
    # (model/autoscaling/waits.py); the rest wait for room on the nodes there are
    pending_nodes: int = 0
    pending_never: int = 0
    held_by_quota: int = 0  # pods not created: the quota admission refused them (model/quota/held.py)
    held_by_queue: int = 0  # pods of the Workloads Kueue holds back (no quota reserved: model/queues/)
    # shared replicas, MIG slices, other vendors (#35): what the GPU total is made of, what it leaves out
    gpu_words: HeaderWords = HeaderWords()
    gpu_free_replicas: int = 0  # of `gpu_free`, time-sliced/MPS replicas (not whole GPUs)
    kubernetes: str = ""  # "v1.35.4, no gang API": the server's version and what it does not serve, once

    def fresh(self, *kinds: str) -> Freshness:
        """Whether the figures counting `kinds` (every node figure's, GPUs included, when none given) are
        facts, pending or stale (model/freshness.py)."""
        if self.lists is None:
            return FACT
        return self.lists.freshness(depends(kinds or NODE_FIGURES, self.source_kinds))

    def known(self, *kinds: str) -> bool:
        """Whether the figures counting `kinds` have a complete list to count (pending: "…")."""
        return not self.fresh(*kinds).pending


EMPTY = Summary("", ConnectionState("connecting", 0.0), 0, 0, 0, Totals(0, 0, None), Totals(0, 0, None),
                Totals(0, 0, None), 0, 0, ())
STARTING = replace(EMPTY, lists=Lists())  # before the first refresh: nothing listed


def summarize(model: ClusterModel, largest_fit: np.ndarray | None = None, kinds: tuple[str, ...] = (),
              shapes: GpuShapes | None = None) -> Summary:
    """The header's figures; `largest_fit` (per node, GPUs) when the caller already has it; `kinds`:
    what the source lists (see `unlisted`); `shapes`: the unusual GPU nodes' (`gpu_units.shaped`)."""
    totals = model.totals()
    usage = model.usage
    used_cpu = used_mem = used_gpu = None
    if usage.nodes:
        cpus = [u.cpu for u in usage.nodes.values() if u.cpu is not None]
        mems = [u.memory for u in usage.nodes.values() if u.memory is not None]
        gpus = [g for u in usage.nodes.values() if u.gpu_util for g in u.gpu_util]
        used_cpu = sum(cpus) if cpus else None
        used_mem = sum(mems) if mems else None
        used_gpu = sum(gpus) / 100 if gpus else None  # busy GPUs, in GPU units

    def tot(resource: str, used: float | None) -> Totals:
        t = totals.get(resource) or {}
        return Totals(t.get("requested", 0), t.get("allocatable", 0), used)

    frag = model.fragmentation(GPU, largest_fit)
    waits = Counter(w.state for w in model.pod_waits().values())
    return Summary(
        title=model.title,
        kubernetes=title_words(model.server_version(), model.not_served, bool(model.scheduler_skew())),
        connection=model.connection,
        nodes=len(model.nodes),
        pods=len(model.shown_pods()),
        pending=model.pending_count(),
        cpu=tot("cpu", used_cpu),
        memory=tot("memory", used_mem),
        gpu=tot(GPU, used_gpu),
        gpu_free=frag.free_total,
        gpu_largest=frag.largest_fit,
        gpu_fits=tuple((s.size, s.placeable, s.ideal, s.fits_a_node) for s in frag.sizes),
        usage_error=usage.error,
        idle_gpus=idle_gpus(model),
        listing=tuple(sorted(model.listing.items())),
        lists=model.lists(),
        source_kinds=tuple(kinds),
        pending_nodes=waits[WAIT_NODES],
        pending_never=waits[WAIT_NEVER],
        held_by_quota=sum(h.not_created for k, h in model.held().items()
                          if model.display_namespace in (None, k[1])),
        held_by_queue=sum(n for ns, n in model.queues.held_pods().items() if model.display_namespace in (None, ns)),
        gpu_words=header_words(shapes) if shapes is not None else HeaderWords(),
        gpu_free_replicas=free_replicas(shapes) if shapes is not None else 0,
    )


def idle_gpus(model: ClusterModel) -> int | None:
    """How many allocated GPUs sit idle (see `kubeview.model.gpus.idle`); None when no GPU was measured."""
    if not any(u.gpu_util for u in model.usage.pods.values()):
        return None  # no DCGM data: skip the walk over every pod
    report = find_idle(model.pods.values(), model.usage.pods, dra=model.gpus.pod_devices(),
                       by_uuid=model.usage.gpus)
    return None if len(report.pods) == report.unmeasured_pods else report.idle_gpus


@dataclass(frozen=True, slots=True)
class Part:
    """One piece of a header line: `sep` before it (none for the first), its text, style and rank."""

    sep: str
    text: str
    style: str
    rank: int  # lower is kept longer: 0 always


def pending_parts(s: Summary) -> list[tuple[str, str]]:
    """What the pending pods wait for, as (text, style): only where an autoscaler or a quota said
    something ("3,600 pending" alone otherwise): "(46 room, 3,400 nodes, 154 never, +2 held by quota)" —
    room on the nodes there are, nodes being added, nothing that will come, and pods a quota kept from
    being created ("+": not among the pending pods, since they do not exist, but they wait all the same),
    and the pods of the Workloads Kueue holds in a queue ("+4 held by queue": their Jobs stay suspended)."""
    if not (s.pending_nodes or s.pending_never or s.held_by_quota or s.held_by_queue):
        return []
    room = max(0, s.pending - s.pending_nodes - s.pending_never)
    parts = [(f"{room:,} room", "dim")] if room else []
    if s.pending_nodes:
        parts.append((f"{s.pending_nodes:,} nodes", "cyan"))
    if s.pending_never:
        parts.append((f"{s.pending_never:,} never", "bold red"))
    if s.held_by_quota:
        parts.append((f"+{s.held_by_quota:,} held by quota", "bold red"))
    if s.held_by_queue:
        parts.append((f"+{s.held_by_queue:,} held by queue", "bold yellow"))
    return parts


def gpu_parts(s: Summary) -> list[Part]:
    """The GPU line after "GPUs ", most important first in rank: free and largest placeable, idle
    GPUs, sizes that lost room to fragmentation ("room for 0 (fragmented)": the free GPUs would hold
    more as whole blocks), the room per size, sizes that never fit."""
    if (fresh := s.fresh()).pending:  # no number from a partial list (#41)
        return [Part("", f"… ({fresh.why})", "dim", 0)]
    if not s.gpu.allocatable:
        return [Part("", "none in this cluster" + (" (only MIG slices or other vendors')" if s.gpu_words else ""),
                     "dim", 0)]
    replicas = f" ({s.gpu_free_replicas} shared replicas)" if s.gpu_free_replicas else ""
    parts = [Part("", f"{s.gpu_free} free{replicas}, largest placeable {s.gpu_largest}",
                  "bold red" if s.gpu_free and s.gpu_largest < min(s.gpu_free, 2) else "bold", 0)]
    if s.idle_gpus:
        parts.append(Part("│", f"{s.idle_gpus} allocated idle (<5%)", "bold red", 1))
    for k, placeable, ideal, fits_a_node in s.gpu_fits:
        if not fits_a_node:
            parts.append(Part("·", f"{k}-GPU pods never fit (no node has {k})", "dim", 5))
        elif placeable < ideal:
            parts.append(Part("·", f"{k}-GPU pods: room for {placeable} (fragmented)", "yellow", 2))
        elif placeable or ideal or k == 1:
            parts.append(Part("·", f"{k}-GPU pods: room for {placeable}", "dim", 3 if k == 1 else 4))
    return parts


MORE = Part("·", "…", "dim", 0)  # said where parts were dropped


def part_cells(part: Part) -> int:
    """Cells `part` takes on its line: " {sep} {text}", or its text alone when first."""
    return len(part.text) + (len(part.sep) + 2 if part.sep else 0)


def fit_parts(parts: list[Part], width: int) -> list[Part]:
    """The parts that fit in `width` cells, in their order: the highest rank dropped first (the
    later of equals), whole, and `MORE` after them when any was dropped."""
    kept = list(parts)
    while len(kept) > 1 and sum(map(part_cells, kept)) + (part_cells(MORE) if kept != parts else 0) > width:
        kept.remove(max(reversed(kept), key=lambda p: p.rank))
    return kept if kept == parts else [*kept, MORE]
