"""The GPU ledger's DRA part in `snapshot --json` ("dra": devices and claims) and in `--metrics`
(per-device series). docs/snapshot.md documents the fields; the schema fragments live here beside
the code that fills them, and snapshot/document.py plugs both in."""

from __future__ import annotations

from collections.abc import Iterator

from kubeview.model.gpus.dra import ClaimView, Device, Taint
from kubeview.model.gpus.ledger import DeviceState, GpuLedger
from kubeview.model.gpus.pools import compare


def device_facts(d: Device) -> dict:
    """What a device publishes, read by attribute name (null where it publishes nothing)."""
    def s(name: str) -> str | None:
        v = d.attr(name)
        return None if v is None else str(v)

    return {"type": s("type"), "productName": s("productName"), "uuid": s("uuid"),
            "memory": d.capacity.get("memory"), "profile": s("profile"), "parentUUID": s("parentUUID")}


def _ref(key: tuple[str, str]) -> dict:
    return {"namespace": key[0], "name": key[1]}


def _taint_doc(t: Taint) -> dict:
    return {"key": t.key, "value": t.value, "effect": t.effect, "rule": t.rule}


def _device_doc(state: DeviceState) -> dict:
    d = state.device
    return {"node": d.node, "driver": d.driver, "pool": d.pool, "name": d.name, **device_facts(d),
            "gpu": state.gpu, "state": state.state,
            "claim": _ref(state.claim) if state.claim else None,
            "pods": list(state.pods),
            "taints": [_taint_doc(t) for t in state.taints],
            "shared": d.shared, "capacity": dict(d.capacity), "consumed": state.consumed,
            "shares": [{"claim": _ref(h.claim), "shareID": h.share_id, "consumed": dict(h.consumed),
                        "pods": list(h.pods)} for h in state.shares],
            "adminClaims": [_ref(k) for k in state.admin]}


def _claim_doc(c: ClaimView, ledger: GpuLedger) -> dict:
    devices = []
    extra = {(s.request, s.device): s for s in c.shares}
    chosen = c.chosen()
    for request, key in c.results:
        d = ledger.device(key)
        facts = device_facts(d) if d is not None else {"type": None, "productName": None, "uuid": None,
                                                       "memory": None, "profile": None, "parentUUID": None}
        share = extra.get((request, key))
        devices.append({"request": request, "driver": key[0], "pool": key[1], "device": key[2], **facts,
                        "adminAccess": bool(share and share.admin), "shareID": share.share_id if share else None,
                        "consumedCapacity": dict(share.consumed) if share else {}})
    return {"namespace": c.namespace, "name": c.name, "extendedResource": c.extended, "ownerPod": c.owner_pod,
            "node": c.node, "allocated": c.allocated, "deleting": c.deleting,
            "requests": [{"name": r.name, "deviceClass": r.device_class, "allocationMode": r.mode,
                          "count": r.count, "selectors": list(r.selectors), "adminAccess": r.admin,
                          "firstAvailable": list(r.alternatives), "chosen": chosen.get(r.name)}
                         for r in c.requests],
            "devices": devices, "reservedFor": [name for name, _ in c.reserved_for]}


def dra_doc(ledger: GpuLedger) -> dict:
    nodes = ledger.nodes()
    return {
        "devices": [_device_doc(s) for name in sorted(nodes) for s in nodes[name].devices],
        "claims": [_claim_doc(c, ledger) for _, c in sorted(ledger.claims.items())],
        "unevaluatedClasses": ledger.unevaluated_classes(),
        "poolStatus": _pool_status_doc(ledger),
    }


def _pool_status_doc(ledger: GpuLedger) -> dict:
    """Upstream's ResourcePoolStatusRequest answers the cluster holds, and where kubeview differs now."""
    answers = ledger.upstream.answers
    return {
        "requests": [{"name": a.name, "driver": a.driver, "pool": a.pool, "answered": a.answered,
                      "answeredAt": a.completed_at, "failed": a.failed, "poolCount": a.pool_count}
                     for _, a in sorted(answers.items())],
        "differences": [{"request": d.request, "driver": d.driver, "pool": d.pool, "field": d.what,
                         "kubeview": d.ours, "upstream": d.upstream, "why": d.why, "upstreamAt": d.as_of}
                        for d in compare(ledger.pool_counts(), answers)] if answers else [],
    }


_S = {"type": "string"}
_OS = {"type": ["string", "null"]}
_REF = {"type": "object", "properties": {"namespace": _S, "name": _S}, "required": ["namespace", "name"]}
_AMOUNTS = {"type": "object", "additionalProperties": {"type": "integer"},
            "description": "capacity name -> plain units (memory in bytes)"}
_OINT = {"type": ["integer", "null"]}
_FIGURE = {"type": ["integer", "string", "null"]}
_FACTS = {"type": _OS, "productName": _OS, "uuid": _OS,
          "memory": {"type": ["integer", "null"], "description": "bytes (capacity `memory`)"},
          "profile": _OS, "parentUUID": _OS}


def _obj(props: dict) -> dict:
    return {"type": "object", "properties": props, "required": list(props)}


DRA_SCHEMA = _obj({
    "devices": {"type": "array", "items": _obj({
        "node": _S, "driver": _S, "pool": _S, "name": _S, **_FACTS,
        "gpu": {"type": "boolean", "description": "counted in the nvidia.com/gpu figures"},
        "state": {"enum": ["allocated", "free", "unavailable", "tainted", "gone"]},
        "claim": {"type": ["object", "null"], "properties": {"namespace": _S, "name": _S}},
        "pods": {"type": "array", "items": _S},
        "taints": {"type": "array", "items": _obj({"key": _S, "value": _S, "effect": _S, "rule": _OS})},
        "shared": {"type": "boolean", "description": "allowMultipleAllocations"},
        "capacity": _AMOUNTS, "consumed": _AMOUNTS,
        "shares": {"type": "array", "items": _obj({"claim": _REF, "shareID": _OS, "consumed": _AMOUNTS,
                                                   "pods": {"type": "array", "items": _S}})},
        "adminClaims": {"type": "array", "items": _REF}})},
    "claims": {"type": "array", "items": _obj({
        "namespace": _S, "name": _S, "extendedResource": {"type": "boolean"}, "ownerPod": _OS, "node": _OS,
        "allocated": {"type": "boolean"}, "deleting": {"type": "boolean"},
        "requests": {"type": "array", "items": _obj({
            "name": _S, "deviceClass": _S, "allocationMode": _S, "count": {"type": "integer", "minimum": 0},
            "selectors": {"type": "array", "items": _S}, "adminAccess": {"type": "boolean"},
            "firstAvailable": {"type": "array", "items": _S}, "chosen": _OS})},
        "devices": {"type": "array", "items": _obj({"request": _S, "driver": _S, "pool": _S, "device": _S,
                                                     **_FACTS, "adminAccess": {"type": "boolean"},
                                                     "shareID": _OS, "consumedCapacity": _AMOUNTS})},
        "reservedFor": {"type": "array", "items": _S}})},
    "unevaluatedClasses": {"type": "array", "items": _S},
    "poolStatus": _obj({
        "requests": {"type": "array", "items": _obj({
            "name": _S, "driver": _S, "pool": _OS, "answered": {"type": "boolean"}, "answeredAt": _OS,
            "failed": _OS, "poolCount": _OINT})},
        "differences": {"type": "array", "items": _obj({
            "request": _S, "driver": _S, "pool": _S, "field": _S, "kubeview": _FIGURE, "upstream": _FIGURE,
            "why": _S, "upstreamAt": _OS})}}),
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
