"""Typed views of the DRA objects (`resource.k8s.io/v1`): DeviceClass, ResourceSlice, ResourceClaim.

Like views.py for nodes and pods: one place knows the API's shape (tests/fixtures/k8s/dra/README.md
has the recorded JSON paths). Device attributes are read by name (`Device.attr("uuid")`), never
parsed out of device names. DeviceClass selectors are CEL; kubeview evaluates only the plain subset
drivers' own classes use (`&&` of `device.driver == '...'` and `device.attributes['dom'].name ==
'...'`) and marks a class it cannot evaluate instead of guessing (`DeviceClassView.evaluated`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from kubeview.model.quantity import to_units

DRA_KINDS = ("DeviceClass", "ResourceSlice", "ResourceClaim")
# Read where served, never needed: DeviceTaintRule (resource.k8s.io/v1, GA in 1.37) and upstream's
# pool availability, ResourcePoolStatusRequest (v1alpha3, gate DRAResourcePoolStatus; pools.py)
DRA_OPTIONAL_KINDS = ("DeviceTaintRule", "ResourcePoolStatusRequest")
BLOCKING_EFFECTS = ("NoSchedule", "NoExecute")  # the API: consumers treat unknown effects like None
EXTENDED_CLAIM_ANNOTATION = "resource.kubernetes.io/extended-resource-claim"
POD_CLAIM_ANNOTATION = "resource.kubernetes.io/pod-claim-name"

DeviceKey = tuple[str, str, str]  # (driver, pool, device): how a claim's allocation names a device
ClaimKey = tuple[str, str]  # (namespace, name)


@dataclass(frozen=True, slots=True)
class Taint:
    """A device taint (`devices[].taints[]` of a slice, or a DeviceTaintRule's `spec.taint`)."""

    key: str
    value: str
    effect: str  # None | NoSchedule | NoExecute (anything else acts as None)
    rule: str | None = None  # the DeviceTaintRule that applies it; None: the slice publishes it

    @property
    def blocks(self) -> bool:
        """Claims that do not tolerate it cannot get the device: it is not free."""
        return self.effect in BLOCKING_EFFECTS

    def label(self) -> str:
        value = f"={self.value}" if self.value else ""
        return f"{self.key}{value}:{self.effect}" + (f" (rule {self.rule})" if self.rule else "")


def _taint(raw: dict, rule: str | None = None) -> Taint:
    return Taint(raw.get("key", ""), raw.get("value") or "", raw.get("effect") or "None", rule)


@dataclass(frozen=True, slots=True)
class Device:
    """One device of a ResourceSlice. `attributes`: qualified name ("domain/name", the driver's domain
    for unqualified ones) -> value; `capacity` in plain units (memory in bytes)."""

    driver: str
    pool: str
    name: str
    node: str
    attributes: dict[str, object]
    capacity: dict[str, int]
    consumes: dict[str, dict[str, int]]  # counter set -> counter -> amount (partitionable devices)
    taints: tuple[Taint, ...] = ()  # the slice's own; DeviceTaintRules' are added by the ledger
    shared: bool = False  # allowMultipleAllocations: claims take shares of its capacity (consumedCapacity)

    @property
    def key(self) -> DeviceKey:
        return (self.driver, self.pool, self.name)

    def attr(self, name: str, domain: str | None = None) -> object | None:
        """An attribute by name; unqualified names are looked up in the driver's domain."""
        if "/" in name:
            return self.attributes.get(name)
        return self.attributes.get(f"{domain or self.driver}/{name}")

    @property
    def type(self) -> str | None:
        t = self.attr("type")
        return str(t) if t is not None else None

    @property
    def uuid(self) -> str | None:
        u = self.attr("uuid")
        return str(u) if u is not None else None


@dataclass(frozen=True, slots=True)
class SliceView:
    name: str
    driver: str
    pool: str
    generation: int
    slice_count: int
    node: str | None
    devices: tuple[Device, ...]
    counters: dict[str, dict[str, int]]  # shared counter set -> counter -> amount
    resource_version: str = ""

    @classmethod
    def from_api(cls, obj: dict) -> SliceView:
        meta, spec = obj.get("metadata") or {}, obj.get("spec") or {}
        driver = spec.get("driver", "")
        pool = spec.get("pool") or {}
        pool_name = pool.get("name", "")
        node = spec.get("nodeName") or None
        devices = tuple(
            Device(driver, pool_name, d.get("name", ""), node or "", _attributes(driver, d.get("attributes")),
                   {k: _amount(k, v) for k, v in (d.get("capacity") or {}).items()},
                   {c.get("counterSet", ""): _counters(c.get("counters")) for c in d.get("consumesCounters") or ()},
                   tuple(_taint(t) for t in d.get("taints") or ()), bool(d.get("allowMultipleAllocations")))
            for d in spec.get("devices") or ())
        counters = {c.get("name", ""): _counters(c.get("counters")) for c in spec.get("sharedCounters") or ()}
        return cls(meta.get("name", ""), driver, pool_name, int(pool.get("generation") or 0),
                   int(pool.get("resourceSliceCount") or 1), node, devices, counters, meta.get("resourceVersion", ""))


@dataclass(frozen=True, slots=True)
class TaintRuleView:
    """A DeviceTaintRule: one taint on every device its selector picks (driver, pool, device name,
    each optional; no selector at all picks nothing, an empty one every device)."""

    name: str
    selector: tuple[str | None, str | None, str | None] | None  # (driver, pool, device)
    taint: Taint
    resource_version: str = ""

    @classmethod
    def from_api(cls, obj: dict) -> TaintRuleView:
        meta, spec = obj.get("metadata") or {}, obj.get("spec") or {}
        sel = spec.get("deviceSelector")
        selector = None if sel is None else (sel.get("driver"), sel.get("pool"), sel.get("device"))
        name = meta.get("name", "")
        return cls(name, selector, _taint(spec.get("taint") or {}, name), meta.get("resourceVersion", ""))

    def matches(self, device: Device) -> bool:
        if self.selector is None:
            return False
        return all(want is None or want == have for want, have in zip(self.selector, device.key, strict=True))


@dataclass(frozen=True, slots=True)
class DeviceClassView:
    name: str
    extended_resource: str | None  # spec.extendedResourceName (KEP-5004)
    terms: tuple[tuple[tuple[str, str, str], ...], ...]  # per selector: conjunction of (domain, attr, value)
    evaluated: bool  # False: a selector is CEL kubeview cannot evaluate; `matches` then says True
    expressions: tuple[str, ...] = ()

    @classmethod
    def from_api(cls, obj: dict) -> DeviceClassView:
        meta, spec = obj.get("metadata") or {}, obj.get("spec") or {}
        expressions = tuple(((s.get("cel") or {}).get("expression") or "") for s in spec.get("selectors") or ())
        parsed = [parse_cel(e) for e in expressions]
        return cls(meta.get("name", ""), spec.get("extendedResourceName") or None,
                   tuple(p for p in parsed if p is not None), all(p is not None for p in parsed), expressions)

    def matches(self, device: Device) -> bool:
        """Every selector holds (an unevaluated class matches: callers check `evaluated` and say so)."""
        return all(cel_holds(term, device) for term in self.terms)


@dataclass(frozen=True, slots=True)
class ClaimRequest:
    name: str
    device_class: str
    mode: str  # ExactCount | All
    count: int
    selectors: tuple[str, ...]  # CEL of the request itself (not evaluated; shown)
    alternatives: tuple[str, ...] = ()  # a prioritized list's subrequests (`firstAvailable`), in order
    admin: bool = False  # adminAccess: the device is watched, not used up
    # each subrequest's (deviceClassName, allocationMode, count): the quota controller charges the worst
    alternative_classes: tuple[tuple[str, str, int], ...] = ()


@dataclass(frozen=True, slots=True)
class Share:
    """One allocation result beyond "request -> device": admin access, or a share of a device that
    allows multiple allocations (`shareID`, `consumedCapacity` in plain units)."""

    request: str
    device: DeviceKey
    admin: bool
    share_id: str | None
    consumed: dict[str, int]


@dataclass(frozen=True, slots=True)
class ClaimView:
    namespace: str
    name: str
    uid: str
    extended: bool  # made by the scheduler for a pod's extended-resource request (KEP-5004)
    owner_pod: str | None
    requests: tuple[ClaimRequest, ...]
    results: tuple[tuple[str, DeviceKey], ...]  # (request, (driver, pool, device)) once allocated
    node: str | None  # from status.allocation.nodeSelector (matchFields metadata.name)
    reserved_for: tuple[tuple[str, str], ...]  # pods (name, uid) in the claim's namespace
    deleting: bool
    resource_version: str = ""
    shares: tuple[Share, ...] = ()  # the results with adminAccess, a shareID or consumedCapacity

    @property
    def key(self) -> ClaimKey:
        return (self.namespace, self.name)

    def admin_devices(self) -> frozenset[DeviceKey]:
        """Devices this claim holds for admin access: watched, not used up (upstream skips them too)."""
        return frozenset(s.device for s in self.shares if s.admin)

    def chosen(self) -> dict[str, str]:
        """Per prioritized-list request, the alternative it got: only the results say it
        (`request: <request>/<subrequest>`)."""
        out: dict[str, str] = {}
        for request, _ in self.results:
            main, sep, sub = request.partition("/")
            if sep:
                out.setdefault(main, sub)
        return out

    @property
    def allocated(self) -> bool:
        return bool(self.results)

    @classmethod
    def from_api(cls, obj: dict) -> ClaimView:
        meta, spec, status = obj.get("metadata") or {}, obj.get("spec") or {}, obj.get("status") or {}
        requests = []
        for r in (spec.get("devices") or {}).get("requests") or ():
            alternatives = r.get("firstAvailable") or ()
            exact = r.get("exactly") or (alternatives or [{}])[0]
            requests.append(ClaimRequest(
                r.get("name", ""), exact.get("deviceClassName", ""), exact.get("allocationMode") or "ExactCount",
                int(exact.get("count") or 1),
                tuple(((s.get("cel") or {}).get("expression") or "") for s in exact.get("selectors") or ()),
                tuple(a.get("name", "") for a in alternatives), bool(exact.get("adminAccess")),
                tuple((a.get("deviceClassName", ""), a.get("allocationMode") or "ExactCount", int(a.get("count") or 1))
                      for a in alternatives)))
        allocation = status.get("allocation") or {}
        raw_results = (allocation.get("devices") or {}).get("results") or ()
        results = tuple((r.get("request", ""), (r.get("driver", ""), r.get("pool", ""), r.get("device", "")))
                        for r in raw_results)
        shares = tuple(Share(request, key, bool(r.get("adminAccess")), r.get("shareID"),
                             {k: _amount(k, v) for k, v in (r.get("consumedCapacity") or {}).items()})
                       for (request, key), r in zip(results, raw_results, strict=True)
                       if r.get("adminAccess") or r.get("shareID") or r.get("consumedCapacity"))
        owner = next((ref.get("name") for ref in meta.get("ownerReferences") or ()
                      if ref.get("kind") == "Pod" and ref.get("controller")), None)
        annotations = meta.get("annotations") or {}
        return cls(
            meta.get("namespace", ""), meta.get("name", ""), meta.get("uid", ""),
            annotations.get(EXTENDED_CLAIM_ANNOTATION) == "true", owner, tuple(requests), results,
            allocation_node(allocation),
            tuple((p.get("name", ""), p.get("uid", "")) for p in status.get("reservedFor") or ()
                  if p.get("resource", "pods") == "pods"),
            bool(meta.get("deletionTimestamp")), meta.get("resourceVersion", ""), shares)


def allocation_node(allocation: dict) -> str | None:
    """The node of an allocation: only in nodeSelector's matchFields on metadata.name."""
    for term in (allocation.get("nodeSelector") or {}).get("nodeSelectorTerms") or ():
        for f in term.get("matchFields") or ():
            if f.get("key") == "metadata.name" and f.get("operator") == "In" and f.get("values"):
                return f["values"][0]
    return None


def pod_claim_names(obj: dict) -> tuple[str | None, tuple[str, ...]]:
    """A pod's claims by name: (the scheduler's extended-resource claim, the others it names)."""
    spec, status = obj.get("spec") or {}, obj.get("status") or {}
    ext = (status.get("extendedResourceClaimStatus") or {}).get("resourceClaimName")
    named = {s.get("name"): s.get("resourceClaimName") for s in status.get("resourceClaimStatuses") or ()}
    others = []
    for c in spec.get("resourceClaims") or ():
        name = c.get("resourceClaimName") or named.get(c.get("name"))
        if name:
            others.append(name)
    return ext, tuple(others)


def mapped_resources(obj: dict) -> frozenset[str]:
    """Extended resources of a pod the scheduler satisfied through a DRA claim
    (`status.extendedResourceClaimStatus.requestMappings[].resourceName`): counted as devices."""
    ercs = (obj.get("status") or {}).get("extendedResourceClaimStatus")
    if not ercs:
        return frozenset()
    return frozenset(m.get("resourceName", "") for m in ercs.get("requestMappings") or ())


# -- the CEL subset -------------------------------------------------------------------------------
_STR = r"""(?:'([^'\\]*)'|"([^"\\]*)")"""
_DRIVER = re.compile(rf"^device\.driver\s*==\s*{_STR}$")
_ATTR = re.compile(rf"""^device\.attributes\[{_STR}\](?:\.([A-Za-z_][\w]*)|\[{_STR}\])\s*==\s*{_STR}$""")


def parse_cel(expression: str) -> tuple[tuple[str, str, str], ...] | None:
    """`a && b && ...` of driver / attribute string equalities as (domain, attribute, value) triples
    (domain "" and attribute "driver" for the driver); None for anything else."""
    out = []
    for part in expression.split("&&"):
        part = part.strip()
        while part.startswith("(") and part.endswith(")"):
            part = part[1:-1].strip()
        if m := _DRIVER.match(part):
            out.append(("", "driver", m.group(1) if m.group(1) is not None else m.group(2)))
            continue
        m = _ATTR.match(part)
        if m is None:
            return None
        g = m.groups()
        domain = g[0] if g[0] is not None else g[1]
        attr = g[2] or (g[3] if g[3] is not None else g[4])
        value = g[5] if g[5] is not None else g[6]
        out.append((domain, attr, value))
    return tuple(out) if out else None


def cel_holds(term: tuple[tuple[str, str, str], ...], device: Device) -> bool:
    for domain, attr, value in term:
        if domain == "" and attr == "driver":
            if device.driver != value:
                return False
        elif str(device.attributes.get(f"{domain}/{attr}")) != value:
            return False
    return True


# -- values -----------------------------------------------------------------------------------------
def _attributes(driver: str, raw: dict | None) -> dict[str, object]:
    out: dict[str, object] = {}
    for name, typed in (raw or {}).items():
        value = next(iter(typed.values()), None) if isinstance(typed, dict) and typed else None
        out[name if "/" in name else f"{driver}/{name}"] = value
    return out


def _amount(name: str, raw: object) -> int:
    value = raw.get("value") if isinstance(raw, dict) else raw
    try:
        return to_units(name, value if value is not None else 0)
    except ValueError:
        return 0


def _counters(raw: dict | None) -> dict[str, int]:
    return {k: _amount(k, v) for k, v in (raw or {}).items()}
