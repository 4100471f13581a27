"""kube-scheduler's `bind` verb: ExtenderBindingArgs in, ExtenderBindingResult out (pure encoding).

With `bindVerb` set, kube-scheduler hands the binding of every pod the extender is interested in
(`managedResources`) to the extender instead of posting it itself. kubeview then posts the Binding
through the API server and so knows, for certain and at once, where each GPU pod went; see
docs/scheduler.md. The wire format is Go's field names (`extender/v1` has no json tags).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from kubeview.scheduling import wire_types as w
from kubeview.scheduling.errors import ProtocolError

# DNS-1123 subdomain (pod and node names, namespaces are labels, a subset); uid as the apiserver makes it
_NAME = re.compile(r"[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?")
_UID = re.compile(r"[0-9A-Za-z-]{1,64}")


@dataclass(frozen=True, slots=True)
class BindingArgs:
    namespace: str
    name: str
    uid: str
    node: str


class BindError(Exception):
    """The Binding could not be posted; the message is one sentence for kube-scheduler's log."""


def decode_binding(body: w.Body) -> BindingArgs:
    """Parse and validate an ExtenderBindingArgs body; ProtocolError says which field is wrong."""
    try:
        doc = w.decode(w.BINDING, body, "binding")
    except ValueError as exc:
        raise ProtocolError(str(exc)) from None
    for key, value, pattern in (("PodName", doc.pod_name, _NAME), ("PodNamespace", doc.pod_namespace, _NAME),
                                ("PodUID", doc.pod_uid, _UID), ("Node", doc.node, _NAME)):
        if not pattern.fullmatch(value):
            raise ProtocolError(f"binding field {key} must be a Kubernetes name, not {json.dumps(value)[:80]}")
    return BindingArgs(doc.pod_namespace, doc.pod_name, doc.pod_uid, doc.node)


def binding_reply(error: str = "") -> bytes:
    """ExtenderBindingResult: an empty Error means bound."""
    return json.dumps({"Error": error}).encode()
