"""Nodes and the pods counted against them: the allocation table's rows, kept up to date per event.

`NodePods` is the model's store for the Node and Pod kinds (see model/kinds.py). A pod event
subtracts the pod's old requests from its node's row and adds the new ones, so one event costs
O(resources of one pod), never a rebuild; a relist rebuilds the sums in one vectorised pass. Pods
bound to a node not seen yet are remembered and counted when the node arrives.

"Requested" follows kube-scheduler: pods bound to the node (`spec.nodeName`) whose phase is not
Succeeded or Failed, Terminating ones included (their resources are held until they are gone).
"""

from __future__ import annotations

import bisect

import numpy as np

from kubeview.model.gcpause import gc_paused
from kubeview.model.gpus.ledger import GpuLedger
from kubeview.model.kinds import Calls
from kubeview.model.staged import Staged
from kubeview.model.table import NodeTable
from kubeview.model.views import TERMINAL_PHASES, NodeView, PodView

PodKey = tuple[str, str]


class NodePods:
    """Nodes, pods, and per node the pods counted against it, summed in a `NodeTable`."""

    def __init__(self, gpus: GpuLedger) -> None:
        self.nodes: dict[str, NodeView] = {}
        self.pods: dict[PodKey, PodView] = {}
        self.table = NodeTable()
        self.bound: dict[str, dict[PodKey, PodView]] = {}  # node name -> pods counted against it
        self.pending: dict[PodKey, PodView] = {}  # unbound, unfinished
        self._gpus = gpus  # told which nodes exist: a slice's devices count only while its node does
        self._order: list[str] | None = None  # sorted node names, None when the node set changed
        self._layout: tuple[np.ndarray, list[str], list[NodeView]] | None = None  # see layout()
        self._staged = Staged(self._staged_view)  # a pod list in progress, its views built per page
        self.node_kind = Calls(self.put_node, self.delete_node, self.replace_nodes)
        self.pod_kind = Calls(self.put_pod, self.delete_pod, self.replace_pods, self._staged.add)

    # -- nodes ---------------------------------------------------------------------------------
    def put_node(self, obj: dict) -> bool:
        return self._put_node(NodeView.from_api(obj))

    def delete_node(self, obj: dict) -> bool:
        return self._delete_node((obj.get("metadata") or {}).get("name", ""))

    def replace_nodes(self, objects: list[dict]) -> None:
        fresh = {v.name: v for v in map(NodeView.from_api, objects)}
        for name in [n for n in self.nodes if n not in fresh]:
            self._delete_node(name)
        for view in fresh.values():
            self._put_node(view)
        self._gpus.set_nodes(fresh)  # from now on a slice's devices count only while its node exists

    def _put_node(self, view: NodeView) -> bool:
        old = self.nodes.get(view.name)
        if old is not None and old.resource_version and old.resource_version == view.resource_version:
            return False
        t = self.table
        if old is None:
            self._gpus.node_added(view.name)
            r = t.add(view.name)
            t.set_node(r, view.capacity, view.allocatable)
            for pod in (self.bound.get(view.name) or {}).values():
                t.add_pod(r, pod.requests, pod.limits, 1)
            self._order = None
        else:
            r = t.row[view.name]
            if old.capacity != view.capacity or old.allocatable != view.allocatable:
                t.set_node(r, view.capacity, view.allocatable)
        self.nodes[view.name] = view
        self._layout = None if old is None else _with_view(self._layout, view)
        return True

    def _delete_node(self, name: str) -> bool:
        if self.nodes.pop(name, None) is None:
            return False
        self._gpus.node_deleted(name)  # its DRA devices go with it (the slices may stay a while)
        self.table.remove(name)  # its pods stay in bound: they count again if it comes back
        self._order = None
        self._layout = None
        return True

    def node_names(self) -> list[str]:
        """Node names in row order of the allocation (sorted)."""
        if self._order is None:
            self._order = sorted(self.nodes)
        return self._order

    def layout(self) -> tuple[np.ndarray, list[str], list[NodeView]]:
        """(table rows, names, views) in allocation order; kept until the node set or a node changes.
        Between node changes only pods move, so allocations share these lists (and never mutate them)."""
        if self._layout is None:
            names = self.node_names()
            self._layout = (self.table.rows_of(names), list(names), [self.nodes[n] for n in names])
        return self._layout

    # -- pods ----------------------------------------------------------------------------------
    def put_pod(self, obj: dict) -> bool:
        key = pod_key(obj)
        old = self.pods.get(key)
        if old is not None:
            rv = (obj.get("metadata") or {}).get("resourceVersion")
            if rv and old.resource_version == rv:
                return False
        view = PodView.from_api(obj)
        if old is not None:
            self._uncount(old)
        self.pods[key] = view
        self._count(view)
        return True

    def delete_pod(self, obj: dict) -> bool:
        old = self.pods.pop(pod_key(obj), None)
        if old is None:
            return False
        self._uncount(old)
        return True

    def _count(self, pod: PodView) -> None:
        node = pod.node
        if pod.phase in TERMINAL_PHASES:
            return
        if node is None:
            self.pending[pod.key] = pod
            return
        bound = self.bound.get(node)
        if bound is None:
            bound = self.bound[node] = {}
        bound[pod.key] = pod
        r = self.table.row.get(node)
        if r is not None:
            self.table.add_pod(r, pod.requests, pod.limits, 1)

    def _uncount(self, pod: PodView) -> None:
        node = pod.node
        if pod.phase in TERMINAL_PHASES:
            return
        if node is None:
            self.pending.pop(pod.key, None)
            return
        bound = self.bound.get(node)
        if bound is not None and bound.pop(pod.key, None) is not None:
            if not bound:
                del self.bound[node]
            r = self.table.row.get(node)
            if r is not None:
                self.table.add_pod(r, pod.requests, pod.limits, -1)

    def _staged_view(self, obj: dict) -> PodView:
        """A page's pod, built while the list is read: the view held now where it is of this very
        resourceVersion (a relist's unchanged pod), so `replace_pods` never needs more of `obj` than its
        identity, even if the held view changes before `Listed` (model/staged.py `slim`)."""
        meta = obj.get("metadata") or {}
        old = self.pods.get((meta.get("namespace", ""), meta.get("name", ""))) if self.pods else None
        if old is not None and old.resource_version and old.resource_version == meta.get("resourceVersion"):
            return old
        return PodView.from_api(obj)

    def replace_pods(self, objects: list[dict]) -> None:
        """Replace every pod: views reused where the resourceVersion is unchanged, sums rebuilt at once.

        Pods with the same container resources share one requests dict (requests.pod_amounts), so the
        per-pod work is a row index and a small-integer id; numpy adds the distinct vectors per row.
        A view built of the same object while the list was read (model/staged.py) is taken as is.
        """
        staged = self._staged.take(objects)
        old_pods = self.pods
        pods: dict[PodKey, PodView] = {}
        bound: dict[str, dict[PodKey, PodView]] = {}
        pending: dict[PodKey, PodView] = {}
        rows: list[int] = []
        req_ids: list[int] = []
        lim_ids: list[int] = []
        ids: dict[int, int] = {}
        distinct: list[dict[str, int]] = []
        row_of = self.table.row
        from_api = PodView.from_api
        with gc_paused():
            for obj, pre in zip(objects, staged, strict=True):
                meta = obj.get("metadata") or {}
                key = (meta.get("namespace", ""), meta.get("name", ""))
                view = old_pods.get(key) if old_pods else None
                if view is None or not view.resource_version or view.resource_version != meta.get("resourceVersion"):
                    view = pre if isinstance(pre, PodView) else from_api(obj)  # staged: a view of this obj
                pods[key] = view
                if view.phase in TERMINAL_PHASES:
                    continue
                node = view.node
                if node is None:
                    pending[key] = view
                    continue
                on_node = bound.get(node)
                if on_node is None:
                    on_node = bound[node] = {}
                on_node[key] = view
                r = row_of.get(node)
                if r is None:
                    continue
                rows.append(r)
                amounts = view.requests
                i = ids.get(id(amounts))
                if i is None:
                    i = ids[id(amounts)] = len(distinct)
                    distinct.append(amounts)
                req_ids.append(i)
                amounts = view.limits
                i = ids.get(id(amounts))
                if i is None:
                    i = ids[id(amounts)] = len(distinct)
                    distinct.append(amounts)
                lim_ids.append(i)
            self.table.set_pod_sums(rows, req_ids, lim_ids, distinct)
        self.pods, self.bound, self.pending = pods, bound, pending


def _with_view(layout: tuple[np.ndarray, list[str], list[NodeView]] | None,
               view: NodeView) -> tuple[np.ndarray, list[str], list[NodeView]] | None:
    """The layout with one node's view swapped (same node set, same rows): a copy of the views list,
    which earlier allocations still hold, instead of a new layout (a kubelet's heartbeat per node
    every few seconds at 5,000 nodes)."""
    if layout is None:
        return None
    rows, names, views = layout
    i = bisect.bisect_left(names, view.name)
    if i == len(names) or names[i] != view.name:
        return None
    views = list(views)
    views[i] = view
    return rows, names, views


def pod_key(obj: dict) -> PodKey:
    meta = obj.get("metadata") or {}
    return (meta.get("namespace", ""), meta.get("name", ""))
