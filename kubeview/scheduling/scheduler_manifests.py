"""The second scheduler's objects (manifests/scheduler/second-scheduler/), native or extender, as data.

`kubeview scheduler-manifests` prints them; tests/scheduling/test_scheduler_manifests.py holds them
equal to the shipped YAML, so the hand-written files and this code are one thing. In native mode the
ConfigMap holds native_profile's configuration and the Deployment's pod template carries its hash
(`CONFIG_HASH`): applying a new policy changes the template, so the Deployment controller rolls the
scheduler, which reads its configuration only at start (not instant: one restart, leader election
included). In extender mode the extender's Deployment (10-extender.yaml) does the scoring and takes
new weights live through `PUT /config`. Pure: values in, dicts out.
"""

from __future__ import annotations

import hashlib

import yaml

from kubeview.scheduling.native_profile import SCHEDULER_NAME, profile, scheduler_configuration
from kubeview.scheduling.native_scoring import NativeScoring
from kubeview.scheduling.scheduler_image import IMAGE

NAMESPACE = "kubeview-system"
CONFIG_MAP = "kubeview-scheduler-config"
CONFIG_HASH = "kubeview.io/scheduler-config-sha256"
MODES = ("extender", "native")
EXTENDER = {  # manifests/scheduler/second-scheduler: see docs/scheduler.md for each field
    "urlPrefix": f"http://kubeview-extender.{NAMESPACE}.svc:8888", "prioritizeVerb": "prioritize",
    "weight": 30, "enableHTTPS": False, "nodeCacheCapable": True, "ignorable": True,
    "httpTimeout": "5s", "managedResources": [{"name": "nvidia.com/gpu", "ignoredByScheduler": False}],
}
# Opt-in (`--bind`): the extender posts the GPU pods' Bindings. No longer shipped (#37): on the 2-core
# bench plane the extender kept 0.85 of a plain scheduler's throughput with it, 0.92-0.93 without, and
# prioritize's prediction already counts the pod where kube-scheduler puts it until the watch shows
# the binding (docs/scheduler.md).
BIND = {"bindVerb": "bind"}


def _meta(name: str, namespace: str | None = NAMESPACE) -> dict:
    meta: dict = {"name": name}
    if namespace:
        meta["namespace"] = namespace
    meta["labels"] = {"app.kubernetes.io/name": SCHEDULER_NAME, "app.kubernetes.io/part-of": "kubeview"}
    return meta


def _binding(kind: str, name: str, role_kind: str, role: str, namespace: str | None = None) -> dict:
    return {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": kind, "metadata": _meta(name, namespace),
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": role_kind, "name": role},
            "subjects": [{"kind": "ServiceAccount", "name": SCHEDULER_NAME, "namespace": NAMESPACE}]}


def configuration(mode: str, scoring: NativeScoring | None = None, bind: bool = False) -> dict:
    """The KubeSchedulerConfiguration of the second scheduler in `mode` (`bind`: the extender's bindVerb)."""
    if mode == "native":
        return scheduler_configuration(scoring or NativeScoring(), SCHEDULER_NAME, NAMESPACE)
    return {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
            "leaderElection": {"leaderElect": True, "resourceNamespace": NAMESPACE, "resourceName": SCHEDULER_NAME},
            "profiles": [{"schedulerName": SCHEDULER_NAME}], "extenders": [{**EXTENDER, **(BIND if bind else {})}]}


def default_configuration(scoring: NativeScoring) -> dict:
    """The cluster's own kube-scheduler packing natively (manifests/scheduler/native/
    kubeview-scheduler-config.yaml, the chart's ConfigMap in native mode): every pod, GPU or not."""
    return {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
            "clientConnection": {"kubeconfig": "/etc/kubernetes/scheduler.conf"},
            "leaderElection": {"leaderElect": True}, "profiles": [profile(scoring, "default-scheduler")]}


def config_text(config: dict) -> str:
    return yaml.safe_dump(config, sort_keys=False)


def config_hash(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def objects(mode: str = "extender", scoring: NativeScoring | None = None, image: str = IMAGE,
            bind: bool = False) -> list[dict]:
    """ServiceAccount, RBAC, ConfigMap and Deployment of `kubeview-scheduler` in `mode`."""
    if mode not in MODES:
        raise ValueError(f"mode must be one of {', '.join(MODES)}, not {mode!r}")
    text = config_text(configuration(mode, scoring, bind))
    labels = _meta(SCHEDULER_NAME)["labels"]
    template_meta: dict = {"labels": dict(labels)}
    if mode == "native":
        template_meta["annotations"] = {CONFIG_HASH: config_hash(text)}
    deployment = {
        "apiVersion": "apps/v1", "kind": "Deployment", "metadata": _meta(SCHEDULER_NAME),
        "spec": {"replicas": 1, "selector": {"matchLabels": {"app.kubernetes.io/name": SCHEDULER_NAME}},
                 "template": {"metadata": template_meta, "spec": _pod_spec(image)}}}
    return [
        {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": _meta(SCHEDULER_NAME)},
        _binding("ClusterRoleBinding", "kubeview-scheduler-as-kube-scheduler", "ClusterRole", "system:kube-scheduler"),
        _binding("ClusterRoleBinding", "kubeview-scheduler-as-volume-scheduler", "ClusterRole",
                 "system:volume-scheduler"),
        _binding("RoleBinding", "kubeview-scheduler-extension-apiserver-authentication-reader", "Role",
                 "extension-apiserver-authentication-reader", "kube-system"),
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
         "metadata": _meta("kubeview-scheduler-leader-election"),
         "rules": [{"apiGroups": ["coordination.k8s.io"], "resources": ["leases"], "verbs": ["create"]},
                   {"apiGroups": ["coordination.k8s.io"], "resources": ["leases"], "resourceNames": [SCHEDULER_NAME],
                    "verbs": ["get", "update"]}]},
        _binding("RoleBinding", "kubeview-scheduler-leader-election", "Role", "kubeview-scheduler-leader-election",
                 NAMESPACE),
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": _meta(CONFIG_MAP), "data": {"config.yaml": text}},
        deployment,
    ]


def _pod_spec(image: str) -> dict:
    probe = {"httpGet": {"path": "/healthz", "port": 10259, "scheme": "HTTPS"}}
    return {
        "serviceAccountName": SCHEDULER_NAME, "priorityClassName": "system-cluster-critical",
        "securityContext": {"runAsNonRoot": True, "runAsUser": 65532, "seccompProfile": {"type": "RuntimeDefault"}},
        "containers": [{
            "name": "kube-scheduler", "image": image,
            "command": ["kube-scheduler", "--config=/etc/kubeview-scheduler/config.yaml", "--v=2"],
            "livenessProbe": {**probe, "initialDelaySeconds": 15}, "readinessProbe": probe,
            "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}},
            "securityContext": {"allowPrivilegeEscalation": False, "readOnlyRootFilesystem": True,
                                "capabilities": {"drop": ["ALL"]}},
            "volumeMounts": [{"name": "config", "mountPath": "/etc/kubeview-scheduler", "readOnly": True}]}],
        "volumes": [{"name": "config", "configMap": {"name": CONFIG_MAP}}],
    }
