"""The real Cluster Autoscaler on the realk8s plane: its kwok node groups, the binary, and what it wrote.

CA (kubernetes/autoscaler cluster-autoscaler, built with `-tags kwok` by
scripts/build-cluster-autoscaler.sh) runs with its kwok cloud provider
(cluster-autoscaler/cloudprovider/kwok): it reads its config from the ConfigMap `kwok-provider-config`
(key `config`) and the node templates from `kwok-provider-templates` (key `templates`), both in the
namespace `POD_NAMESPACE` says; node groups are the templates grouped by the label `GROUP_LABEL`, with
min/max from the annotations `cluster-autoscaler.kwok.nodegroup/{min,max}-count`
(kwok_constants.go, kwok_helpers.go parseAnnotations). A scale-up creates Nodes named `<group>-xxxxx`
annotated `kwok.x-k8s.io/node: fake`, which the plane's kwok makes Ready like any other.

The groups, each with its own pods (a nodeSelector on `GROUP_LABEL`, so no expander choice is involved):
- `gpu-pool`: 8 GPUs a node, max `GPU_MAX`; more pods than that many nodes hold -> CA grows it to
  its max and says "max node group size reached" for the rest (the seed's story);
- `cpu-pool`: a plain group that scales up and settles;
- `slow-pool`: its nodes carry a startup taint (`startup-taint.cluster-autoscaler.kubernetes.io/`,
  utils/taints/taints.go) that nothing removes, so CA counts them as not started: scale-up
  InProgress until `--max-node-provision-time`, then ScaleUpTimedOut and a backoff ("timeout");
- `batch-pool`: 16-cpu nodes, max 10, but CA's own cluster-wide limit `--cores-total` leaves room for
  two of them once the groups above have their nodes (`CORES_TOTAL`): "exceeded quota: "cluster-wide",
  resources: cpu" (core/scaleup/orchestrator/skippedreasons.go NewMaxResourceLimitReached);
- `quota-pool`: a ValidatingAdmissionPolicy refuses its Nodes with a cloud's quota words (a stand-in
  for the cloud: the API server's refusal is what the kwok provider's IncreaseSize returns, as a
  cloud's API error is for a real provider), so CA's scale-up fails: FailedToScaleUpGroup and a
  backoff with those words in `backoffInfo.errorMessage`.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import yaml
from kubernetes import client

from .plane import Plane
from .procs import Proc, free_port, wait_until

REPO = Path(__file__).resolve().parents[2]
BUILD = REPO / "scripts" / "build-cluster-autoscaler.sh"
NS = "kube-system"  # where CA runs, its status ConfigMap and the kwok provider's ConfigMaps
STATUS = "cluster-autoscaler-status"
GROUP_LABEL = "cloud.google.com/gke-nodepool"
GPU_LABEL = "cloud.google.com/gke-accelerator"
GPU_TYPE = "nvidia-h100-80gb"
GPU_MAX = 6
PROVISION_TIME = "40s"  # --max-node-provision-time: slow-pool's scale-up times out after this
QUOTA_WORDS = ("QUOTA_EXCEEDED: Quota 'NVIDIA_H100_GPUS' exceeded. Limit: 48.0 in region us-central1.")
# cores the story's nodes have before batch-pool: gpu-pool 6 x 32, slow-pool 1 x 4, cpu-pool 3 x 8 = 220;
# and two batch-pool nodes of 16
CORES_TOTAL = 6 * 32 + 1 * 4 + 3 * 8 + 2 * 16
STARTUP_TAINT = "startup-taint.cluster-autoscaler.kubernetes.io/driver-install"
# group -> (min, max, allocatable, extra labels, taints)
GROUPS: dict[str, tuple[int, int, dict[str, str], dict[str, str], list[dict]]] = {
    "gpu-pool": (0, GPU_MAX, {"cpu": "32", "memory": "256Gi", "pods": "110", "nvidia.com/gpu": "8"},
                 {GPU_LABEL: GPU_TYPE}, []),
    "cpu-pool": (0, 3, {"cpu": "8", "memory": "32Gi", "pods": "110"}, {}, []),
    "slow-pool": (0, 4, {"cpu": "4", "memory": "16Gi", "pods": "110"}, {},
                  [{"key": STARTUP_TAINT, "value": "true", "effect": "NoSchedule"}]),
    "batch-pool": (0, 10, {"cpu": "16", "memory": "64Gi", "pods": "110"}, {}, []),
    "quota-pool": (0, 4, {"cpu": "16", "memory": "64Gi", "pods": "110", "nvidia.com/gpu": "4"},
                   {GPU_LABEL: GPU_TYPE}, []),
}


def binary() -> Path | None:
    """The built binary, or None (build-cluster-autoscaler.sh --print-dir says where it would be)."""
    out = subprocess.run(["bash", str(BUILD), "--print-dir"], capture_output=True, text=True, check=True)
    path = Path(out.stdout.strip()) / "cluster-autoscaler"
    return path if path.is_file() else None


def template(name: str, max_size: int | None = None) -> dict:
    lo, hi, alloc, labels, taints = GROUPS[name]
    hi = hi if max_size is None else max_size
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": f"{name}-template",
                         "labels": {GROUP_LABEL: name, "kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64",
                                    "type": "kwok", **labels},
                         "annotations": {"cluster-autoscaler.kwok.nodegroup/min-count": str(lo),
                                         "cluster-autoscaler.kwok.nodegroup/max-count": str(hi)}},
            "spec": {"taints": taints}, "status": {"capacity": alloc, "allocatable": alloc}}


def provider_config() -> dict:
    """The kwok provider's config (kwok_types.go KwokProviderConfig); skipTaint: its own
    `kwok-provider` taint would need a toleration on every pod."""
    return {"apiVersion": "v1alpha1", "readNodesFrom": "configmap",
            "nodegroups": {"fromNodeLabelKey": GROUP_LABEL},
            "nodes": {"skipTaint": True, "gpuConfig": {"gpuLabelKey": GPU_LABEL, "availableGPUTypes": {GPU_TYPE: {}}}},
            "configmap": {"name": "kwok-provider-templates"}}


def quota_policy() -> tuple[dict, dict]:
    """The ValidatingAdmissionPolicy (and its binding) that refuses quota-pool's Nodes: the cloud."""
    policy = {"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicy",
              "metadata": {"name": "cloud-quota"},
              "spec": {"failurePolicy": "Fail",
                       "matchConstraints": {"resourceRules": [{"apiGroups": [""], "apiVersions": ["v1"],
                                                               "operations": ["CREATE"], "resources": ["nodes"]}]},
                       "validations": [{"expression": f"!has(object.metadata.labels) || "
                                                      f"!('{GROUP_LABEL}' in object.metadata.labels) || "
                                                      f"object.metadata.labels['{GROUP_LABEL}'] != 'quota-pool'",
                                        "message": QUOTA_WORDS}]}}
    binding = {"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicyBinding",
               "metadata": {"name": "cloud-quota"},
               "spec": {"policyName": "cloud-quota", "validationActions": ["Deny"]}}
    return policy, binding


def apply(plane: Plane, *docs: dict) -> None:
    out = subprocess.run([str(plane.bin / "kubectl"), f"--kubeconfig={plane.kubeconfig}", "apply", "-f", "-"],
                         input=json.dumps({"apiVersion": "v1", "kind": "List", "items": list(docs)}),
                         capture_output=True, text=True, timeout=60)
    if out.returncode:
        raise AssertionError(f"kubectl apply: {out.stderr.strip()}")


def setup_groups(plane: Plane, maxes: dict[str, int] | None = None) -> None:
    """The kwok provider's two ConfigMaps (`maxes`: other max sizes than GROUPS') and the quota policy;
    the policy is in force (a dry-run create of a quota-pool Node is refused) before this returns.
    CA reads them when it starts."""
    templates = "\n---\n".join(yaml.safe_dump(template(g, (maxes or {}).get(g))) for g in GROUPS)
    policy, binding = quota_policy()
    apply(plane,
          {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "kwok-provider-config", "namespace": NS},
           "data": {"config": yaml.safe_dump(provider_config())}},
          {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "kwok-provider-templates", "namespace": NS},
           "data": {"templates": templates}},
          policy, binding)
    probe = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "quota-probe", "labels": {GROUP_LABEL: "quota-pool"}}}

    def refused() -> bool:
        out = subprocess.run([str(plane.bin / "kubectl"), f"--kubeconfig={plane.kubeconfig}", "create", "--dry-run=server",
                              "-f", "-"], input=json.dumps(probe), capture_output=True, text=True, timeout=60)
        return out.returncode != 0 and "QUOTA_EXCEEDED" in out.stderr

    wait_until(refused, 30, "the cloud-quota policy refusing quota-pool nodes")


def start(plane: Plane, ca: Path, extra: list[str] | None = None) -> Proc:
    """Start CA against the plane (the admin's kubeconfig, leader election off, a 2 s loop, no scale-down)."""
    argv = [str(ca), "--cloud-provider=kwok", f"--kubeconfig={plane.kubeconfig}", f"--namespace={NS}",
            "--leader-elect=false", "--scan-interval=2s", f"--max-node-provision-time={PROVISION_TIME}",
            "--scale-down-enabled=false", f"--cores-total=0:{CORES_TOTAL}", f"--address=127.0.0.1:{free_port()}", "--kube-client-qps=50",
            "--kube-client-burst=100", "--v=2", *(extra or [])]
    env = {"KWOK_PROVIDER_MODE": "local", "KUBECONFIG": str(plane.kubeconfig), "POD_NAMESPACE": NS}
    proc = Proc("cluster-autoscaler", argv, plane.logs, env=env)
    plane.procs["cluster-autoscaler"] = proc
    return proc


def status(core: client.CoreV1Api) -> dict | None:
    """CA's status ConfigMap as the API returns it (a plain dict), or None before CA wrote it."""
    try:
        return core.api_client.sanitize_for_serialization(core.read_namespaced_config_map(STATUS, NS))
    except client.ApiException as exc:
        if exc.status == 404:
            return None
        raise


def status_doc(cm: dict | None) -> dict:
    return yaml.safe_load(((cm or {}).get("data") or {}).get("status") or "{}") or {}


def group_status(cm: dict | None, name: str) -> dict:
    return next((g for g in status_doc(cm).get("nodeGroups") or () if g.get("name") == name), {})


def gpu_pod(name: str, group: str, gpus: int = 8, cpu: str = "1", labels: dict[str, str] | None = None) -> dict:
    """A pod that only `group`'s nodes take (nodeSelector), asking for `gpus` GPUs (0: none)."""
    limits = {"cpu": cpu, "memory": "1Gi", **({"nvidia.com/gpu": str(gpus)} if gpus else {})}
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "labels": {"app": "batch", "group": group, **(labels or {})}},
            "spec": {"nodeSelector": {GROUP_LABEL: group}, "terminationGracePeriodSeconds": 0,
                     "containers": [{"name": "work", "image": "busybox", "resources": {"requests": limits, "limits": limits}}]}}


def events_for(core: client.CoreV1Api, namespace: str, reason: str) -> list[dict]:
    items = core.list_namespaced_event(namespace, field_selector=f"reason={reason}").items
    return [core.api_client.sanitize_for_serialization(e) for e in items]
