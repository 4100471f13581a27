"""A gang's panel (Enter on a gang row): the group, each member where it is or why it waits, and the fit.

The members' words are their own (each pending pod's PodScheduled=False reason and message, as the
scheduler wrote them); the group's condition and shared claims are the object's. The fit is
`scheduling.gang_fit.fit_of`, the one implementation the embedded scheduler, `snapshot` and
`kubeview fit` use: whether the whole gang can be placed together now under the live policy, one
placement if so, and if not what blocks it: room for how many, the largest free block per node, the
nodes saturated (took members, then refused the rest) and excluded (took none) with their reasons.
Pure: model objects in, Rich markup out (the screen wraps long lines to its width).
"""

from __future__ import annotations

from collections import Counter

from rich.markup import escape

from kubeview.model.gangs.store import Gang
from kubeview.scheduling.gang_fit import GangFit
from kubeview.tui.format import hanging
from kubeview.tui.rows.gangs import STATE_STYLE, members_line

SHOWN_NODES = 4  # node names listed per exclusion reason, then "+n more"
MEMBER_STYLE = {"running": "green", "placed": "cyan", "pending": "yellow", "finished": "dim"}


def describe(g: Gang | None, key: tuple[str, str, str], fit: GangFit | None, policy: str,
             claim_nodes: dict[str, str | None] | None = None, width: int | None = None) -> str:
    """The whole panel as markup; `fit` None: not computed (no member exists); `claim_nodes`: each shared
    claim's node (None: not allocated yet); a member's reason wraps under its column at `width`."""
    if g is None:
        return f"[b]{escape(key[0])} {escape(key[1])}/{escape(key[2])}[/b]\n\n[dim]this gang is gone[/dim]"
    state = STATE_STYLE.get(g.state, "")
    lines = [f"[b]{escape(g.kind)} {escape(g.namespace)}/{escape(g.name)}[/b]  [{state}]{g.state}[/]",
             escape(members_line(g))]
    about = [f"scheduler {g.scheduler} ({g.api_version})"]
    if g.workload:
        about.append(f"workload {g.workload}" + (f" (owner {g.owner})" if g.owner else ""))
    if g.queue:
        about.append(f"queue {g.queue}")
    if g.disruption_mode:
        about.append(f"disruptionMode {g.disruption_mode}")
    if g.topology_key:  # 1.37 TopologyAwareWorkloadScheduling: every member inside one domain of the label
        about.append(f"topology {g.topology_key} (all in one domain)")
    if g.phase:
        about.append(f"phase {g.phase}")
    if g.subgroups:  # KAI: each subGroup's own minMember, and how many of its members are on nodes
        about.append("subgroups " + ", ".join(f"{n} (min {m}: {bound} of {count} on nodes)"
                                               for n, m, count, bound in g.subgroup_counts()))
    lines.append(escape(" · ".join(about)))
    if g.reported is not None:
        said = " · ".join(f"{k} {v}" for k, v in sorted(g.reported.items()))
        lines.append(f"[dim]the scheduler's own counts: {escape(said) or 'none'}[/dim]")
    lines += _condition(g) + _claims(g, claim_nodes or {})
    lines += ["", *fit_lines(fit, policy)]  # before the members: a gang of 64 would push it out of sight
    lines += ["", "[b]Members[/b] (where each is, or why it waits: its own reason)"]
    lines += _members(g, width)
    return "\n".join(lines)


def _condition(g: Gang) -> list[str]:
    if g.condition_type is None:
        return ["[b]Condition[/b]  [dim]none written yet[/dim]"]
    ok = g.condition_ok
    head = (f"[b]Condition[/b]  [{'green' if ok else 'yellow'}]{escape(g.condition_type)}={escape(str(g.condition_status))}[/]"
            + (f"  {escape(g.condition_reason)}" if g.condition_reason else ""))
    return [head] + ([f"  [dim]{escape(g.condition_message)}[/dim]"] if g.condition_message else [])


def _claims(g: Gang, claim_nodes: dict[str, str | None]) -> list[str]:
    """The ResourceClaims the group shares: each claim and where it is allocated, then the group's claim
    entries (by their own names; a template's claim does not exist until it is made)."""
    if not g.claims and not g.claim_refs:
        return ["[b]Claims[/b]     [dim]none shared by the group[/dim]"]
    parts = [f"{escape(name)} ({'allocated on ' + escape(node) if (node := claim_nodes.get(name)) else 'not allocated yet'})"
             for name in g.claims]
    line = "[b]Claims[/b]     " + (", ".join(parts) or "[dim]none created yet[/dim]")
    if g.claim_refs:
        missing = len(g.claim_refs) - len(g.claims)
        line += f"  [dim]entries {escape(', '.join(g.claim_refs))}" + (
            f", {missing} not created yet" if missing > 0 else "") + "[/dim]"
    return [line]


def _members(g: Gang, width: int | None) -> list[str]:
    if not g.members:
        return ["  [dim]no member pods yet[/dim]"]
    name_width = max(len(m.name) + (len(m.subgroup) + 3 if m.subgroup else 0) for m in g.members)
    out = []
    for m in g.members:
        style = MEMBER_STYLE.get(m.state, "")
        name = f"{m.name} [{m.subgroup}]" if m.subgroup else m.name  # KAI: its subGroup
        plain = f"  {name.ljust(name_width)}  {m.state:<8}  "
        lead = f"  {escape(name.ljust(name_width))}  [{style}]{m.state:<8}[/]  "
        if m.node:
            out.append(lead + f"on {escape(m.node)}")
        elif m.state == "pending":
            why = ": ".join(p for p in (m.reason, m.message) if p) or "no scheduling attempt yet (held before the queue)"
            first, *rest = hanging(plain, why, width)
            out.append(lead + f"[yellow]{escape(first[len(plain):])}[/yellow]" if first.startswith(plain)
                       else escape(first))
            out += [f"[yellow]{escape(line)}[/yellow]" for line in rest]
        else:
            out.append(lead + "[dim]-[/dim]")
    return out


def fit_lines(fit: GangFit | None, policy: str, label: str = "Fit now") -> list[str]:
    """The fit as markup lines: fits and where, or room for how many and what blocks the rest."""
    head = f"[b]{escape(label)}[/b] under {escape(policy)}: "
    if fit is None:
        return [head + "[dim]no member pods to place[/dim]"]
    if fit.fits:
        lines = [head + "[b green]fits[/b green] — every member placed together", f"  {escape(fit.summary)}"]
        lines += _placement(fit)
    else:
        lines = [head + "[b red]does not fit[/b red] (none is bound: all or nothing)", f"  [b]{escape(fit.summary)}[/b]"]
        if fit.message:
            lines.append(f"  [dim]the group's reason: {escape(fit.message)}[/dim]")
        if fit.topology_key and fit.domains:
            lines.append(f"  [dim]below: the domain that comes closest (its nodes share one {escape(fit.topology_key)} "
                         "value)[/dim]")
        lines += blockers(fit)
    lines += [f"  [yellow]note: {escape(n)}[/yellow]" for n in fit.notes]
    return lines


def _placement(fit: GangFit) -> list[str]:
    by_node: dict[str, list[str]] = {}
    for pod, node in fit.placement:
        by_node.setdefault(node, []).append(pod.name)
    return [f"  {escape(node)} ← {escape(', '.join(names))}" for node, names in sorted(by_node.items())]


def blockers(fit: GangFit) -> list[str]:
    """Saturated nodes with their reason counts, excluded ones grouped by reason (a few names each)."""
    out = []
    if fit.saturated:
        out.append("  saturated (took members, then refused the rest):")
        for node, reasons in sorted(fit.saturated.items()):
            said = ", ".join(f"{n} × {r}" for r, n in sorted(reasons.items(), key=lambda kv: (-kv[1], kv[0])))
            out.append(f"    {escape(node)}  [dim]{escape(said)}[/dim]")
    if fit.excluded:
        out.append(f"  excluded (took none): {len(fit.excluded)} node{'' if len(fit.excluded) == 1 else 's'}")
        names: dict[str, list[str]] = {}
        for node, why in sorted(fit.excluded.items()):
            for r in why:
                names.setdefault(r, []).append(node)
        counts = Counter({r: len(ns) for r, ns in names.items()})
        for r, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])):
            shown = names[r][:SHOWN_NODES]
            more = f", +{n - len(shown)} more" if n > len(shown) else ""
            out.append(f"    {n} × {escape(r)}  [dim]({escape(', '.join(shown))}{more})[/dim]")
    return out
