"""manifests/scheduler: least-privilege RBAC, an extender Deployment the real CLI accepts, and
scheduler configurations that point kube-scheduler at the verbs the server serves."""

from __future__ import annotations

from pathlib import Path

import yaml

from kubeview.cli import build_parser

MANIFESTS = Path(__file__).resolve().parents[2] / "manifests" / "scheduler"


def _docs(name: str) -> list[dict]:
    return [d for d in yaml.safe_load_all((MANIFESTS / name).read_text()) if d]


def _kind(docs: list[dict], kind: str, name: str | None = None) -> dict:
    return next(d for d in docs if d["kind"] == kind and (name is None or d["metadata"]["name"] == name))


def test_extender_rbac_only_reads_and_binding_is_opt_in() -> None:
    docs = _docs("00-namespace-rbac.yaml")
    role = _kind(docs, "ClusterRole", "kubeview-extender")
    assert role["rules"] == [{"apiGroups": [""], "resources": ["nodes", "pods"], "verbs": ["get", "list", "watch"]},
                             {"apiGroups": ["resource.k8s.io"],
                              "resources": ["deviceclasses", "resourceslices", "resourceclaims"],
                              "verbs": ["get", "list", "watch"]},
                             # 1.37: a tainted device is not free (DeviceTaintRule); pool status is read
                             # where served (alpha); both optional, dropped on a 403
                             {"apiGroups": ["resource.k8s.io"],
                              "resources": ["devicetaintrules", "resourcepoolstatusrequests"],
                              "verbs": ["list", "watch"]}]
    binding = _kind(docs, "ClusterRoleBinding", "kubeview-extender")
    assert binding["roleRef"]["name"] == "kubeview-extender"
    assert binding["subjects"] == [{"kind": "ServiceAccount", "name": "kubeview-extender",
                                    "namespace": "kubeview-system"}]
    # with `bindVerb: bind` (not shipped): create on pods/binding, for the same account only
    bind = _docs("bind/pods-binding-rbac.yaml")
    assert _kind(bind, "ClusterRole")["rules"] == [{"apiGroups": [""], "resources": ["pods/binding"],
                                                    "verbs": ["create"]}]
    assert _kind(bind, "ClusterRoleBinding")["subjects"] == binding["subjects"]


def test_extender_deployment_runs_the_real_command() -> None:
    docs = _docs("10-extender.yaml")
    deploy = _kind(docs, "Deployment")
    pod = deploy["spec"]["template"]["spec"]
    assert pod["serviceAccountName"] == "kubeview-extender"
    container = pod["containers"][0]
    args = build_parser().parse_args(container["args"])
    assert (args.command, args.listen, args.policy) == ("extender", "0.0.0.0:8888", "pack")
    mount = container["volumeMounts"][0]["mountPath"]
    assert args.token_file.startswith(mount + "/")
    assert container["readinessProbe"]["httpGet"]["path"] == "/readyz"
    service = _kind(docs, "Service")
    assert service["spec"]["selector"].items() <= deploy["spec"]["template"]["metadata"]["labels"].items()
    assert service["spec"]["ports"][0]["port"] == 8888


def _check_extender(config: dict) -> dict:
    assert config["apiVersion"] == "kubescheduler.config.k8s.io/v1"
    assert config["kind"] == "KubeSchedulerConfiguration"
    (ext,) = config["extenders"]
    # POST /prioritize only: no filter (kube-scheduler's own NodeResourcesFit is the fresher one), no bind
    # (kube-scheduler's binder; the extender's prediction counts the pod until the watch shows it)
    assert "filterVerb" not in ext and "bindVerb" not in ext and ext["prioritizeVerb"] == "prioritize"
    assert ext["weight"] * 10 > 250  # one extender point outvotes Fit + BalancedAllocation + ImageLocality
    assert ext["nodeCacheCapable"] is True and ext["ignorable"] is True
    assert ext["managedResources"] == [{"name": "nvidia.com/gpu", "ignoredByScheduler": False}]
    assert ext["urlPrefix"].endswith(":8888")
    return ext


def test_default_scheduler_configuration() -> None:
    (config,) = _docs("default-scheduler/kubeview-scheduler-config.yaml")
    assert config["profiles"] == [{"schedulerName": "default-scheduler"}]
    assert "EXTENDER_CLUSTER_IP" in _check_extender(config)["urlPrefix"]


def test_second_scheduler_uses_the_extender_service() -> None:
    docs = _docs("second-scheduler/kubeview-scheduler.yaml")
    config = yaml.safe_load(_kind(docs, "ConfigMap")["data"]["config.yaml"])
    assert config["profiles"] == [{"schedulerName": "kubeview-scheduler"}]
    ext = _check_extender(config)
    service = _kind(_docs("10-extender.yaml"), "Service")["metadata"]
    assert ext["urlPrefix"] == f"http://{service['name']}.{service['namespace']}.svc:8888"
    lease = _kind(docs, "Role", "kubeview-scheduler-leader-election")
    assert config["leaderElection"]["resourceName"] in lease["rules"][1]["resourceNames"]
    deploy = _kind(docs, "Deployment")
    assert deploy["spec"]["template"]["spec"]["serviceAccountName"] == "kubeview-scheduler"


def test_tls_example_serves_https_and_asks_kube_scheduler_for_its_client_certificate() -> None:
    container = _kind(_docs("tls/10-extender-tls.yaml"), "Deployment")["spec"]["template"]["spec"]["containers"][0]
    args = build_parser().parse_args(container["args"])
    assert (args.tls_cert, args.tls_key, args.client_ca) == (
        "/var/run/kubeview-tls/tls.crt", "/var/run/kubeview-tls/tls.key", "/var/run/kubeview-tls/ca.crt")
    extender = _docs("tls/kubeview-scheduler-config.yaml")[0]["extenders"][0]
    assert extender["urlPrefix"].startswith("https://") and extender["enableHTTPS"] is True
    assert set(extender["tlsConfig"]) == {"caFile", "certFile", "keyFile"}
