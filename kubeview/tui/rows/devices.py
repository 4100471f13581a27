"""DRA on the node and pod screens: a node's devices and who holds them (a table: one line per
device at any width, where a sentence per device wrapped at 160 columns); a pod's claims as
claim -> device -> UUID (markup lines). From the GPU ledger (model/gpus/ledger.py); call under the
state's lock. Attributes are read by name (`productName`, `uuid`, `profile`, `parentUUID`)."""

from __future__ import annotations

from dataclasses import dataclass

from rich.markup import escape

from kubeview.model.cluster import ClusterModel
from kubeview.model.gpus.dra import Device
from kubeview.model.gpus.ledger import DeviceState
from kubeview.model.views import PodView
from kubeview.tui import format as fmt
from kubeview.tui.rows.column import Column

STATE_STYLE = {"allocated": "green", "free": "dim", "unavailable": "yellow", "tainted": "red", "gone": "strike dim"}


def what(d: Device) -> str:
    """Full GPU (product, UUID) or MIG slice (profile of the parent's UUID), as published."""
    product, uuid = d.attr("productName"), d.uuid
    memory = d.capacity.get("memory")
    size = f" {fmt.amount('memory', memory)}" if memory else ""
    if d.type == "mig":
        return f"MIG {d.attr('profile') or '?'} of {d.attr('parentUUID') or '?'}{size}"
    return f"{product or d.type or 'device'} {uuid or '(no uuid)'}{size}"


# The node's devices as a table (widgets/device_table.py draws it with `fit_widths`). Narrow, the
# UUID, the claim and the product give first, the widest first, down to their `least`; then the
# names. Every cell is cut in the middle (names, UUIDs and claims differ at their ends) but the
# product, cut at its end.
DEVICE_COLUMNS = [
    Column("device", "DEVICE", 0, whole=True),
    Column("state", "STATE", 11),
    Column("product", "PRODUCT", 0, whole=True, least=12),  # "NVIDIA H100…"
    Column("uuid", "UUID", 0, whole=True, least=20),  # a MIG slice: "of" its parent GPU's
    Column("size", "MEMORY/MIG", 0, whole=True),
    Column("pods", "POD", 0, whole=True),
    Column("claim", "CLAIM", 0, whole=True, least=16),
    Column("note", "NOTE", 0, whole=True, least=8),  # taints, a shared device's shares, admin access
]
CUT_AT_END = frozenset({"product"})


@dataclass(frozen=True, slots=True)
class DeviceTable:
    """A node's DRA devices: the title's figures and one row of cells per device."""

    allocated: int
    total: int
    rows: tuple[tuple[str, ...], ...]
    states: tuple[str, ...]  # per row, for its style (STATE_STYLE)


def device_cells(s: DeviceState) -> tuple[str, ...]:
    d = s.device
    memory = d.capacity.get("memory")
    size = fmt.amount("memory", memory) if memory else ""
    if d.type == "mig":
        uuid = d.uuid or f"of {d.attr('parentUUID') or '?'}"
        size = f"{d.attr('profile') or '?'} {size}".strip()
    else:
        uuid = d.uuid or "(no uuid)"
    product = str(d.attr("productName") or d.type or "device")
    pods = ", ".join(s.pods) or ("no pod" if s.claim is not None else "")
    claim = f"{s.claim[0]}/{s.claim[1]}" if s.claim is not None else ""
    return d.name, s.state, product, uuid, size or "-", pods, claim, device_note(s)


def device_note(s: DeviceState) -> str:
    """What 1.37 adds to a device: its taints, a shared device's shares and consumed/total capacity,
    the adminAccess claims on it (watching, not using)."""
    parts = [f"taint {t.label()}" for t in s.taints]
    if s.device.shared:
        used = ", ".join(f"{name} {fmt.amount(name, amount)}/{fmt.amount(name, s.device.capacity.get(name, 0))}"
                         for name, amount in sorted(s.consumed.items()))
        n = len(s.shares)
        parts.append(f"shared: {n} share{'s' if n != 1 else ''}" + (f", {used}" if used else ""))
    if s.admin:
        parts.append("admin access: " + ", ".join(f"{ns}/{name}" for ns, name in s.admin))
    return "; ".join(parts)


def node_devices(model: ClusterModel, node: str) -> DeviceTable | None:
    """The node's devices and who holds them (call under the state's lock); None: it publishes none."""
    ng = model.gpus.node(node)
    if ng is None:
        return None
    return DeviceTable(ng.gpu_allocated, ng.gpu_total, tuple(device_cells(s) for s in ng.devices),
                       tuple(s.state for s in ng.devices))


def pod_claim_lines(model: ClusterModel, pod: PodView) -> list[str]:
    claims = model.gpus.claims_of_pod(pod.namespace, pod.name, pod.claim_names)
    lines: list[str] = []
    for c in claims:
        kind = "extended resource" if c.extended else "claim"
        head = f"  {escape(c.name)} ({kind})"
        if not c.results:
            lines.append(f"{head}: not allocated yet")
        admin = c.admin_devices()
        for request, key in c.results:
            d = model.gpus.device(key)
            target = escape(what(d)) if d is not None else "(device not published)"
            main, _, alternative = request.partition("/")
            how = f" (alternative {escape(alternative)} of {escape(main)})" if alternative else ""
            how += " (admin access: not used up)" if key in admin else ""
            lines.append(f"{head} → {escape(key[0])}/{escape(key[1])}/{escape(key[2])} → {target}{how}")
    if pod.pod_claims and not claims:
        lines.append(f"  {escape(', '.join(pod.pod_claims))}: no claim yet (made when the pod is scheduled; its "
                     "device selectors are CEL kubeview does not evaluate)")
    if not lines and pod.pending and pod.requests.get(fmt.GPU) and fmt.GPU in model.gpus.mapped_resources():
        lines.append(f"  {fmt.GPU} may be served by DRA devices: the scheduler creates the claim when it binds")
    return (["", "[b]GPU claims[/b] (DRA: claim → device → UUID)"] + lines) if lines else []
