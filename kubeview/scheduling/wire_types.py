"""The extender's request bodies as msgspec Structs: every field kubeview reads, typed.

msgspec validates while it decodes (C, no intermediate dicts), so a malformed field is refused with
its JSON path (`Expected `str`, got `array` - at `$.Pod.spec.nodeSelector``) instead of failing
later inside the model with a Python exception. Fields kubeview does not read are skipped unvalidated
(kube-scheduler sends whole objects; a stricter check here would refuse what the API server accepts).
Structs use `omit_defaults`, so `msgspec.to_builtins` gives back the API's dict shape with only the
fields the request had, which `PodView.from_api`/`NodeView.from_api` read (one reading of the API's
shape, in `kubeview/model/views.py`).

Maps and lists may be `null` (Go's encoder writes a nil map or slice that way without `omitempty`).
Quantities are strings, or JSON numbers as `resource.Quantity`'s UnmarshalJSON also takes them.
The watch's Pods are decoded by another schema that does not validate (cluster/kube/pod_wire.py):
docs/architecture.md says why there are two.
"""

from __future__ import annotations

from typing import TypeVar

import msgspec
from msgspec import Raw, Struct

Quantity = str | int | float
ResourceList = dict[str, Quantity] | None
Labels = dict[str, str] | None
T = TypeVar("T")
Body = bytes | bytearray  # a request body as the HTTP server hands it over (a bytearray: Content-Length)


class _S(Struct, omit_defaults=True, gc=False):
    """gc=False: decoded trees hold no cycles, so the collector need not track (or walk) them."""


class OwnerReference(_S):
    kind: str = ""
    name: str = ""
    controller: bool | None = None


class ObjectMeta(_S):
    name: str
    namespace: str = ""
    uid: str = ""
    resourceVersion: str = ""  # noqa: N815 (the API's field names)
    labels: Labels = None
    ownerReferences: list[OwnerReference] | None = None  # noqa: N815
    deletionTimestamp: str | None = None  # noqa: N815


class Resources(_S):
    requests: ResourceList = None
    limits: ResourceList = None


class Container(_S):
    name: str = ""
    resources: Resources | None = None
    restartPolicy: str | None = None  # noqa: N815


class Toleration(_S):
    key: str = ""
    operator: str = ""
    value: str = ""
    effect: str = ""
    tolerationSeconds: int | None = None  # noqa: N815


class Requirement(_S):
    key: str = ""
    operator: str = ""
    values: list[str] | None = None


class SelectorTerm(_S):
    matchExpressions: list[Requirement] | None = None  # noqa: N815
    matchFields: list[Requirement] | None = None  # noqa: N815


class NodeSelector(_S):
    nodeSelectorTerms: list[SelectorTerm] | None = None  # noqa: N815


class NodeAffinity(_S):
    requiredDuringSchedulingIgnoredDuringExecution: NodeSelector | None = None  # noqa: N815


class Affinity(_S):
    nodeAffinity: NodeAffinity | None = None  # noqa: N815


class PodSpec(_S):
    nodeName: str = ""  # noqa: N815
    nodeSelector: Labels = None  # noqa: N815
    tolerations: list[Toleration] | None = None
    affinity: Affinity | None = None
    containers: list[Container] | None = None
    initContainers: list[Container] | None = None  # noqa: N815
    overhead: ResourceList = None
    resources: Resources | None = None


class PodCondition(_S):
    type: str = ""
    status: str = ""
    reason: str = ""
    message: str = ""


class ContainerStatus(_S):
    restartCount: int = 0  # noqa: N815


class PodStatus(_S):
    phase: str = ""
    conditions: list[PodCondition] | None = None
    containerStatuses: list[ContainerStatus] | None = None  # noqa: N815


class Pod(_S):
    metadata: ObjectMeta
    spec: PodSpec | None = None
    status: PodStatus | None = None


class NodeMeta(_S):
    name: str
    resourceVersion: str = ""  # noqa: N815
    labels: Labels = None


class Taint(_S):
    key: str = ""
    value: str = ""
    effect: str = ""


class NodeSpec(_S):
    taints: list[Taint] | None = None
    unschedulable: bool = False


class NodeCondition(_S):
    type: str = ""
    status: str = ""


class NodeStatus(_S):
    conditions: list[NodeCondition] | None = None
    capacity: ResourceList = None
    allocatable: ResourceList = None


class Node(_S):
    metadata: NodeMeta
    spec: NodeSpec | None = None
    status: NodeStatus | None = None


class NodeList(Struct, gc=False):
    items: list[Raw] | None = None  # each item kept as its own bytes: decoded once (NodeCache), echoed


class ExtenderArgs(Struct, gc=False, rename={"pod": "Pod", "nodes": "Nodes", "node_names": "NodeNames"}):
    """`extender/v1.ExtenderArgs` (Go field names: the type has no json tags)."""

    pod: Pod
    nodes: NodeList | None = None
    node_names: list[str] | None = None


class BindingArgs(Struct, rename={"pod_name": "PodName", "pod_namespace": "PodNamespace",
                                  "pod_uid": "PodUID", "node": "Node"}):
    """`extender/v1.ExtenderBindingArgs`."""

    pod_name: str = ""
    pod_namespace: str = ""
    pod_uid: str = ""
    node: str = ""


class ConfigPatch(Struct, forbid_unknown_fields=True, omit_defaults=True):
    """A (partial) packing config document for `PUT /config`; bounds are `PackingConfig`'s checks."""

    policy: str | msgspec.UnsetType = msgspec.UNSET
    weights: dict[str, int | float] | msgspec.UnsetType = msgspec.UNSET
    bias: dict[str, int | float] | msgspec.UnsetType = msgspec.UNSET
    avoid: list[str] | msgspec.UnsetType = msgspec.UNSET


ARGS = msgspec.json.Decoder(ExtenderArgs)
NODE = msgspec.json.Decoder(Node)
BINDING = msgspec.json.Decoder(BindingArgs)
CONFIG = msgspec.json.Decoder(ConfigPatch)


def decode(decoder: msgspec.json.Decoder[T], body: Body | Raw, what: str) -> T:
    """`decoder.decode(body)`, every failure one sentence naming the JSON path: ValueError."""
    try:
        return decoder.decode(body)
    except msgspec.ValidationError as exc:
        raise ValueError(f"{what} is invalid: {exc}") from None
    except msgspec.DecodeError as exc:
        raise ValueError(f"{what} is not valid JSON: {exc}") from None
    except RecursionError:
        raise ValueError(f"{what} is not valid JSON: nested too deeply") from None
    except UnicodeDecodeError as exc:
        raise ValueError(f"{what} is not valid JSON: not UTF-8 at byte {exc.start}") from None
