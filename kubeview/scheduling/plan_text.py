"""A plan as people read it (`kubeview plan` and the TUI's Plan screen print the same lines)."""

from __future__ import annotations

from kubeview.scheduling.plan_types import Plan


def describe_plan(plan: Plan, policy: str) -> str:
    """The disruptions, where each pod goes, the landing, the free-GPU picture, the quality, the notes."""
    lines = [f"plan for {plan.target}, policy {policy}"]
    if plan.fits_now:
        lines.append(f"  fits now, nothing to disrupt{_landing(plan)}")
    elif not plan.found:
        lines.append(f"  no plan: {plan.reason}")
    else:
        for m in plan.moves:
            goes = f"goes to {m.to}" if m.to else f"waits ({m.why_waits})"
            gpus = f"{m.gpus} GPU{'s' if m.gpus != 1 else ''}"
            lines.append(f"  evict {m.pod} ({m.owner}, {gpus}, priority {m.priority}) on {m.node}: {goes}")
        lines.append(f"  then{_landing(plan)}")
        if plan.free_before:
            pic = ", ".join(f"{n} {plan.free_before[n]} → {plan.free_after[n]}" for n in plan.free_before)
            lines.append(f"  free GPUs: {pic}")
        lines += [f"  over budget: {b} (the Eviction API would refuse it)" for b in plan.over_budget]
    if plan.quality and not plan.fits_now:
        lines.append(f"  {plan.quality}")
    lines += [f"  note: {n}" for n in plan.notes]
    return "\n".join(lines) + "\n"


def _landing(plan: Plan) -> str:
    if not plan.landing:
        return ""
    return " " + ", ".join(f"{p} lands on {n}" for p, n in plan.landing)
