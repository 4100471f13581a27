"""DRA lines of the node and pod screens: a node's devices and who holds them; a pod's claims as
claim -> device -> UUID. Markup text from the GPU ledger (model/gpu_ledger.py); call under the
state's lock. Attributes are read by name (`productName`, `uuid`, `profile`, `parentUUID`)."""

from __future__ import annotations

from rich.markup import escape

from kubeview.model.cluster import ClusterModel
from kubeview.model.dra import Device
from kubeview.model.views import PodView
from kubeview.tui import format as fmt

STATE_STYLE = {"allocated": "green", "free": "dim", "unavailable": "yellow"}


def what(d: Device) -> str:
    """Full GPU (product, UUID) or MIG slice (profile of the parent's UUID), as published."""
    product, uuid = d.attr("productName"), d.uuid
    memory = d.capacity.get("memory")
    size = f" {fmt.amount('memory', memory)}" if memory else ""
    if d.type == "mig":
        return f"MIG {d.attr('profile') or '?'} of {d.attr('parentUUID') or '?'}{size}"
    return f"{product or d.type or 'device'} {uuid or '(no uuid)'}{size}"


def node_device_lines(model: ClusterModel, node: str) -> list[str]:
    ng = model.gpus.node(node)
    if ng is None:
        return []
    lines = [f"[b]DRA devices[/b]  {ng.gpu_allocated} of {ng.gpu_total} GPUs allocated"
             " (counted in the GPU figures above)"]
    for s in ng.devices:
        d = s.device
        holder = ""
        if s.claim is not None:
            pods = ", ".join(s.pods) or "no pod"
            holder = f" → {escape(s.claim[0])}/{escape(s.claim[1])} ({escape(pods)})"
        lines.append(f"  {escape(d.name):<26} [{STATE_STYLE[s.state]}]{s.state:<11}[/] {escape(what(d))}{holder}")
    return lines


def pod_claim_lines(model: ClusterModel, pod: PodView) -> list[str]:
    claims = model.gpus.claims_of_pod(pod.namespace, pod.name, pod.claim_names)
    lines: list[str] = []
    for c in claims:
        kind = "extended resource" if c.extended else "claim"
        head = f"  {escape(c.name)} ({kind})"
        if not c.results:
            lines.append(f"{head}: not allocated yet")
        for _, key in c.results:
            d = model.gpus.device(key)
            target = escape(what(d)) if d is not None else "(device not published)"
            lines.append(f"{head} → {escape(key[0])}/{escape(key[1])}/{escape(key[2])} → {target}")
    if pod.pod_claims and not claims:
        lines.append(f"  {escape(', '.join(pod.pod_claims))}: no claim yet (made when the pod is scheduled; its "
                     "device selectors are CEL kubeview does not evaluate)")
    if not lines and pod.pending and pod.requests.get(fmt.GPU) and fmt.GPU in model.gpus.mapped_resources():
        lines.append(f"  {fmt.GPU} may be served by DRA devices: the scheduler creates the claim when it binds")
    return (["", "[b]GPU claims[/b] (DRA: claim → device → UUID)"] + lines) if lines else []
