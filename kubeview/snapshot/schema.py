"""A small JSON Schema checker for the subset kubeview's own schemas use.

kubeview publishes the JSON Schema of `snapshot --json` and checks its own output against it in
tests, without making `jsonschema` a dependency. Supported keywords: type, properties, required,
additionalProperties, items, enum, const, minimum, $ref (local `#/$defs/...`). Anything else is
ignored, so keep the published schemas to this subset (tests also run `jsonschema` when present).
"""

from __future__ import annotations

_TYPES = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "number": lambda v: isinstance(v, int | float) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
}


def validate(doc: object, schema: dict, *, limit: int = 20) -> list[str]:
    """Errors as "path: problem" strings; empty when `doc` conforms. Stops after `limit` errors."""
    errors: list[str] = []
    _check(doc, schema, schema, "$", errors, limit)
    return errors


def _resolve(ref: str, root: dict) -> dict:
    if not ref.startswith("#/"):
        raise ValueError(f"only local $ref is supported: {ref}")
    node: object = root
    for part in ref[2:].split("/"):
        node = node[part]  # type: ignore[index]
    return node  # type: ignore[return-value]


def _check(value: object, schema: dict, root: dict, path: str, errors: list[str], limit: int) -> None:
    if len(errors) >= limit:
        return
    if "$ref" in schema:
        schema = _resolve(schema["$ref"], root)
    expected = schema.get("type")
    if expected is not None:
        names = expected if isinstance(expected, list) else [expected]
        if not any(_TYPES[n](value) for n in names):
            errors.append(f"{path}: expected {'/'.join(names)}, got {type(value).__name__}")
            return
    if "enum" in schema and value not in schema["enum"]:
        errors.append(f"{path}: {value!r} is not one of {schema['enum']}")
    if "const" in schema and value != schema["const"]:
        errors.append(f"{path}: expected {schema['const']!r}")
    if "minimum" in schema and isinstance(value, int | float) and value < schema["minimum"]:
        errors.append(f"{path}: {value} < minimum {schema['minimum']}")
    if isinstance(value, dict):
        for key in schema.get("required", ()):
            if key not in value:
                errors.append(f"{path}: missing required {key!r}")
        props = schema.get("properties", {})
        extra = schema.get("additionalProperties", True)
        for key, item in value.items():
            if key in props:
                _check(item, props[key], root, f"{path}.{key}", errors, limit)
            elif extra is False:
                errors.append(f"{path}: unexpected property {key!r}")
            elif isinstance(extra, dict):
                _check(item, extra, root, f"{path}.{key}", errors, limit)
    if isinstance(value, list) and "items" in schema:
        for i, item in enumerate(value):
            _check(item, schema["items"], root, f"{path}[{i}]", errors, limit)
            if len(errors) >= limit:
                return
