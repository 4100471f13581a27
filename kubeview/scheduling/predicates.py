"""kube-scheduler's node filters other than resource fit, vectorised over a NodeIndex.

Each returns a bool array over nodes (True = the node passes; read-only: it may be the index's shared
all-True array), with kube-scheduler's semantics:
NodeUnschedulable (tolerating `node.kubernetes.io/unschedulable:NoSchedule` lets a pod on a cordoned
node), TaintToleration (NoSchedule/NoExecute taints against `Toleration.ToleratesTaint`), and
NodeAffinity (`spec.nodeSelector` AND required node affinity, whose terms are ORed and whose
expressions are ANDed).
"""

from __future__ import annotations

from typing import cast

import numpy as np

from kubeview.scheduling.node_index import NodeIndex

UNSCHEDULABLE_TAINT = ("node.kubernetes.io/unschedulable", "", "NoSchedule")


def tolerates(toleration: dict, key: str, value: str, effect: str) -> bool:
    """`v1.Toleration.ToleratesTaint`: empty effect matches all effects, empty key with Exists all keys."""
    t_effect = toleration.get("effect") or ""
    if t_effect and t_effect != effect:
        return False
    t_key = toleration.get("key") or ""
    if t_key and t_key != key:
        return False
    operator = toleration.get("operator") or "Equal"
    if operator == "Exists":
        return True
    if operator == "Equal":
        return (toleration.get("value") or "") == value
    return False


def _tolerated(tolerations: list[dict], taint: tuple[str, str, str]) -> bool:
    return any(tolerates(t, *taint) for t in tolerations)


def schedulable(index: NodeIndex, tolerations: list[dict]) -> np.ndarray:
    """NodeUnschedulable: cordoned nodes fail unless the pod tolerates the unschedulable taint."""
    if not index.any_unschedulable or _tolerated(tolerations, UNSCHEDULABLE_TAINT):
        return index.everywhere
    return ~index.unschedulable


def taints_tolerated(index: NodeIndex, tolerations: list[dict]) -> np.ndarray:
    """TaintToleration: every NoSchedule/NoExecute taint of the node is tolerated."""
    if not index.taints:
        return index.everywhere
    untolerated = np.array([not _tolerated(tolerations, taint) for taint in index.taints], dtype=bool)
    if not untolerated.any():
        return index.everywhere
    return ~cast(np.ndarray, index.tainted[:, untolerated].any(axis=1))  # 2-D: a row per node


def _in(index: NodeIndex, key: str, values: list[str]) -> np.ndarray:
    column = index.label(key)
    codes = [column.values[v] for v in values if v in column.values]
    if not codes:
        return np.zeros(len(index.names), dtype=bool)
    if len(codes) == 1:
        return column.codes == codes[0]
    return np.isin(column.codes, codes)


def _requirement(index: NodeIndex, expr: dict) -> np.ndarray:
    """One NodeSelectorRequirement on labels; an invalid one matches no node (as kube treats it)."""
    key, operator = expr.get("key", ""), expr.get("operator", "")
    values = [str(v) for v in expr.get("values") or []]
    n = len(index.names)
    if operator == "In":
        return _in(index, key, values)
    if operator == "NotIn":
        return ~_in(index, key, values)
    if operator == "Exists":
        return index.label(key).codes >= 0
    if operator == "DoesNotExist":
        return index.label(key).codes < 0
    if operator in ("Gt", "Lt") and len(values) == 1:
        try:
            bound = int(values[0], 10)
        except ValueError:
            return np.zeros(n, dtype=bool)
        numbers = index.label_numbers(key)
        with np.errstate(invalid="ignore"):
            return numbers > bound if operator == "Gt" else numbers < bound
    return np.zeros(n, dtype=bool)


def _field_requirement(index: NodeIndex, expr: dict) -> np.ndarray:
    """matchFields: only `metadata.name` with In/NotIn exists for nodes."""
    n = len(index.names)
    if expr.get("key") != "metadata.name" or expr.get("operator") not in ("In", "NotIn"):
        return np.zeros(n, dtype=bool)
    hit = np.zeros(n, dtype=bool)
    for name in expr.get("values") or []:
        row = index.row.get(name)
        if row is not None:
            hit[row] = True
    return hit if expr["operator"] == "In" else ~hit


def _term(index: NodeIndex, term: dict) -> np.ndarray:
    exprs, fields = term.get("matchExpressions") or [], term.get("matchFields") or []
    if not exprs and not fields:
        return np.zeros(len(index.names), dtype=bool)  # an empty term matches nothing
    out = np.ones(len(index.names), dtype=bool)
    for expr in exprs:
        out &= _requirement(index, expr)
    for expr in fields:
        out &= _field_requirement(index, expr)
    return out


def affinity_matches(index: NodeIndex, node_selector: dict[str, str], affinity: dict) -> np.ndarray:
    """NodeAffinity filter: nodeSelector labels all equal, and any required nodeSelectorTerm matches."""
    required = ((affinity or {}).get("nodeAffinity") or {}).get("requiredDuringSchedulingIgnoredDuringExecution")
    if not node_selector and required is None:
        return index.everywhere
    out = np.ones(len(index.names), dtype=bool)
    for key, value in node_selector.items():
        out &= _in(index, key, [str(value)])
    if required is not None:
        terms = required.get("nodeSelectorTerms") or []
        any_term = np.zeros(len(index.names), dtype=bool)
        for term in terms:
            any_term |= _term(index, term)
        out &= any_term
    return out
