"""Per-node facts the filters need (labels, taints, names), laid out as numpy arrays once per node set.

A pod's tolerations and selectors are then checked against the few *distinct* taints and label values
in the cluster, and broadcast to all nodes with array operations: no Python loop over 5,000 nodes per
pod. An index is built once per node set (see `index_for`) and reused while the nodes stay the same.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

import numpy as np

from kubeview.model.allocation import Allocation
from kubeview.model.views import NodeView

FILTER_EFFECTS = ("NoSchedule", "NoExecute")  # PreferNoSchedule only matters to scoring


@dataclass(slots=True)
class LabelColumn:
    """One label key over all nodes: value codes (-1 where the node lacks the label)."""

    codes: np.ndarray  # int32 (N,)
    values: dict[str, int]  # label value -> code
    numbers: np.ndarray | None = None  # float64 (N,), NaN where absent or not an integer (for Gt/Lt)


@dataclass(slots=True)
class NodeIndex:
    names: list[str]
    row: dict[str, int]  # node name -> row
    name_rank: np.ndarray  # int64 (N,): position of the node's name in sorted order (tie-breaks)
    unschedulable: np.ndarray  # bool (N,)
    taints: list[tuple[str, str, str]]  # distinct (key, value, effect) of filtering taints
    tainted: np.ndarray  # bool (N, T): node carries taint t
    views: list[NodeView]
    everywhere: np.ndarray  # bool (N,) all True, read-only: "every node passes"
    any_unschedulable: bool
    _labels: dict[str, LabelColumn] = field(default_factory=dict)
    encoded: dict[str, object] = field(default_factory=dict)  # per-node wire encodings (protocol.py), built once

    @classmethod
    def build(cls, names: list[str], views: list[NodeView]) -> NodeIndex:
        n = len(names)
        distinct: dict[tuple[str, str, str], int] = {}
        pairs: list[tuple[int, int]] = []
        for i, view in enumerate(views):
            for taint in view.taints:
                effect = taint.get("effect", "")
                if effect not in FILTER_EFFECTS:
                    continue
                key = (taint.get("key", ""), taint.get("value", "") or "", effect)
                pairs.append((i, distinct.setdefault(key, len(distinct))))
        tainted = np.zeros((n, len(distinct)), dtype=bool)
        if pairs:
            rows, cols = np.array(pairs).T
            tainted[rows, cols] = True
        order = sorted(range(n), key=names.__getitem__)
        rank = np.empty(n, dtype=np.int64)
        rank[order] = np.arange(n)
        unschedulable = np.fromiter((v.unschedulable for v in views), dtype=bool, count=n)
        everywhere = np.ones(n, dtype=bool)
        everywhere.flags.writeable = False
        return cls(
            names=list(names),
            row={name: i for i, name in enumerate(names)},
            name_rank=rank,
            unschedulable=unschedulable,
            taints=list(distinct),
            tainted=tainted,
            views=list(views),
            everywhere=everywhere,
            any_unschedulable=bool(unschedulable.any()),
        )

    def with_views(self, views: list[NodeView]) -> NodeIndex:
        """This index around other views of the same nodes, whose filter facts (labels, taints,
        unschedulable) are the same at every row: every array and label column is shared. A node's
        status heartbeat (conditions, a resourceVersion) makes a new NodeView and a new Allocation
        but changes nothing a filter reads; rebuilding the index for it cost the extender ~15 ms of
        a 5,000-node cluster on the scheduling cycle's path, several times a second."""
        return NodeIndex(names=self.names, row=self.row, name_rank=self.name_rank, unschedulable=self.unschedulable,
                         taints=self.taints, tainted=self.tainted, views=list(views), everywhere=self.everywhere,
                         any_unschedulable=self.any_unschedulable, _labels=self._labels, encoded=self.encoded)

    def label(self, key: str) -> LabelColumn:
        """The column of one label key, built on first use (selectors name few keys)."""
        column = self._labels.get(key)
        if column is None:
            values: dict[str, int] = {}
            codes = np.fromiter(
                (values.setdefault(v.labels[key], len(values)) if key in v.labels else -1 for v in self.views),
                dtype=np.int32, count=len(self.views),
            )
            column = LabelColumn(codes=codes, values=values)
            self._labels[key] = column
        return column

    def label_numbers(self, key: str) -> np.ndarray:
        """Label values as integers for Gt/Lt (NaN where absent or not an integer), built on first use."""
        column = self.label(key)
        if column.numbers is None:
            lookup = np.full(len(column.values) + 1, np.nan)
            for value, code in column.values.items():
                parsed = _integer(value)
                if parsed is not None:
                    lookup[code] = parsed
            column.numbers = lookup[column.codes]  # code -1 reads the trailing NaN
        return column.numbers


def _integer(text: str) -> int | None:
    try:
        return int(text, 10)
    except ValueError:
        return None


_RECENT: list[NodeIndex] = []  # most recent first
_RECENT_SIZE = 4
_LOCK = threading.Lock()
_LAST: tuple[Allocation, list, int, NodeIndex] | None = None  # (alloc, its views list, its length, index)


def index_for(alloc: Allocation) -> NodeIndex:
    """The NodeIndex for an Allocation's nodes, reused while its names and views are the same objects.

    Asking again for the same Allocation object is a pointer check (Allocations are read-only once
    built, as the model builds them). Otherwise the check is a list comparison (identity first, ~20 us
    for 5,000 nodes), so a new Allocation around the same views, or one with a NodeView swapped, still
    gets a correct index. New views with the same filter facts at every row (a heartbeat) share the
    newest such index's arrays (`NodeIndex.with_views`); anything a filter reads changed: a new build.
    """
    global _LAST
    last = _LAST
    if last is not None and last[0] is alloc and last[1] is alloc.views and last[2] == len(alloc.views):
        return last[3]
    found = similar = None
    with _LOCK:
        for index in _RECENT:
            if len(index.views) != len(alloc.views) or index.names != alloc.nodes:
                continue
            if index.views == alloc.views:
                found = index
                break
            if similar is None and same_filter_facts(index.views, alloc.views):
                similar = index
    if found is None:
        found = similar.with_views(alloc.views) if similar is not None else NodeIndex.build(alloc.nodes, alloc.views)
        with _LOCK:
            _RECENT.insert(0, found)
            del _RECENT[_RECENT_SIZE:]
    _LAST = (alloc, alloc.views, len(alloc.views), found)
    return found


def same_filter_facts(old: list[NodeView], new: list[NodeView]) -> bool:
    """Row by row, what an index is built from is equal (a view that is the same object is)."""
    for a, b in zip(old, new, strict=True):
        if a is not b and (a.unschedulable != b.unschedulable or a.taints != b.taints or a.labels != b.labels):
            return False
    return True
