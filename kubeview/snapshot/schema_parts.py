"""JSON Schema pieces the snapshot sections share (the autoscalers', quotas', queues' schemas).

One place for the fragments and the object helper those sections had each written out again; every
property of an object is required (null stands for "not known"), as docs/snapshot.md says.
"""

from __future__ import annotations

STR = {"type": "string"}
OPT_STR = {"type": ["string", "null"]}
OPT_INT = {"type": ["integer", "null"]}
COUNT = {"type": "integer", "minimum": 0}
TIME = {"type": ["string", "null"], "description": "ISO 8601 UTC"}


def obj(props: dict, description: str = "") -> dict:
    """An object schema whose properties are all required."""
    out = {"type": "object", "properties": props, "required": list(props)}
    if description:
        out["description"] = description
    return out
