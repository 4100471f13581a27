"""The Kubernetes objects of a render on a real cluster, built as plain dicts (PURE: no I/O).

One function builds them for both uses, so what `kubeview render-manifests` prints (and what is
checked in under `manifests/render/` for GitOps) is exactly what `kubeview --render` applies:

- the Namespace (Pod Security `restricted` enforced);
- the workload: ConfigMap (the scene), Secret (the consumers' token), producer Deployment and Service
  (`tasks` TCP port for consumers, `status` HTTP port), consumer ReplicaSet;
- RBAC for kubeview itself, for an administrator to apply: read nodes, pods and workloads
  cluster-wide (and PodDisruptionBudgets, for plans), an unbound ClusterRole `kubeview-plan` for those
  who may apply plans (evict, nominate), get/patch `scale` in the render namespace, and what `kubeview --render` needs there
  (server-side apply and delete of the objects above by name, get on the producer's service proxy).

Containers run as a non-root user with a read-only root filesystem, no capabilities and no
service-account token. numba needs a writable cache directory even to load a cached kernel, so the
cache is an emptyDir that an init container fills with the cache warmed when the image was built.
"""

from __future__ import annotations

import base64
import copy
import hashlib
import re
from dataclasses import dataclass
from typing import Any

import yaml

from kubeview.model.quantity import QuantityError, parse

Obj = dict[str, Any]

# Names shared with the render job and the RBAC rules' resourceNames.
SCENE_CONFIGMAP = "render-scene"
TOKEN_SECRET = "render-token"
PRODUCER = "producer"
CONSUMER = "consumer"
SERVICE_ACCOUNT = "kubeview"
TASKS_PORT = 7000
STATUS_PORT = 7001
STATUS_PROXY = f"http:{PRODUCER}:status"  # the service-proxy name: scheme:service:port-name
FIELD_MANAGER = "kubeview"

RUN_AS = 10001  # the image's USER
WARM_CACHE = "/opt/numba-cache"  # where the image build left numba's warmed cache
CACHE_MOUNT = "/var/cache/numba"  # the pods' writable copy
CHECKPOINT = "/out/checkpoint.npz"  # on the producer pod's emptyDir: kept across container restarts
PLACEHOLDER_TOKEN = "replace-me-with-a-random-token"  # only in the checked-in manifests

APP = "kubeview-render"
_DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$")


class SpecError(ValueError):
    """A render setting Kubernetes would reject; the message is one sentence."""


@dataclass(frozen=True)
class RenderSpec:
    """Everything the objects depend on. `token` comes from the caller (random per render)."""

    scene_text: str
    scene_name: str
    token: str
    namespace: str = "kubeview-render"
    replicas: int = 4
    cpu: str = "1000m"
    gpu: int = 0
    image: str = "kubeview:latest"
    job_args: tuple[str, ...] = ()  # the producer's --width/--height/--spp overrides

    @property
    def scene_digest(self) -> str:
        """Changes when the scene (or its overrides) does, so re-applying another restarts the producer."""
        text = self.scene_text + ("\n" + " ".join(self.job_args) if self.job_args else "")
        return hashlib.sha256(text.encode()).hexdigest()

    def check(self) -> None:
        """Raise SpecError for a setting the API server would refuse."""
        if not _DNS_LABEL.match(self.namespace):
            raise SpecError(f"namespace {self.namespace!r} is not a valid name (lowercase letters, digits, '-')")
        if self.replicas < 0:
            raise SpecError(f"--replicas must be 0 or more, not {self.replicas}")
        if self.gpu not in (0, 1):
            raise SpecError(f"--gpu must be 0 or 1, not {self.gpu}")
        try:
            cpu = parse(self.cpu)
        except QuantityError:
            raise SpecError(f"--cpu {self.cpu!r} is not a Kubernetes quantity (e.g. 100m, 1)") from None
        if cpu <= 0:
            raise SpecError(f"--cpu must be more than 0, not {self.cpu!r}")
        if not self.image or any(c.isspace() for c in self.image):
            raise SpecError(f"--image {self.image!r} is not an image reference")
        if not self.token or len(self.token) > 256:
            raise SpecError("the token must be 1 to 256 characters")


def labels(component: str) -> dict[str, str]:
    return {"app.kubernetes.io/name": APP, "app.kubernetes.io/component": component,
            "app.kubernetes.io/part-of": "kubeview"}


def selector(component: str) -> dict[str, str]:
    return {"app.kubernetes.io/name": APP, "app.kubernetes.io/component": component}


def _meta(name: str, namespace: str | None, component: str) -> Obj:
    meta: Obj = {"name": name}
    if namespace is not None:
        meta["namespace"] = namespace
    meta["labels"] = labels(component)
    return meta


# -- Namespace and RBAC ---------------------------------------------------------------------------

def namespace_object(namespace: str) -> Obj:
    meta = _meta(namespace, None, "namespace")
    meta["labels"] = {**meta["labels"], "pod-security.kubernetes.io/enforce": "restricted"}
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": meta}


READ_RULES: list[Obj] = [
    {"apiGroups": [""], "resources": ["nodes", "pods"], "verbs": ["get", "list", "watch"]},
    # read only: the pod view's recent events and the render's start-up reasons (core/v1, as kubectl)
    {"apiGroups": [""], "resources": ["events"], "verbs": ["get", "list", "watch"]},
    {"apiGroups": ["apps"], "resources": ["deployments", "replicasets", "statefulsets"],
     "verbs": ["get", "list", "watch"]},
    {"apiGroups": ["batch"], "resources": ["jobs"], "verbs": ["get", "list", "watch"]},
    # ResourceQuotas (#40): a team's share and the workloads its quota holds back; without it quotas are left out
    {"apiGroups": [""], "resources": ["resourcequotas"], "verbs": ["get", "list", "watch"]},
    # the GPU ledger's DRA kinds (kube/dra.py); without them a 1.34+ cluster showed no DRA GPUs
    {"apiGroups": ["resource.k8s.io"], "resources": ["deviceclasses", "resourceclaims", "resourceslices"],
     "verbs": ["get", "list", "watch"]},
    # read only, where served: DeviceTaintRules (tainted devices are not free) and upstream's pool status
    # answers to compare with (kubeview never creates a ResourcePoolStatusRequest)
    {"apiGroups": ["resource.k8s.io"], "resources": ["devicetaintrules", "resourcepoolstatusrequests"],
     "verbs": ["list", "watch"]},
    # gangs (kube/gangs.py), each read only where discovery serves it: upstream Workload/PodGroup, KAI's
    # PodGroup, Kueue's Workload (and its queues: model/queues/), Volcano's PodGroup; a role without them leaves
    # gangs and queues out, never stops kubeview
    {"apiGroups": ["scheduling.k8s.io"], "resources": ["podgroups", "workloads"], "verbs": ["get", "list", "watch"]},
    {"apiGroups": ["scheduling.run.ai"], "resources": ["podgroups"], "verbs": ["get", "list", "watch"]},
    {"apiGroups": ["kueue.x-k8s.io"], "resources": ["clusterqueues", "localqueues", "resourceflavors", "workloads"],
     "verbs": ["get", "list", "watch"]},
    # Kueue's queue positions (kube/queue_positions.py): its visibility API, polled while a queue screen is up
    {"apiGroups": ["visibility.kueue.x-k8s.io"], "resources": ["clusterqueues/pendingworkloads"], "verbs": ["get"]},
    {"apiGroups": ["scheduling.volcano.sh"], "resources": ["podgroups"], "verbs": ["get", "list", "watch"]},
    # NVIDIA's ComputeDomains (NVLink domains, #35), where its DRA driver serves them
    {"apiGroups": ["resource.nvidia.com"], "resources": ["computedomains"], "verbs": ["get", "list", "watch"]},
    # the autoscalers (kube/autoscaling.py): Karpenter's NodePools and NodeClaims where served, and Cluster
    # Autoscaler's status ConfigMap, that one name only (listed with fieldSelector metadata.name=...,
    # which the authorizer checks against resourceNames); without them node groups are left out
    {"apiGroups": ["karpenter.sh"], "resources": ["nodeclaims", "nodepools"], "verbs": ["get", "list", "watch"]},
    {"apiGroups": [""], "resources": ["configmaps"], "resourceNames": ["cluster-autoscaler-status"],
     "verbs": ["get", "list", "watch"]},
    # `kubeview plan` reads the budgets a plan must respect (kube/evict.py)
    {"apiGroups": ["policy"], "resources": ["poddisruptionbudgets"], "verbs": ["get", "list", "watch"]},
]
# `kubeview plan --apply`: evictions (the API server enforces PDBs) and the target's nomination. Cluster-wide
# by nature (a plan may move a pod of any namespace), so this ClusterRole ships unbound: an administrator
# binds it to the people who may apply plans; kubeview's ServiceAccount never holds it.
PLAN_RULES: list[Obj] = [
    {"apiGroups": [""], "resources": ["pods/eviction"], "verbs": ["create"]},
    {"apiGroups": [""], "resources": ["pods/status"], "verbs": ["patch"]},
]
SCALE_RULES: list[Obj] = [
    {"apiGroups": ["apps"], "resources": ["deployments/scale", "replicasets/scale", "statefulsets/scale"],
     "verbs": ["get", "patch"]},
    # Job parallelism and suspend are merge patches of the Job itself (it has no scale subresource)
    {"apiGroups": ["batch"], "resources": ["jobs"], "verbs": ["patch"]},
]
_APPLY = ["create", "patch", "delete"]  # server-side apply of a new object is authorized as create too
RENDER_RULES: list[Obj] = [
    {"apiGroups": [""], "resources": ["configmaps"], "resourceNames": [SCENE_CONFIGMAP], "verbs": _APPLY},
    {"apiGroups": [""], "resources": ["secrets"], "resourceNames": [TOKEN_SECRET], "verbs": _APPLY},
    {"apiGroups": [""], "resources": ["services"], "resourceNames": [PRODUCER], "verbs": _APPLY},
    {"apiGroups": [""], "resources": ["services/proxy"], "resourceNames": [STATUS_PROXY], "verbs": ["get"]},
    {"apiGroups": ["apps"], "resources": ["deployments"], "resourceNames": [PRODUCER], "verbs": _APPLY},
    {"apiGroups": ["apps"], "resources": ["replicasets"], "resourceNames": [CONSUMER], "verbs": _APPLY},
]


def rbac_objects(namespace: str) -> list[Obj]:
    """ServiceAccount `kubeview` and its roles; bind a user or group instead by editing the subjects."""
    subject = [{"kind": "ServiceAccount", "name": SERVICE_ACCOUNT, "namespace": namespace}]
    rbac = "rbac.authorization.k8s.io/v1"
    out: list[Obj] = [
        {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": _meta(SERVICE_ACCOUNT, namespace, "rbac")},
        {"apiVersion": rbac, "kind": "ClusterRole", "metadata": _meta("kubeview-read", None, "rbac"),
         "rules": READ_RULES},
        {"apiVersion": rbac, "kind": "ClusterRoleBinding", "metadata": _meta(f"kubeview-read-{namespace}", None, "rbac"),
         "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "kubeview-read"},
         "subjects": subject},
        {"apiVersion": rbac, "kind": "ClusterRole", "metadata": _meta("kubeview-plan", None, "rbac"),
         "rules": PLAN_RULES},
    ]
    for role, rules in (("kubeview-scale", SCALE_RULES), ("kubeview-render", RENDER_RULES)):
        out.append({"apiVersion": rbac, "kind": "Role", "metadata": _meta(role, namespace, "rbac"), "rules": rules})
        out.append({"apiVersion": rbac, "kind": "RoleBinding", "metadata": _meta(role, namespace, "rbac"),
                    "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": role},
                    "subjects": subject})
    return out


# -- the workload ---------------------------------------------------------------------------------

_CONTAINER_SECURITY: Obj = {"allowPrivilegeEscalation": False, "readOnlyRootFilesystem": True,
                            "capabilities": {"drop": ["ALL"]}}
_POD_SECURITY: Obj = {"runAsNonRoot": True, "runAsUser": RUN_AS, "runAsGroup": RUN_AS, "fsGroup": RUN_AS,
                      "seccompProfile": {"type": "RuntimeDefault"}}


def _pod_spec(containers: list[Obj], volumes: list[Obj], init: list[Obj] | None = None) -> Obj:
    spec: Obj = {"automountServiceAccountToken": False, "enableServiceLinks": False,
                 "securityContext": _POD_SECURITY}
    if init:
        spec["initContainers"] = init
    spec["containers"] = containers
    spec["volumes"] = volumes
    return spec


def _container(name: str, spec: RenderSpec, command: list[str], resources: Obj, mounts: list[Obj],
               env: list[Obj] | None = None) -> Obj:
    c: Obj = {"name": name, "image": spec.image, "imagePullPolicy": "IfNotPresent", "command": command}
    c["env"] = [{"name": "NUMBA_CACHE_DIR", "value": CACHE_MOUNT}, *(env or [])]
    c["resources"] = resources
    c["securityContext"] = _CONTAINER_SECURITY
    c["volumeMounts"] = mounts
    return c


def _volumes(*extra: Obj) -> list[Obj]:
    return [*extra, {"name": "token", "secret": {"secretName": TOKEN_SECRET, "defaultMode": 0o440}},
            {"name": "numba-cache", "emptyDir": {}}, {"name": "tmp", "emptyDir": {}}]


_COMMON_MOUNTS: list[Obj] = [{"name": "token", "mountPath": "/token", "readOnly": True},
                                {"name": "numba-cache", "mountPath": CACHE_MOUNT}, {"name": "tmp", "mountPath": "/tmp"}]


def _resources(requests: dict[str, str], limits: dict[str, str]) -> Obj:
    return {"requests": requests, "limits": limits}


def scene_configmap(spec: RenderSpec) -> Obj:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": _meta(SCENE_CONFIGMAP, spec.namespace, "producer"),
            "data": {"scene.yaml": spec.scene_text}}


def token_secret(spec: RenderSpec) -> Obj:
    return {"apiVersion": "v1", "kind": "Secret", "metadata": _meta(TOKEN_SECRET, spec.namespace, "producer"),
            "type": "Opaque", "data": {"token": base64.b64encode(spec.token.encode()).decode()}}


def producer_deployment(spec: RenderSpec) -> Obj:
    """One producer (Recreate: two would split the consumers); ready once /status answers. It checkpoints
    into the `out` emptyDir, which outlives the container: a producer restarted after an OOM kill or a
    crash resumes from its finished chunks instead of 0%."""
    command = ["python", "-m", "renderer", "producer", "/scene/scene.yaml",
               "--listen", f"0.0.0.0:{TASKS_PORT}", "--status", f"0.0.0.0:{STATUS_PORT}",
               "-o", "/out/render.png", "--checkpoint", CHECKPOINT, "--token-file", "/token/token",
               "--serve-after-done", *spec.job_args]
    c = _container(PRODUCER, spec, command,
                   _resources({"cpu": "250m", "memory": "256Mi"}, {"cpu": "1", "memory": "512Mi"}),
                   [{"name": "scene", "mountPath": "/scene", "readOnly": True},
                    {"name": "out", "mountPath": "/out"}, *_COMMON_MOUNTS])
    c["ports"] = [{"name": "tasks", "containerPort": TASKS_PORT, "protocol": "TCP"},
                  {"name": "status", "containerPort": STATUS_PORT, "protocol": "TCP"}]
    c["readinessProbe"] = {"httpGet": {"path": "/status", "port": "status"}, "periodSeconds": 2}
    volumes = _volumes({"name": "scene", "configMap": {"name": SCENE_CONFIGMAP}}, {"name": "out", "emptyDir": {}})
    template = {"metadata": {"labels": labels(PRODUCER),
                             "annotations": {"kubeview.io/scene-sha256": spec.scene_digest}},
                "spec": _pod_spec([c], volumes)}
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": _meta(PRODUCER, spec.namespace, PRODUCER),
            "spec": {"replicas": 1, "strategy": {"type": "Recreate"},
                     "selector": {"matchLabels": selector(PRODUCER)}, "template": template}}


def producer_service(spec: RenderSpec) -> Obj:
    return {"apiVersion": "v1", "kind": "Service", "metadata": _meta(PRODUCER, spec.namespace, PRODUCER),
            "spec": {"type": "ClusterIP", "selector": selector(PRODUCER),
                     "ports": [{"name": "tasks", "port": TASKS_PORT, "targetPort": "tasks", "protocol": "TCP"},
                               {"name": "status", "port": STATUS_PORT, "targetPort": "status",
                                "protocol": "TCP", "appProtocol": "http"}]}}


def consumer_resources(spec: RenderSpec) -> Obj:
    """cpu: request as asked, limit one core (a consumer is single-threaded); memory: request < limit,
    the limit leaving room for a cold numba compile. GPUs: limits must equal requests (the API rejects
    an extended resource in requests only)."""
    cpu_limit = spec.cpu if parse(spec.cpu) > 1 else "1"
    if spec.gpu:
        return _resources({"cpu": spec.cpu, "memory": "1Gi", "nvidia.com/gpu": "1"},
                          {"cpu": cpu_limit, "memory": "2Gi", "nvidia.com/gpu": "1"})
    return _resources({"cpu": spec.cpu, "memory": "192Mi"}, {"cpu": cpu_limit, "memory": "512Mi"})


def consumer_replicaset(spec: RenderSpec) -> Obj:
    command = ["python", "-m", "renderer", "consumer", "--connect", f"{PRODUCER}:{TASKS_PORT}",
               "--token-file", "/token/token"]
    env = [{"name": "RENDERER_KERNEL", "value": "auto"}] if spec.gpu else []
    c = _container(CONSUMER, spec, command, consumer_resources(spec), list(_COMMON_MOUNTS), env)
    warm = {"name": "warm-cache", "image": spec.image, "imagePullPolicy": "IfNotPresent",
            "command": ["cp", "-R", f"{WARM_CACHE}/.", CACHE_MOUNT],
            "resources": _resources({"cpu": spec.cpu, "memory": "64Mi"}, {"cpu": "1", "memory": "64Mi"}),
            "securityContext": _CONTAINER_SECURITY,
            "volumeMounts": [{"name": "numba-cache", "mountPath": CACHE_MOUNT}]}
    pod = _pod_spec([c], _volumes(), init=[warm])
    if spec.gpu:
        pod["tolerations"] = [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}]
    return {"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": _meta(CONSUMER, spec.namespace, CONSUMER),
            "spec": {"replicas": spec.replicas, "selector": {"matchLabels": selector(CONSUMER)},
                     "template": {"metadata": {"labels": labels(CONSUMER)}, "spec": pod}}}


def workload_objects(spec: RenderSpec) -> list[Obj]:
    """What `kubeview --render` applies, in order (the producer before its consumers)."""
    return copy.deepcopy([scene_configmap(spec), token_secret(spec), producer_service(spec),
                          producer_deployment(spec), consumer_replicaset(spec)])


def all_objects(spec: RenderSpec) -> list[Obj]:
    """What `kubeview render-manifests` prints: Namespace, RBAC, then the workload."""
    return [namespace_object(spec.namespace), *copy.deepcopy(rbac_objects(spec.namespace)), *workload_objects(spec)]


def object_path(obj: Obj) -> str:
    """The API path of an object (for server-side apply and delete)."""
    group_version = obj["apiVersion"]
    base = f"/api/{group_version}" if "/" not in group_version else f"/apis/{group_version}"
    plural = _PLURALS[obj["kind"]]
    ns = obj["metadata"].get("namespace")
    where = f"{base}/namespaces/{ns}/{plural}" if ns else f"{base}/{plural}"
    return f"{where}/{obj['metadata']['name']}"


_PLURALS = {"Namespace": "namespaces", "ConfigMap": "configmaps", "Secret": "secrets", "Service": "services",
            "ServiceAccount": "serviceaccounts", "Deployment": "deployments", "ReplicaSet": "replicasets",
            "ClusterRole": "clusterroles", "ClusterRoleBinding": "clusterrolebindings", "Role": "roles",
            "RoleBinding": "rolebindings"}


class _Dumper(yaml.SafeDumper):
    """Block style; multi-line strings (the scene) as literal blocks, so the YAML reads like the file."""

    def ignore_aliases(self, data: Any) -> bool:  # no &anchors for the rule lists shared between objects
        return True


def _str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_Dumper.add_representer(str, _str)


def to_yaml(objects: list[Obj]) -> str:
    """Multi-document YAML for `kubectl apply -f -`, keys in the order built."""
    return "".join("---\n" + yaml.dump(o, Dumper=_Dumper, sort_keys=False, default_flow_style=False)
                   for o in objects)
