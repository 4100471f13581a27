"""The GPU ledger's DRA part in `snapshot --json` ("dra": devices and claims) and in `--metrics`
(per-device series). docs/snapshot.md documents the fields; the schema fragments live here beside
the code that fills them, and model/snapshot.py plugs both in."""

from __future__ import annotations

from collections.abc import Iterator

from kubeview.model.dra import ClaimView, Device
from kubeview.model.gpu_ledger import DeviceState, GpuLedger


def device_facts(d: Device) -> dict:
    """What a device publishes, read by attribute name (null where it publishes nothing)."""
    def s(name: str) -> str | None:
        v = d.attr(name)
        return None if v is None else str(v)

    return {"type": s("type"), "productName": s("productName"), "uuid": s("uuid"),
            "memory": d.capacity.get("memory"), "profile": s("profile"), "parentUUID": s("parentUUID")}


def _device_doc(state: DeviceState) -> dict:
    d = state.device
    return {"node": d.node, "driver": d.driver, "pool": d.pool, "name": d.name, **device_facts(d),
            "gpu": state.gpu, "state": state.state,
            "claim": {"namespace": state.claim[0], "name": state.claim[1]} if state.claim else None,
            "pods": list(state.pods)}


def _claim_doc(c: ClaimView, ledger: GpuLedger) -> dict:
    devices = []
    for request, key in c.results:
        d = ledger.device(key)
        facts = device_facts(d) if d is not None else {"type": None, "productName": None, "uuid": None,
                                                       "memory": None, "profile": None, "parentUUID": None}
        devices.append({"request": request, "driver": key[0], "pool": key[1], "device": key[2], **facts})
    return {"namespace": c.namespace, "name": c.name, "extendedResource": c.extended, "ownerPod": c.owner_pod,
            "node": c.node, "allocated": c.allocated, "deleting": c.deleting,
            "requests": [{"name": r.name, "deviceClass": r.device_class, "allocationMode": r.mode,
                          "count": r.count, "selectors": list(r.selectors)} for r in c.requests],
            "devices": devices, "reservedFor": [name for name, _ in c.reserved_for]}


def dra_doc(ledger: GpuLedger) -> dict:
    nodes = ledger.nodes()
    return {
        "devices": [_device_doc(s) for name in sorted(nodes) for s in nodes[name].devices],
        "claims": [_claim_doc(c, ledger) for _, c in sorted(ledger.claims.items())],
        "unevaluatedClasses": ledger.unevaluated_classes(),
    }


_S = {"type": "string"}
_OS = {"type": ["string", "null"]}
_FACTS = {"type": _OS, "productName": _OS, "uuid": _OS,
          "memory": {"type": ["integer", "null"], "description": "bytes (capacity `memory`)"},
          "profile": _OS, "parentUUID": _OS}


def _obj(props: dict) -> dict:
    return {"type": "object", "properties": props, "required": list(props)}


DRA_SCHEMA = _obj({
    "devices": {"type": "array", "items": _obj({
        "node": _S, "driver": _S, "pool": _S, "name": _S, **_FACTS,
        "gpu": {"type": "boolean", "description": "counted in the nvidia.com/gpu figures"},
        "state": {"enum": ["allocated", "free", "unavailable", "gone"]},
        "claim": {"type": ["object", "null"], "properties": {"namespace": _S, "name": _S}},
        "pods": {"type": "array", "items": _S}})},
    "claims": {"type": "array", "items": _obj({
        "namespace": _S, "name": _S, "extendedResource": {"type": "boolean"}, "ownerPod": _OS, "node": _OS,
        "allocated": {"type": "boolean"}, "deleting": {"type": "boolean"},
        "requests": {"type": "array", "items": _obj({
            "name": _S, "deviceClass": _S, "allocationMode": _S, "count": {"type": "integer", "minimum": 0},
            "selectors": {"type": "array", "items": _S}})},
        "devices": {"type": "array", "items": _obj({"request": _S, "driver": _S, "pool": _S, "device": _S,
                                                     **_FACTS})},
        "reservedFor": {"type": "array", "items": _S}})},
    "unevaluatedClasses": {"type": "array", "items": _S},
})

DEVICE_METRIC = "kubeview_dra_device_allocated"
DEVICE_HELP = "1 if a DRA device is allocated to a ResourceClaim, 0 if not; one series per published device."


def device_series(ledger: GpuLedger) -> Iterator[tuple[str, tuple[tuple[str, str], ...], str]]:
    """(metric, labels, value) per device, for `snapshot --metrics`."""
    nodes = ledger.nodes()
    for name in sorted(nodes):
        for s in nodes[name].devices:
            d = s.device
            facts = device_facts(d)
            labels = (("node", d.node), ("driver", d.driver), ("pool", d.pool), ("device", d.name),
                      ("type", facts["type"] or ""), ("uuid", facts["uuid"] or ""),
                      ("profile", facts["profile"] or ""), ("parent_uuid", facts["parentUUID"] or ""),
                      ("namespace", s.claim[0] if s.claim else ""), ("claim", s.claim[1] if s.claim else ""))
            yield DEVICE_METRIC, labels, "1" if s.state == "allocated" else "0"
