"""What the API server refuses in a pod's container resources, in its own words. Pure.

Mirrors kube-apiserver 1.37's `pkg/apis/core/validation` (`validateResourceRequirements`,
`ValidateContainerResourceName`, `ValidateResourceQuantityValue`) and the helpers it calls
(`pkg/apis/core/helper`): no negative quantity; an extended resource (a domain-prefixed name outside
`kubernetes.io/`) is a whole number, needs a limit when requested, and its request equals its limit;
hugepages likewise, a multiple of the page size, and only beside cpu or memory; for the rest a request
is at most its limit; a name without a domain is cpu, memory, ephemeral-storage or hugepages-*.
A Pod is checked after the defaulting every API server does (a limit without a request is the
request); a workload's pod template is not defaulted that way (`SetDefaults_Pod` is for Pods only).

Each error is what the API server puts in its 422 answer: the field path and the body
(`Invalid value: "-2": must be greater than or equal to 0`); `refusal` is its whole message for the
first one (`Pod "p" is invalid: spec.containers[0]...`). Quantities the parser refuses are left to it.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from decimal import Decimal

from kubeview.model.quantity import QuantityError, canonical, parse, to_units

STANDARD_CONTAINER = ("cpu", "memory", "ephemeral-storage")
QOS = ("cpu", "memory")
HUGEPAGES = "hugepages-"
NATIVE_DOMAIN = "kubernetes.io/"
REQUESTS_PREFIX = "requests."
TEMPLATED = {"Deployment", "ReplicaSet", "StatefulSet", "Job"}  # their pods come from spec.template
_NAME = r"([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
_DNS = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*"
_QUALIFIED = re.compile(rf"^(({_DNS})/)?{_NAME}$")


@dataclass(frozen=True, slots=True)
class FieldError:
    """One cause of a 422: `field` and `body` as the API server's Status cause carries them."""

    field: str  # spec.containers[0].resources.requests[nvidia.com/gpu]
    reason: str  # FieldValueInvalid, FieldValueRequired, FieldValueForbidden
    body: str  # Invalid value: "500m": must be an integer

    def __str__(self) -> str:
        return f"{self.field}: {self.body}"


def _invalid(field: str, value: str, detail: str) -> FieldError:
    return FieldError(field, "FieldValueInvalid", f"Invalid value: {json.dumps(value)}: {detail}")


def is_native(name: str) -> bool:
    return "/" not in name or NATIVE_DOMAIN in name


def is_extended(name: str) -> bool:
    """`helper.IsExtendedResourceName`: not native, not `requests.`, a qualified name as a quota key."""
    if is_native(name) or name.startswith(REQUESTS_PREFIX):
        return False
    prefix, _, rest = (REQUESTS_PREFIX + name).rpartition("/")
    return bool(_QUALIFIED.match(REQUESTS_PREFIX + name)) and len(prefix) <= 253 and len(rest) <= 63


def overcommit_allowed(name: str) -> bool:
    return is_native(name) and not name.startswith(HUGEPAGES)


def _name_errors(name: str, field: str) -> list[FieldError]:
    if "/" not in name:
        if name not in STANDARD_CONTAINER and not name.startswith(HUGEPAGES):
            return [_invalid(field, name, "must be a standard resource for containers")]
    elif not is_native(name) and not is_extended(name):
        return [_invalid(field, name, "doesn't follow extended resource name standard")]
    return []


def _value_errors(name: str, value: Decimal, text: str, field: str) -> list[FieldError]:
    errors = []
    if value < 0:
        errors.append(_invalid(field, canonical(text), "must be greater than or equal to 0"))
    if (name == "pods" or is_extended(name)) and (value * 1000).to_integral_value("ROUND_CEILING") % 1000:
        errors.append(_invalid(field, canonical(text), "must be an integer"))
    if name.startswith(HUGEPAGES) and not _page_multiple(name, text):
        errors.append(_invalid(field, canonical(text), f"{canonical(text)} is not positive integer multiple of {name}"))
    return errors


def _page_multiple(name: str, text: str) -> bool:
    """`helper.IsHugePageResourceValueDivisible`."""
    try:
        page = parse(name[len(HUGEPAGES):])
    except QuantityError:
        return False
    if page <= 0 or page != page.to_integral_value():
        return False
    return to_units(name, text) % int(page) == 0


def resource_errors(resources: dict, path: str, defaulted: bool) -> list[FieldError]:
    """The errors of one container's `resources` at `path` (`spec.containers[0].resources`), limits
    first, as `validateResourceRequirements` walks them; `defaulted`: requests default to limits."""
    limits = dict(resources.get("limits") or {})
    requests = dict(resources.get("requests") or {})
    if defaulted:
        requests.update({k: v for k, v in limits.items() if k not in requests})
    values: dict[tuple[str, str], Decimal] = {}
    for side, amounts in (("limits", limits), ("requests", requests)):
        for name, text in amounts.items():
            try:
                values[side, str(name)] = parse(text)
            except QuantityError:
                return []  # the manifest's reader says why
    errors: list[FieldError] = []
    for name, text in limits.items():
        field = f"{path}.limits[{name}]"
        errors += _name_errors(name, field) + _value_errors(name, values["limits", name], text, field)
    for name, text in requests.items():
        field = f"{path}.requests[{name}]"
        errors += _name_errors(name, field) + _value_errors(name, values["requests", name], text, field)
        value, limit = values["requests", name], values.get(("limits", name))
        if limit is not None:
            if value != limit and not overcommit_allowed(name):
                errors.append(_invalid(f"{path}.requests", canonical(text),
                                       f"must be equal to {name} limit of {canonical(limits[name])}"))
            elif value > limit:
                errors.append(_invalid(f"{path}.requests", canonical(text),
                                       f"must be less than or equal to {name} limit of {canonical(limits[name])}"))
        elif not overcommit_allowed(name):
            errors.append(FieldError(f"{path}.limits", "FieldValueRequired",
                                     "Required value: Limit must be set for non overcommitable resources"))
    names = {*limits, *requests}
    if not names & set(QOS) and any(n.startswith(HUGEPAGES) for n in names):
        errors.append(FieldError(path, "FieldValueForbidden", "Forbidden: HugePages require cpu or memory"))
    return errors


def pod_spec_errors(spec: dict, path: str, defaulted: bool) -> list[FieldError]:
    """Every container's and init container's resource errors, in order."""
    errors: list[FieldError] = []
    for group in ("containers", "initContainers"):
        for i, c in enumerate(spec.get(group) or []):
            resources = c.get("resources") if isinstance(c, dict) else None
            if isinstance(resources, dict) and all(isinstance(resources.get(k) or {}, dict)
                                                   for k in ("limits", "requests")):
                errors += resource_errors(resources, f"{path}.{group}[{i}].resources", defaulted)
    return errors


def object_errors(obj: dict) -> list[FieldError]:
    """A Pod's errors, or those of a Deployment's, ReplicaSet's, StatefulSet's or Job's pod template."""
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        return []
    if obj.get("kind") == "Pod":
        return pod_spec_errors(spec, "spec", defaulted=True)
    template = spec.get("template")
    if obj.get("kind") in TEMPLATED and isinstance(template, dict) and isinstance(template.get("spec"), dict):
        return pod_spec_errors(template["spec"], "spec.template.spec", defaulted=False)
    return []


def qualified_kind(obj: dict) -> str:
    """`Pod`, `Deployment.apps`, `Job.batch`: how the API server names the kind in its messages."""
    group = str(obj.get("apiVersion") or "").rpartition("/")[0]
    return f"{obj.get('kind')}.{group}" if group else str(obj.get("kind"))


def refusal(obj: dict, errors: list[FieldError]) -> str:
    """The API server's message for the first error: `Pod "p" is invalid: <field>: <body>`."""
    name = (obj.get("metadata") or {}).get("name", "")
    return f"{qualified_kind(obj)} {json.dumps(name)} is invalid: {errors[0]}"
