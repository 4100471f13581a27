"""The pure half of `kubeview bench cluster`: the nodes, ResourceSlices and pods it creates.

The pod mix is `bench model`'s (model_cluster.Cluster), re-homed: every pod in the run's namespace,
bound by `nodeName` to the run's nodes (named as bench scheduler names them), no ownerReferences
(the garbage collector deletes pods whose owner does not exist). Its pending pods name a scheduler
that does not run, so they stay Pending as in the model. Nodes carry kwok's annotation so kwok
makes them Ready and their pods Running.
"""

from __future__ import annotations

from kubeview.bench.model_cluster import Cluster
from kubeview.bench.model_dra import DRIVER, resource_slice
from kubeview.bench.scheduler.kube_plan import RUN_LABEL, namespace_name

KWOK_ANNOTATION = "kwok.x-k8s.io/node"
NO_SCHEDULER = "kubeview-bench-none"  # no scheduler has this name: the model's pending pods stay Pending


def gpu_counts(nodes: int) -> tuple[int, int]:
    """(GPU nodes, of which DRA nodes): a tenth of the nodes have GPUs, a fifth of those publish them
    as ResourceSlices (bench model: 500 of 5,000, and --dra's 1,000 DRA nodes scaled down)."""
    gpu = max(1, nodes // 10) if nodes > 1 else 0
    return gpu, gpu // 5


def node_name(run: str, model_name: str) -> str:
    """The name bench_node gives a model node."""
    return f"kvb-{run}-{model_name}"


def plan(run: str, nodes: int, pods: int) -> tuple[list[dict], list[dict], list[dict]]:
    """(node templates for bench_node, ResourceSlices, Pods) for one run."""
    gpu, dra = gpu_counts(nodes)
    cluster = Cluster(nodes, gpu, pods)
    made = []
    for i, obj in enumerate(cluster.nodes()):
        for key in ("uid", "resourceVersion", "creationTimestamp"):
            obj["metadata"].pop(key, None)
        obj["spec"].pop("providerID", None)
        if i < dra:  # DRA GPU nodes publish their GPUs as slices, not as an extended resource
            for key in ("capacity", "allocatable"):
                obj["status"][key].pop("nvidia.com/gpu", None)
        obj["metadata"]["annotations"] = {KWOK_ANNOTATION: "fake"}
        made.append(obj)
    slices = [_slice(run, name, i) for i, name in enumerate(cluster.node_names[:dra])]
    return made, slices, [_pod(run, p) for p in cluster.pods()]


def _slice(run: str, model_name: str, i: int) -> dict:
    obj = resource_slice(node_name(run, model_name), i)
    meta = obj["metadata"]
    meta.pop("resourceVersion", None)
    meta.pop("ownerReferences", None)  # the Node's uid is the API server's; the label deletes it
    meta["name"] = f"kvb-{run}-{i:05d}-{DRIVER}"
    meta["labels"] = {RUN_LABEL: run}
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", **obj}


def _pod(run: str, obj: dict) -> dict:
    meta = obj["metadata"]
    for key in ("uid", "resourceVersion", "creationTimestamp", "ownerReferences", "generateName"):
        meta.pop(key, None)
    meta["namespace"] = namespace_name(run)
    meta["labels"][RUN_LABEL] = run
    spec = obj["spec"]
    spec["terminationGracePeriodSeconds"] = 0
    if spec.get("nodeName"):
        spec["nodeName"] = node_name(run, spec["nodeName"])
    else:
        spec["schedulerName"] = NO_SCHEDULER
    obj.pop("status", None)
    return {"apiVersion": "v1", "kind": "Pod", **obj}
