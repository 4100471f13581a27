"""Pods off the wire with only the fields kubeview reads: msgspec decodes into plain dicts and skips
the rest (managedFields, env, volumes, probes, images, IPs) without building it. Every kept value
is `Any`: the structure says what to skip, nothing is validated (a cluster's odd value reaches the
model as json.loads gave it).

Pods are nearly all of a big cluster's bytes, and decoding them was the read path's largest cost:
a 20,000-pod list (61 MiB with the managedFields the API server adds) took 2.7-3.1 s in stdlib
`json.loads` and 0.3-1.2 s here (same run, load ~4; docs/architecture.md, #28). The dicts are
the ones the model always read (model/views.py, jobs.py, gangs.py, dra.py, requests.py; the
extender's assumed pods), so nothing downstream changes. A field a reader starts to use must be
added below: tests/cluster/test_pod_wire.py builds the model from every recorded pod both ways and
compares what each store holds. The extender's Pod (scheduling/wire_types.py) validates instead, on
purpose: docs/architecture.md says why there are two.
"""

from __future__ import annotations

from typing import Any, TypedDict

import msgspec


class Meta(TypedDict, total=False):
    name: Any
    namespace: Any
    uid: Any
    resourceVersion: Any
    generation: Any
    creationTimestamp: Any
    deletionTimestamp: Any
    labels: Any
    annotations: Any
    ownerReferences: Any


class Container(TypedDict, total=False):
    name: Any
    resources: Any
    restartPolicy: Any  # Always: a sidecar (counts for the pod's lifetime)


class Spec(TypedDict, total=False):
    nodeName: Any
    containers: list[Container] | None
    initContainers: list[Container] | None
    overhead: Any
    resources: Any  # pod-level resources
    nodeSelector: Any
    tolerations: Any
    affinity: Any
    priority: Any
    priorityClassName: Any
    preemptionPolicy: Any
    schedulerName: Any
    schedulingGates: Any
    schedulingGroup: Any  # 1.37 gangs
    workloadRef: Any
    resourceClaims: Any
    hostNetwork: Any
    terminationGracePeriodSeconds: Any
    restartPolicy: Any


class ContainerStatus(TypedDict, total=False):
    name: Any
    ready: Any
    started: Any
    restartCount: Any
    state: Any
    lastState: Any


class Status(TypedDict, total=False):
    phase: Any
    reason: Any
    message: Any
    nominatedNodeName: Any
    startTime: Any
    conditions: Any
    containerStatuses: list[ContainerStatus] | None
    initContainerStatuses: list[ContainerStatus] | None
    resourceClaimStatuses: Any
    extendedResourceClaimStatus: Any


class Pod(TypedDict, total=False):
    kind: Any
    apiVersion: Any
    metadata: Meta | None
    spec: Spec | None
    status: Status | None


class PodList(TypedDict, total=False):
    kind: Any
    apiVersion: Any
    metadata: Any
    items: list[Pod] | None


class _Event(TypedDict, total=False):
    type: Any
    object: msgspec.Raw


_LIST = msgspec.json.Decoder(PodList)
_POD = msgspec.json.Decoder(Pod)
_EVENT = msgspec.json.Decoder(_Event)
_ANY = msgspec.json.Decoder()

DecodeError = msgspec.DecodeError  # a ValueError, as json.JSONDecodeError is


def pod_list(data: bytes) -> dict:
    """A PodList page: its metadata whole, its items trimmed."""
    return _LIST.decode(data)  # type: ignore[return-value]


def pod_event(line: bytes) -> dict:
    """One watch event of pods: the pod trimmed; an ERROR's Status (or a BOOKMARK) whole."""
    event = _EVENT.decode(line)
    raw = event.get("object")
    kind = event.get("type")
    obj = {} if raw is None else (_POD if kind in ("ADDED", "MODIFIED", "DELETED") else _ANY).decode(raw)
    return {"type": kind, "object": obj}
