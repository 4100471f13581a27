"""Pod list pages read as the API server's protobuf, into the dicts pod_wire.py makes of its JSON.

A list of 150,000 pods costs the API server 4.3-4.7 s of CPU as protobuf against 5.7-6.2 s as
JSON, and 204 MB against 308 MB (docs/architecture.md "Pod lists as protobuf: measured, not kept").
upb (the protobuf package's C parser) reads a 5,000-pod page in ~45 ms; what is read of it is
only the fields pod_wire keeps, and each is given the shape the API server's JSON gives it:
- a string the JSON omits when empty is left out when empty; a pointer field (a proto2 field the
  API server writes only when set) is there exactly when `HasField` says so;
- a Time is its RFC 3339 string to the second (`metav1.Time`'s JSON), and None where the API
  server wrote a zero Time (an empty message: no `seconds`), as JSON writes null;
- a Quantity is its canonical string, an IntOrString its int or its string;
- a map's keys are in sorted order, as Go's JSON writes them (upb iterates in hash order, and the
  model keeps the order it is given, in the snapshot too).
Subtrees kept whole (affinity, tolerations, claims) go through `_generic`, which applies the same
rules to every field. tests/realk8s/test_pod_proto_real.py lists the same pods from a real API server
both ways and compares the dicts and the model built of them.

The descriptors (`pods.desc`, made by scripts/gen-pod-proto.sh from k8s.io/api's generated.proto)
are 1.37's, with 1.35's `workloadRef` (field 42, dropped in 1.36) added back: a field a newer server
adds is skipped by the parser, as pod_wire skips what it does not name.
"""

from __future__ import annotations

import time
from functools import cache
from pathlib import Path
from typing import Any

MAGIC = b"k8s\x00"  # every protobuf body of the API server starts so (then a runtime.Unknown)
CONTENT_TYPE = "application/vnd.kubernetes.protobuf"
ACCEPT = f"{CONTENT_TYPE}, application/json"  # JSON from a server or proxy that does not give protobuf
DESCRIPTORS = Path(__file__).with_name("pods.desc")
_TIME = "k8s.io.apimachinery.pkg.apis.meta.v1.Time"
_QUANTITY = "k8s.io.apimachinery.pkg.api.resource.Quantity"
_INT_OR_STRING = "k8s.io.apimachinery.pkg.util.intstr.IntOrString"


def is_protobuf(data: bytes) -> bool:
    return data[:4] == MAGIC


@cache
def _messages() -> tuple[Any, Any]:
    """(runtime.Unknown, core/v1 PodList) classes, in a pool of their own (imported at first use)."""
    from google.protobuf import descriptor_pb2, descriptor_pool, message_factory  # type: ignore[import-untyped]

    pool = descriptor_pool.DescriptorPool()
    files = list(descriptor_pb2.FileDescriptorSet.FromString(DESCRIPTORS.read_bytes()).file)
    found = message_factory.GetMessages(files, pool=pool)
    return found["k8s.io.apimachinery.pkg.runtime.Unknown"], found["k8s.io.api.core.v1.PodList"]


def pod_list(data: bytes) -> dict:
    """A PodList page from its protobuf body: `{"metadata": ListMeta, "items": [trimmed pods]}`;
    ValueError for a body that is not one."""
    unknown_type, list_type = _messages()
    from google.protobuf.message import DecodeError  # type: ignore[import-untyped]

    try:
        unknown = unknown_type.FromString(data[4:] if is_protobuf(data) else b"\xff")
        if unknown.contentEncoding:
            raise ValueError(f"a pod list in content encoding {unknown.contentEncoding!r}")
        page = list_type.FromString(unknown.raw)
    except DecodeError as exc:
        raise ValueError(f"not a protobuf pod list: {exc}") from None
    m = page.metadata
    meta: dict[str, Any] = {}
    if m.resourceVersion:
        meta["resourceVersion"] = m.resourceVersion
    token = getattr(m, "continue")  # a Python keyword
    if token:
        meta["continue"] = token
    if m.HasField("remainingItemCount"):
        meta["remainingItemCount"] = m.remainingItemCount
    return {"metadata": meta, "items": [_pod(p) for p in page.items]}


def _pod(p: Any) -> dict:
    return {"metadata": _meta(p.metadata), "spec": _spec(p.spec), "status": _status(p.status)}


_times: dict[int, str] = {}


def _time(t: Any) -> str | None:
    if not t.HasField("seconds"):
        return None  # a zero Time: the API server's JSON says null
    s = t.seconds
    text = _times.get(s)
    if text is None:
        if len(_times) > 1 << 16:
            _times.clear()
        text = _times[s] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(s))
    return text


def _meta(m: Any) -> dict:
    d: dict[str, Any] = {"name": m.name, "namespace": m.namespace, "uid": m.uid,
                         "resourceVersion": m.resourceVersion}
    if m.generation:
        d["generation"] = m.generation
    d["creationTimestamp"] = _time(m.creationTimestamp)
    if m.HasField("deletionTimestamp"):
        d["deletionTimestamp"] = _time(m.deletionTimestamp)
    if len(m.labels):  # len(): a container's truth is the ABC's, 5x slower
        d["labels"] = _strings(m.labels)
    if len(m.annotations):
        d["annotations"] = _strings(m.annotations)
    if len(m.ownerReferences):
        d["ownerReferences"] = [_owner(r) for r in m.ownerReferences]
    return d


def _owner(r: Any) -> dict:
    d = {"apiVersion": r.apiVersion, "kind": r.kind, "name": r.name, "uid": r.uid}
    if r.HasField("controller"):
        d["controller"] = r.controller
    if r.HasField("blockOwnerDeletion"):
        d["blockOwnerDeletion"] = r.blockOwnerDeletion
    return d


def _quantities(entries: Any) -> dict[str, str]:
    return {name: entries[name].string for name in sorted(entries)}  # a map's items() is the slow ABC mixin


def _strings(entries: Any) -> dict[str, str]:
    return {name: entries[name] for name in sorted(entries)}


def _requirements(r: Any) -> dict:
    d: dict[str, Any] = {}
    if len(r.limits):
        d["limits"] = _quantities(r.limits)
    if len(r.requests):
        d["requests"] = _quantities(r.requests)
    if len(r.claims):
        d["claims"] = [_generic(c) for c in r.claims]
    return d


def _container(c: Any) -> dict:
    d = {"name": c.name, "resources": _requirements(c.resources)}
    if c.HasField("restartPolicy"):
        d["restartPolicy"] = c.restartPolicy
    return d


def _spec(s: Any) -> dict:
    d: dict[str, Any] = {}
    if s.nodeName:
        d["nodeName"] = s.nodeName
    d["containers"] = [_container(c) for c in s.containers]
    if len(s.initContainers):
        d["initContainers"] = [_container(c) for c in s.initContainers]
    if len(s.overhead):
        d["overhead"] = _quantities(s.overhead)
    if s.HasField("resources"):
        d["resources"] = _requirements(s.resources)
    if len(s.nodeSelector):
        d["nodeSelector"] = _strings(s.nodeSelector)
    if len(s.tolerations):
        d["tolerations"] = [_toleration(t) for t in s.tolerations]
    for name in ("affinity", "schedulingGroup", "workloadRef"):
        if s.HasField(name):
            d[name] = _generic(getattr(s, name))
    for name in ("priority", "preemptionPolicy", "terminationGracePeriodSeconds"):
        if s.HasField(name):
            d[name] = getattr(s, name)
    for name in ("priorityClassName", "schedulerName", "restartPolicy"):
        value = getattr(s, name)
        if value:
            d[name] = value
    if len(s.schedulingGates):
        d["schedulingGates"] = [_generic(g) for g in s.schedulingGates]
    if len(s.resourceClaims):
        d["resourceClaims"] = [_generic(c) for c in s.resourceClaims]
    if s.hostNetwork:
        d["hostNetwork"] = True
    return d


def _toleration(t: Any) -> dict:
    d: dict[str, Any] = {}
    if t.key:
        d["key"] = t.key
    if t.operator:
        d["operator"] = t.operator
    if t.value:
        d["value"] = t.value
    if t.effect:
        d["effect"] = t.effect
    if t.HasField("tolerationSeconds"):
        d["tolerationSeconds"] = t.tolerationSeconds
    return d


def _condition(c: Any) -> dict:
    d = {"type": c.type, "status": c.status, "lastProbeTime": _time(c.lastProbeTime),
         "lastTransitionTime": _time(c.lastTransitionTime)}
    if c.observedGeneration:
        d["observedGeneration"] = c.observedGeneration
    if c.reason:
        d["reason"] = c.reason
    if c.message:
        d["message"] = c.message
    return d


def _state(s: Any) -> dict:
    d: dict[str, Any] = {}
    if s.HasField("waiting"):
        d["waiting"] = _generic(s.waiting)
    if s.HasField("running"):
        d["running"] = {"startedAt": _time(s.running.startedAt)}
    if s.HasField("terminated"):
        d["terminated"] = _terminated(s.terminated)
    return d


def _terminated(t: Any) -> dict:
    """`signal` is the one number under a kept subtree that JSON leaves out when 0 (scripts/gen-pod-proto.sh)."""
    d: dict[str, Any] = {"exitCode": t.exitCode}
    if t.signal:
        d["signal"] = t.signal
    for name in ("reason", "message"):
        value = getattr(t, name)
        if value:
            d[name] = value
    d["startedAt"], d["finishedAt"] = _time(t.startedAt), _time(t.finishedAt)
    if t.containerID:
        d["containerID"] = t.containerID
    return d


def _container_status(c: Any) -> dict:
    d = {"name": c.name, "state": _state(c.state), "lastState": _state(c.lastState), "ready": c.ready,
         "restartCount": c.restartCount}
    if c.HasField("started"):
        d["started"] = c.started
    return d


def _status(s: Any) -> dict:
    d: dict[str, Any] = {}
    for name in ("phase", "reason", "message", "nominatedNodeName"):
        value = getattr(s, name)
        if value:
            d[name] = value
    if s.HasField("startTime"):
        d["startTime"] = _time(s.startTime)
    if len(s.conditions):
        d["conditions"] = [_condition(c) for c in s.conditions]
    if len(s.containerStatuses):
        d["containerStatuses"] = [_container_status(c) for c in s.containerStatuses]
    if len(s.initContainerStatuses):
        d["initContainerStatuses"] = [_container_status(c) for c in s.initContainerStatuses]
    if len(s.resourceClaimStatuses):
        d["resourceClaimStatuses"] = [_generic(c) for c in s.resourceClaimStatuses]
    if s.HasField("extendedResourceClaimStatus"):
        d["extendedResourceClaimStatus"] = _generic(s.extendedResourceClaimStatus)
    return d


def _generic(m: Any) -> Any:
    """A whole subtree in its JSON shape: strings left out when empty, every other field as written."""
    name = m.DESCRIPTOR.full_name
    if name == _TIME:
        return _time(m)
    if name == _QUANTITY:
        return m.string
    if name == _INT_OR_STRING:
        return m.strVal if m.type else m.intVal
    out: dict[str, Any] = {}
    for field, value in m.ListFields():
        if field.message_type is None:
            if field.is_repeated:
                out[field.name] = list(value)
            elif value != "":
                out[field.name] = value
        elif field.message_type.GetOptions().map_entry:
            simple = field.message_type.fields_by_name["value"].message_type is None
            out[field.name] = _strings(value) if simple else {k: _generic(value[k]) for k in sorted(value)}
        elif field.is_repeated:
            out[field.name] = [_generic(v) for v in value]
        else:
            out[field.name] = _generic(value)
    return out
