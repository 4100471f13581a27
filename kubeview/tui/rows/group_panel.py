"""A node group opened from the Capacity screen (Enter): its nodes and the pods waiting on it.

Nodes: each with Ready, cpu and memory requested of allocatable, GPUs and its pods (a NodePool's
NodeClaims still on their way are listed under them, with their stage and the cloud's words when one
failed). Pods: those an autoscaler said wait on this group, grouped by workload, each group with the
words most of its pods carry, and their names (the first `SHOWN_PODS` of each). Pure: values in,
Rich markup out (the screen wraps long lines to its width).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from rich.markup import escape

from kubeview.model.autoscaling.groups import NodeGroup, PodWait
from kubeview.model.autoscaling.karpenter import NodeClaimView
from kubeview.model.autoscaling.words import group_state, what
from kubeview.tui import format as fmt
from kubeview.tui.rows.capacity import WHO_LONG

SHOWN_PODS = 12  # names listed per workload, then "+n more"


@dataclass(frozen=True, slots=True)
class NodeLine:
    name: str
    ready: bool
    cpu: tuple[int, int]  # requested, allocatable (millicores)
    memory: tuple[int, int]
    gpus: tuple[int, int]
    pods: int


def describe(group: NodeGroup | None, key: tuple[str, str], nodes: Sequence[NodeLine],
             waiting: Mapping[tuple[str, str], tuple[tuple[str, str] | None, PodWait]],
             claims: Sequence[NodeClaimView], now: float) -> str:
    """The whole panel; `waiting`: pod key -> (its owner (kind, name) or None, its wait)."""
    if group is None:
        return f"[b]node group {escape(key[1])}[/b] ({escape(key[0])})\n\n[dim]this node group is gone[/dim]"
    _, words = group_state(group, now)
    lines = [f"[b]{escape(what(group))}[/b] ({escape(WHO_LONG.get(group.autoscaler, group.autoscaler))}): "
             f"{escape(words)}"]
    about = [f"{group.size} node{'s' * (group.size != 1)}"]
    if group.min_size is not None or group.max_size is not None:
        about.append(f"min {'-' if group.min_size is None else group.min_size} · max "
                     f"{'-' if group.max_size is None else group.max_size}")
    if group.target is not None:
        about.append(f"target {group.target}")
    if group.can_add is not None:
        about.append(f"can add {group.can_add}")
    about += [f"{lim.resource} {lim.used}/{lim.limit}" for lim in group.limits if lim.resource != "nodes"]
    if group.gpus:
        about.append(f"{group.gpus} GPUs")
    lines.append(escape(" · ".join(about)))
    if group.error:
        lines.append(f"[red]last error: {escape(group.error)}[/red]")
    lines += ["", f"[b]Nodes[/b] ({len(nodes)})"]
    if not nodes:
        lines.append("  [dim]none yet[/dim]")
    width = max((len(n.name) for n in nodes), default=0)
    for n in nodes:
        state = "[green]Ready[/green]   " if n.ready else "[red]NotReady[/red]"
        gpu = f" · GPU {n.gpus[0]}/{n.gpus[1]}" if n.gpus[1] else ""
        lines.append(f"  {escape(n.name.ljust(width))}  {state}  cpu {fmt.cpu(n.cpu[0])}/{fmt.cpu(n.cpu[1])}"
                     f" · mem {fmt.mem(n.memory[0])}/{fmt.mem(n.memory[1])}{gpu} · {fmt.counted(n.pods, 'pod')}")
    coming = [c for c in claims if not c.node or c.node not in {n.name for n in nodes}]
    if coming:
        lines += ["", f"[b]NodeClaims on their way[/b] ({len(coming)})"]
        for c in coming:
            failed = c.failure
            said = f" [red]{escape(failed.message or failed.reason)}[/red]" if failed is not None else ""
            lines.append(f"  {escape(c.name)}  {escape(c.stage)}{said}")
    lines += ["", f"[b]Pods waiting on it[/b] ({len(waiting)})"]
    if not waiting:
        lines.append("  [dim]none[/dim]")
    by_owner: dict[str, list[tuple[str, str]]] = {}
    for pod, (owner, _) in sorted(waiting.items()):
        label = f"{owner[0]} {pod[0]}/{owner[1]}" if owner is not None else f"Pod {pod[0]}/{pod[1]}"
        by_owner.setdefault(label, []).append(pod)
    for label, pods in sorted(by_owner.items(), key=lambda kv: (-len(kv[1]), kv[0])):
        said = Counter(waiting[p][1].words for p in pods).most_common(1)[0][0]
        lines.append(f"  [b]{escape(label)}[/b]: {len(pods)} · {escape(said)}")
        names = [p[1] for p in pods[:SHOWN_PODS]]
        more = f", +{len(pods) - SHOWN_PODS} more" if len(pods) > SHOWN_PODS else ""
        lines.append(f"    [dim]{escape(', '.join(names))}{more}[/dim]")
    return "\n".join(lines)
