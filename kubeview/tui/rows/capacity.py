"""The Capacity screen's table: one row per node group (Cluster Autoscaler's, Karpenter's NodePools, the
embedded cluster's), its size against its limits, and the pods waiting on it. Pure (rich only).

Each figure has its own header: NODES is the size now (and where it is going, `0→6`); LIMITS the CA
group's range (`min 0 max 6`) or a NodePool's nearest limit used/limit (`nvidia.com/gpu 48/48`); GPUS what its
nodes hold; WAIT the pods an autoscaler said wait on it (`model.pod_waits`, their `group`); STATE one
word (`model/autoscaling/words.py`: scaling, at-max, at-limit, failed, backoff, steady) and WHY its
words, the cloud's own when a scale-up failed.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable, Mapping
from dataclasses import dataclass, field

from rich.text import Text

from kubeview.model.autoscaling.groups import (
    CLUSTER_AUTOSCALER,
    EMBEDDED,
    KARPENTER,
    WAIT_NEVER,
    NodeGroup,
    PodWait,
)
from kubeview.model.autoscaling.words import (
    AT_LIMIT,
    AT_MAX,
    BACKOFF,
    FAILED,
    SCALING,
    group_state,
    limit_words,
)
from kubeview.model.autoscaling.words import nearest_limit as nearest
from kubeview.tui.rows.column import Column

Key = tuple[str, str]  # NodeGroup.key: (autoscaler, name)
WHO = {CLUSTER_AUTOSCALER: "CA", KARPENTER: "Karpenter", EMBEDDED: "embedded"}
WHO_LONG = {CLUSTER_AUTOSCALER: "Cluster Autoscaler", KARPENTER: "Karpenter",
            EMBEDDED: "the embedded cluster's, in Cluster Autoscaler's formats"}
COLUMNS = [
    Column("who", "AUTOSCALER", 10, least=9, short="BY"),
    Column("name", "NAME", 0, whole=True),
    Column("nodes", "NODES", 7, "right", least=5),
    Column("range", "LIMITS", 0, whole=True, least=11),  # `min 0 max 6` whole: WHY gives first
    Column("gpus", "GPUS", 5, "right", least=4),
    Column("wait", "WAIT", 6, "right", least=4),
    Column("state", "STATE", 9, least=8),  # "at-limit" whole
    Column("why", "WHY", 0, point=lambda text: text[:WHY_POINT]),
]
WHY_POINT = 28  # kept before names are cut: "batch-pool is at its maximum 6"
STATE_STYLE = {SCALING: "cyan", AT_MAX: "bold yellow", AT_LIMIT: "bold yellow", FAILED: "bold red",
               BACKOFF: "yellow"}


@dataclass(slots=True)
class CapacityRows:
    """What the table shows: the groups in order and the pods waiting on each."""

    groups: dict[Key, NodeGroup] = field(default_factory=dict)
    waiting: dict[Key, list[tuple[str, str]]] = field(default_factory=dict)  # pods, by key
    never: Counter[Key] = field(default_factory=Counter)  # of those, told no node will come
    now: float = 0.0


def build(groups: list[NodeGroup], waits: Mapping[tuple[str, str], PodWait], now: float) -> CapacityRows:
    out = CapacityRows(groups={g.key: g for g in groups}, now=now)
    for pod, wait in sorted(waits.items()):
        if wait.group is None or wait.group not in out.groups:
            continue
        out.waiting.setdefault(wait.group, []).append(pod)
        if wait.state == WAIT_NEVER:
            out.never[wait.group] += 1
    return out


def size_text(g: NodeGroup) -> str:
    """`6`, or `0→6` while it grows toward its target."""
    to = g.scale_up.to_size if g.scale_up is not None else g.target
    return f"{g.size}→{to}" if to is not None and to != g.size else str(g.size)


def range_text(g: NodeGroup) -> str:
    """A CA group's `min 0 max 6`; a NodePool's nearest limit (`nvidia.com/gpu 48/48`), `no limits`."""
    if g.autoscaler != KARPENTER:
        if g.max_size is None:
            return ""
        return f"{'' if g.min_size is None else f'min {g.min_size} '}max {g.max_size}"
    limit = nearest(g)
    return limit_words(limit) if limit is not None else "no limits"


def search_text(g: NodeGroup) -> str:
    return f"{g.autoscaler} {WHO.get(g.autoscaler, '')} {g.name} {group_state(g, 0.0)[0]}".lower()


def order(data: CapacityRows, needle: str = "") -> list[Key]:
    """Groups matching the filter, those with pods waiting first, then by (autoscaler, name)."""
    keys = [k for k, g in data.groups.items() if not needle or needle in search_text(g)]
    return sorted(keys, key=lambda k: (-len(data.waiting.get(k, ())), k))


def stamp(data: CapacityRows, key: Key) -> Hashable:
    g = data.groups.get(key)
    if g is None:
        return None
    return (g.autoscaler, g.name, size_text(g), range_text(g), g.gpus, g.at_limit is not None, g.scale_up is not None,
            len(data.waiting.get(key, ())), data.never[key], group_state(g, data.now))  # what its cells show


def cells(data: CapacityRows, key: Key) -> list[Text | str]:
    g = data.groups.get(key)
    if g is None:
        return [WHO.get(key[0], key[0]), Text(key[1], style="strike dim")]
    state, words = group_state(g, data.now)
    waiting = len(data.waiting.get(key, ()))
    limit = g.at_limit
    return [
        WHO.get(g.autoscaler, g.autoscaler),
        Text(g.name, style="bold"),
        Text(size_text(g), style="cyan" if g.scale_up is not None else ""),
        Text(range_text(g), style="bold yellow" if limit is not None else ""),
        Text(str(g.gpus), style="" if g.gpus else "dim"),
        Text(str(waiting), style=("bold yellow" if data.never[key] else "cyan") if waiting else "dim"),
        Text(state, style=STATE_STYLE.get(state, "dim")),
        Text(words, style="red" if state == FAILED else "yellow" if state in (AT_MAX, AT_LIMIT, BACKOFF) else "dim"),
    ]
