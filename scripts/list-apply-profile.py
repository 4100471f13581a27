"""The CPU kubeview spends on a big pod list after its bytes arrived, in-process (#41 item 2).

Generates `bench model`'s cluster (5,000 nodes / 150,000 pods by default), encodes the pods as the API
server's PodList pages (5,000 each, `metadata.continue` on all but the last), then does what the TUI's
source thread does with them: each page decoded by `pod_wire.pod_list` with the collector paused
(`gc_paused(keep=True)`, as `watch.Informer._list`), a `Listing` per page and the `Listed` at the end
emitted into the TUI's `ClusterState`, then the first Nodes screen's data (the header's `summarize`
and the node rows' `rows.build`, as app.refresh_state and NodesScreen do), then the Pods screen's
index (read after the first screen). Prints CPU seconds
(`time.process_time`) per phase; `--profile N` prints cProfile's top N functions of the apply phases.
Also prints the process's VmRSS at each step and its peak (VmHWM) above what it held with the nodes
listed (#41 item 3: the list's memory after `Listed`); `--relist` lists the pods once more on top of
the built state, as after a watch's 410, and prints the same; `--keep-pages` keeps each page whole
until `Listed`, as before #41's `slim` (model/staged.py).

Run against a tree by PYTHONPATH (the tree imported is printed):
  PYTHONPATH=/work/main .venv/bin/python scripts/list-apply-profile.py
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import json
import os
import pstats
import time
from collections.abc import Callable
from typing import TypeVar

import kubeview
from kubeview.bench.model_cluster import GPU_NODES, NODES, PODS, Cluster
from kubeview.cluster.kube import pod_wire
from kubeview.model.events import Listed, Listing
from kubeview.model.freshness import NODE_FIGURES, depends
from kubeview.model.gcpause import gc_paused
from kubeview.tui.format import GPU
from kubeview.tui.rows import nodes as node_rows
from kubeview.tui.rows.gpu_units import shaped
from kubeview.tui.state import ClusterState
from kubeview.tui.summary import summarize

T = TypeVar("T")
HAS_PAGE = "page" in getattr(Listing, "__dataclass_fields__", {})  # main before #41's per-page build: no
KINDS = ("Node", "Pod", "ReplicaSet")  # what this run lists: the figures' freshness depends on these


def pages(pods: list[dict], size: int) -> list[bytes]:
    """The pods as PodList pages of `size`, as the API server writes them (metadata first)."""
    out = []
    for start in range(0, len(pods), size):
        last = start + size >= len(pods)
        meta: dict = {"resourceVersion": "90000"}
        if not last:
            meta["continue"] = f"token-{start + size}"
            meta["remainingItemCount"] = len(pods) - start - size
        out.append(json.dumps({"kind": "PodList", "apiVersion": "v1", "metadata": meta,
                               "items": pods[start:start + size]}, separators=(",", ":")).encode())
    return out


def vm(field: str) -> float:
    """MiB of /proc/self/status's `field` (VmRSS, VmHWM)."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024
    return 0.0


def run(nodes: int, pods: int, page: int, profile: int, relist: bool, keep_pages: bool = False) -> None:
    print(f"tree: {os.path.dirname(os.path.dirname(kubeview.__file__))}  load: {os.getloadavg()}")
    cluster = Cluster(nodes, min(GPU_NODES, nodes // 10), pods)
    data = pages(cluster.pods(), page)
    node_list, rs_list = cluster.nodes(), cluster.replicasets()
    print(f"{nodes:,} nodes, {pods:,} pods in {len(data)} pages ({sum(map(len, data)) / 2**20:.0f} MiB)")
    gc.collect()
    gc.freeze()  # the generator's objects: kept out of the walks, as a real process never had them

    state = ClusterState("bench")
    state.model.slim_pages = not keep_pages  # kept whole: as a model that does not own its events
    state.emit(Listed("Node", node_list, "1"))
    state.emit(Listed("ReplicaSet", rs_list, "1"))
    gc.collect()
    with open("/proc/self/clear_refs", "w") as f:  # VmHWM from here: not the generator's own peak
        f.write("5")
    base = vm("VmRSS")
    memory: list[str] = []

    def mem(step: str) -> None:
        memory.append(f"{step} +{vm('VmRSS') - base:,.0f}")

    prof = cProfile.Profile() if profile else None
    cpu: dict[str, float] = {"decode": 0.0, "per page": 0.0}

    def timed(phase: str, work: Callable[[], T]) -> T:
        t0 = time.process_time()
        if prof is not None and phase != "decode":
            prof.enable()
        try:
            return work()
        finally:
            if prof is not None:
                prof.disable()
            cpu[phase] = cpu.get(phase, 0.0) + time.process_time() - t0

    def decode(raw: bytes) -> dict:
        with gc_paused(keep=True):  # watch.Informer._list: a page over PAUSE_BYTES
            return pod_wire.pod_list(raw)

    def list_pods(phase: str) -> None:  # watch.Informer._list, without the HTTP
        as_of = time.time()
        state.emit(Listing("Pod", 0, as_of))
        items: list[dict] = []
        rv = ""
        for raw in data:
            got = timed("decode", lambda raw=raw: decode(raw))  # type: ignore[misc]
            page_items = got.get("items") or ()
            items.extend(page_items)
            meta = got.get("metadata") or {}
            rv = meta.get("resourceVersion", rv)
            if not meta.get("continue"):
                break
            event = Listing("Pod", len(items), as_of, page_items) if HAS_PAGE else Listing("Pod", len(items), as_of)
            timed("per page", lambda event=event: state.emit(event))  # type: ignore[misc]
            del got, page_items, event
        mem(f"{phase}: pages read")
        timed(phase, lambda: state.emit(Listed("Pod", items, rv)))
        mem(f"{phase}: applied")
        timed("dropped", items.clear)  # the informer's list goes with its `_list` (the dicts' frees)

    mem("nodes listed")
    list_pods("Listed")
    mem("list dropped")

    def first_screen() -> None:  # app.refresh_state's header, then NodesScreen.update_from_state
        with state.lock:
            model = state.model
            fit = state.memo("gpu_fit", lambda: model.largest_fit(GPU))
            shapes = state.memo("gpu_shaped", lambda: shaped(model))
            summary = summarize(model, fit, KINDS, shapes)
            fresh = model.lists().freshness(depends(NODE_FIGURES, KINDS))
            built = node_rows.build(model, fit, {}, shapes, fresh)
        assert summary.nodes == nodes and len(built.names) == nodes and fresh.state == "fact", (summary, fresh)
        print(f"first screen: {summary.nodes:,} nodes, {summary.pods:,} pods, {summary.pending:,} pending, "
              f"cpu {summary.cpu.requested}/{summary.cpu.allocatable}, GPUs {summary.gpu.requested}"
              f"/{summary.gpu.allocatable}, {int(built.pods.sum()):,} pods on nodes")

    timed("first screen", first_screen)
    # the Pods screen's index, read after the first screen (app._warm_screens, or a visit): this tree
    # builds it at its first read, not in Listed (tui/state.py); main built it in Listed (then ~0 here)
    timed("pods index", lambda: len(state.pods_by_name) + len(state.pod_search))
    mem("screens built")
    if relist:
        hwm = vm("VmHWM")
        list_pods("relist")
        mem("relist dropped")
        memory.append(f"relist peak +{vm('VmHWM') - base:,.0f} (before it +{hwm - base:,.0f})")
    memory.append(f"peak +{vm('VmHWM') - base:,.0f}")
    print(f"MiB above the nodes-listed state ({base:,.0f} MiB RSS, the generator's pages among it): "
          + "; ".join(memory))
    after = cpu["Listed"] + cpu["first screen"]  # decode and per page overlap the next page's transfer
    print("cpu s: " + "  ".join(f"{k} {v:.2f}" for k, v in cpu.items()) + f"  | after the last page {after:.2f}")
    if prof is not None:
        pstats.Stats(prof).sort_stats("cumulative").print_stats(profile)
        pstats.Stats(prof).sort_stats("tottime").print_stats(profile)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--nodes", type=int, default=NODES, help="nodes (default %(default)s)")
    parser.add_argument("--pods", type=int, default=PODS, help="pods (default %(default)s)")
    parser.add_argument("--page", type=int, default=5000, help="pods per list page (default %(default)s)")
    parser.add_argument("--profile", type=int, default=0, metavar="N",
                        help="cProfile the apply phases, print the top N functions")
    parser.add_argument("--relist", action="store_true",
                        help="list the pods again over the built state (a relist after a 410) and print its memory")
    parser.add_argument("--keep-pages", action="store_true",
                        help="the model keeps each page whole until Listed (as the extender's feed, which reads "
                             "them after it) instead of cutting it to its identities once built")
    args = parser.parse_args()
    run(args.nodes, args.pods, args.page, args.profile, args.relist, args.keep_pages)


if __name__ == "__main__":
    main()
