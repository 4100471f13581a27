"""The JSON Schema of `kubeview snapshot --json` (`snapshot --schema`), and its version.

The document itself is built in document.py; each part's schema lives beside the part (gangs.py,
queues.py, ...). docs/snapshot.md is the field reference.
"""

from __future__ import annotations

from kubeview.snapshot.autoscaling import AUTOSCALING_SCHEMA
from kubeview.snapshot.dra import DRA_SCHEMA
from kubeview.snapshot.gangs import GANG_SCHEMA
from kubeview.snapshot.gpus import GPUS_SCHEMA
from kubeview.snapshot.jobs import JOB_SCHEMA
from kubeview.snapshot.queues import QUEUES_SCHEMA
from kubeview.snapshot.quotas import QUOTAS_SCHEMA

SCHEMA_VERSION = 4  # 2: nvidia.com/gpu figures count DRA devices, a pod's claim-mapped requests moved to "dra"; `jobs` (batch/v1 Jobs, #18)
# 3: `gangs` (#27: upstream, KAI, Kueue, Volcano groups, members and their fit), `cluster.noGangs`
#    and (#27 DRA 1.37): a tainted DRA device (NoSchedule/NoExecute) is no longer free: `dra.devices[].state` "tainted"
#    (#39 added `autoscaling`: node groups and pending pods' waits; a new field, so still 3)
# 4: `quotas` (#40: ResourceQuotas, kubeview's count beside the controller's, workloads held by quota).
#    Only a new field, but issue #40 asked for the bump: a reader of 4 may rely on `quotas` being there
#    (and on `queues`, Kueue's queues, #40 too)

# -- JSON Schema (draft 2020-12; the subset kubeview.snapshot.schema understands) ------------------
_INT = {"type": "integer"}
_COUNT = {"type": "integer", "minimum": 0}
_STR = {"type": "string"}
_OPT_STR = {"type": ["string", "null"]}
_OPT_NUM = {"type": ["number", "null"]}
_TIME = {"type": ["string", "null"], "description": "ISO 8601 UTC, e.g. 2026-11-22T10:05:32Z"}
_AMOUNTS = {"type": "object", "additionalProperties": _INT,
            "description": "resource name -> amount in model units (see units)"}


def _obj(props: dict, required: list[str] | None = None, description: str = "") -> dict:
    out = {"type": "object", "properties": props, "required": required or list(props)}
    if description:
        out["description"] = description
    return out


SNAPSHOT_SCHEMA: dict = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "$id": f"https://kubeview.dev/schemas/snapshot-v{SCHEMA_VERSION}.json",
    "title": "kubeview snapshot",
    "description": "A cluster's allocation at one moment: `kubeview snapshot --json`.",
    "type": "object",
    "required": ["schemaVersion", "generatedAt", "units", "cluster", "nodes", "pods", "workloads", "jobs",
                 "gangs", "fragmentation", "dra", "autoscaling", "quotas",
                 "queues", "gpus"],
    "properties": {
        "schemaVersion": {"const": SCHEMA_VERSION, "type": "integer"},
        "generatedAt": _TIME,
        "units": {"type": "object", "additionalProperties": {"enum": ["millicores", "bytes", "count"]}},
        "cluster": _obj({
            "title": _STR,
            "connection": _obj({"state": {"enum": ["connecting", "live", "stale", "reconnecting", "failed"]},
                                "since": _TIME, "detail": _STR}),
            "partial": {"type": ["object", "null"], "properties": {"reason": _STR}, "required": ["reason"],
                        "description": "set when node figures do not count every pod (e.g. -n NAMESPACE)"},
            "noGangs": {**_OPT_STR, "description": "why some gang kinds are not shown (their lists were refused)"},
            "kubernetes": _obj({"version": {**_OPT_STR, "description": "the API server's gitVersion (null: the "
                                            "embedded cluster, or the server did not say)"},
                                "notServed": {"type": "object", "additionalProperties": _STR,
                                              "description": "built-in API kubeview reads that this server does "
                                              "not serve (\"gang API\", \"DRA\") -> why"},
                                "schedulerSkew": {"type": "array", "items": _STR,
                                                  "description": "kube-scheduler Deployments or StatefulSets "
                                                  "whose image's minor version does not match the API server's, "
                                                  "one line each (the version skew policy's verdict)"}}),
            "version": _COUNT,
            "synced": {"type": "array", "items": _STR},
            "nodes": _COUNT,
            "readyNodes": _COUNT,
            "pods": _COUNT,
            "pendingPods": _COUNT,
            "totals": {"type": "object", "additionalProperties": {"$ref": "#/$defs/figures"}},
            "usage": _obj({"source": _OPT_STR, "at": _TIME, "window": _OPT_STR, "error": _OPT_STR,
                           "idleGpus": _COUNT, "idlePods": _COUNT, "unmeasuredGpuPods": _COUNT,
                           "idleThreshold": {"type": "number", "description": "percent utilization"}}),
        }),
        "nodes": {"type": "array", "items": {"$ref": "#/$defs/node"}},
        "pods": {"type": "array", "items": {"$ref": "#/$defs/pod"}},
        "workloads": {"type": "array", "items": {"$ref": "#/$defs/workload"}},
        "jobs": {"type": "array", "items": {"$ref": "#/$defs/job"}},
        "gangs": {"type": "array", "items": {"$ref": "#/$defs/gang"}},
        "fragmentation": {"$ref": "#/$defs/fragmentation"},
        "dra": {**DRA_SCHEMA, "description": "DRA devices (resource.k8s.io/v1) and the claims holding them"},
        "autoscaling": AUTOSCALING_SCHEMA,
        "quotas": QUOTAS_SCHEMA,
        "gpus": GPUS_SCHEMA,
        "queues": QUEUES_SCHEMA,
    },
    "$defs": {
        "figures": _obj({
            "capacity": _INT, "allocatable": _INT, "requested": _INT, "limits": _INT, "free": _INT,
            "usage": {**_OPT_NUM, "description": "measured use (cpu, memory only); null when not measured"},
        }, description="one resource on one node (or the cluster): amounts in model units"),
        "node": _obj({
            "name": _STR,
            "ready": {"type": "boolean"},
            "schedulable": {"type": "boolean", "description": "Ready and not cordoned"},
            "unschedulable": {"type": "boolean", "description": "spec.unschedulable (cordoned)"},
            "conditions": {"type": "object", "additionalProperties": _STR},
            "taints": {"type": "array", "items": _obj({"key": _STR, "value": _OPT_STR, "effect": _STR})},
            "labels": {"type": "object", "additionalProperties": _STR},
            "podCount": _COUNT,
            "gpuLargestFit": _COUNT,
            "gpuUtilization": {"type": ["array", "null"], "items": {"type": "number"}},
            "gpuMemoryUsed": _OPT_NUM,
            "resources": {"type": "object", "additionalProperties": {"$ref": "#/$defs/figures"}},
        }),
        "pod": _obj({
            "namespace": _STR,
            "name": _STR,
            "node": _OPT_STR,
            "phase": _STR,
            "deleting": {"type": "boolean"},
            "restarts": _COUNT,
            "owner": {"type": ["object", "null"], "properties": {"kind": _STR, "name": _STR}},
            "requests": _AMOUNTS,
            "limits": _AMOUNTS,
            "pendingReason": _OPT_STR,
            "usage": {"type": ["object", "null"],
                      "properties": {"cpu": _OPT_NUM, "memory": _OPT_NUM,
                                     "gpuUtilization": {"type": ["array", "null"], "items": {"type": "number"}},
                                     "gpuMemoryUsed": _OPT_NUM,
                                     "idleGpus": {"type": ["integer", "null"],
                                                  "description": "GPUs below the idle threshold; null: not measured"}}},
        }),
        "workload": _obj({
            "kind": {"enum": ["ReplicaSet", "Deployment", "StatefulSet"]},
            "namespace": _STR, "name": _STR,
            "desired": _COUNT, "ready": _COUNT, "current": _COUNT, "available": _COUNT,
        }),
        "job": JOB_SCHEMA,
        "gang": GANG_SCHEMA,
        "fragmentation": _obj({
            "resource": _STR,
            "freeTotal": _COUNT,
            "largestFit": _COUNT,
            "nodes": _COUNT,
            "sizes": {"type": "array", "items": _obj({"size": _COUNT, "placeable": _COUNT, "ideal": _COUNT,
                                                       "stranded": _COUNT, "fitsANode": {"type": "boolean"}})},
        }),
    },
}
