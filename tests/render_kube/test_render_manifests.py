"""`kubeview render-manifests`: YAML objects, least-privilege RBAC, the GPU variant, the checked-in copy."""

from __future__ import annotations

import base64
import runpy
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from kubeview.cli import main
from kubeview.render import manifests as m
from renderer.scene import parse

ROOT = Path(__file__).resolve().parents[2]
THREE = ROOT / "renderer" / "scenes" / "three-spheres.yaml"


def render(capsys: pytest.CaptureFixture[str], *args: str) -> list[dict]:
    assert main(["render-manifests", *args]) == 0
    return list(yaml.safe_load_all(capsys.readouterr().out))


def by_kind(objs: list[dict], kind: str, name: str | None = None) -> dict:
    found = [o for o in objs if o["kind"] == kind and (name is None or o["metadata"]["name"] == name)]
    assert len(found) == 1, (kind, name)
    return found[0]


def pod_specs(objs: list[dict]) -> list[dict]:
    return [o["spec"]["template"]["spec"] for o in objs if o["kind"] in ("Deployment", "ReplicaSet")]


def test_every_document_is_an_object(capsys: pytest.CaptureFixture[str]) -> None:
    objs = render(capsys, "three-spheres")
    assert [o["kind"] for o in objs] == [
        "Namespace", "ServiceAccount", "ClusterRole", "ClusterRoleBinding", "ClusterRole", "Role", "RoleBinding", "Role",
        "RoleBinding", "ConfigMap", "Secret", "Service", "Deployment", "ReplicaSet"]
    for o in objs:
        assert o["apiVersion"] and o["kind"] and o["metadata"]["name"]
        if o["kind"] not in ("Namespace", "ClusterRole", "ClusterRoleBinding"):
            assert o["metadata"]["namespace"] == "kubeview-render"


def test_rbac_is_exactly_the_minimum(capsys: pytest.CaptureFixture[str]) -> None:
    objs = render(capsys, "three-spheres", "--namespace", "render-a")
    assert by_kind(objs, "ClusterRole", "kubeview-read")["rules"] == [
        {"apiGroups": [""], "resources": ["nodes", "pods"], "verbs": ["get", "list", "watch"]},
        {"apiGroups": [""], "resources": ["events"], "verbs": ["get", "list", "watch"]},
        {"apiGroups": ["apps"], "resources": ["deployments", "replicasets", "statefulsets"],
         "verbs": ["get", "list", "watch"]},
        {"apiGroups": ["batch"], "resources": ["jobs"], "verbs": ["get", "list", "watch"]},
        {"apiGroups": [""], "resources": ["resourcequotas"], "verbs": ["get", "list", "watch"]},
        {"apiGroups": ["resource.k8s.io"], "resources": ["deviceclasses", "resourceclaims", "resourceslices"],
         "verbs": ["get", "list", "watch"]},
        {"apiGroups": ["resource.k8s.io"], "resources": ["devicetaintrules", "resourcepoolstatusrequests"],
         "verbs": ["list", "watch"]},
        {"apiGroups": ["scheduling.k8s.io"], "resources": ["podgroups", "workloads"], "verbs": ["get", "list", "watch"]},
        {"apiGroups": ["scheduling.run.ai"], "resources": ["podgroups"], "verbs": ["get", "list", "watch"]},
        {"apiGroups": ["kueue.x-k8s.io"], "resources": ["clusterqueues", "localqueues", "resourceflavors",
                                                        "workloads"], "verbs": ["get", "list", "watch"]},
        {"apiGroups": ["visibility.kueue.x-k8s.io"], "resources": ["clusterqueues/pendingworkloads"],
         "verbs": ["get"]},
        {"apiGroups": ["scheduling.volcano.sh"], "resources": ["podgroups"], "verbs": ["get", "list", "watch"]},
        {"apiGroups": ["resource.nvidia.com"], "resources": ["computedomains"], "verbs": ["get", "list", "watch"]},
        {"apiGroups": ["karpenter.sh"], "resources": ["nodeclaims", "nodepools"], "verbs": ["get", "list", "watch"]},
        {"apiGroups": [""], "resources": ["configmaps"], "resourceNames": ["cluster-autoscaler-status"],
         "verbs": ["get", "list", "watch"]},
        {"apiGroups": ["policy"], "resources": ["poddisruptionbudgets"], "verbs": ["get", "list", "watch"]},
    ]
    # applying plans: its own ClusterRole, bound to nobody by the manifests (an administrator decides who)
    assert by_kind(objs, "ClusterRole", "kubeview-plan")["rules"] == [
        {"apiGroups": [""], "resources": ["pods/eviction"], "verbs": ["create"]},
        {"apiGroups": [""], "resources": ["pods/status"], "verbs": ["patch"]},
    ]
    assert all(b["roleRef"]["name"] != "kubeview-plan" for b in objs if b["kind"].endswith("Binding"))
    assert by_kind(objs, "Role", "kubeview-scale")["rules"] == [
        {"apiGroups": ["apps"], "resources": ["deployments/scale", "replicasets/scale", "statefulsets/scale"],
         "verbs": ["get", "patch"]},
        {"apiGroups": ["batch"], "resources": ["jobs"], "verbs": ["patch"]},
    ]
    apply = ["create", "patch", "delete"]
    assert by_kind(objs, "Role", "kubeview-render")["rules"] == [
        {"apiGroups": [""], "resources": ["configmaps"], "resourceNames": ["render-scene"], "verbs": apply},
        {"apiGroups": [""], "resources": ["secrets"], "resourceNames": ["render-token"], "verbs": apply},
        {"apiGroups": [""], "resources": ["services"], "resourceNames": ["producer"], "verbs": apply},
        {"apiGroups": [""], "resources": ["services/proxy"], "resourceNames": ["http:producer:status"],
         "verbs": ["get"]},
        {"apiGroups": ["apps"], "resources": ["deployments"], "resourceNames": ["producer"], "verbs": apply},
        {"apiGroups": ["apps"], "resources": ["replicasets"], "resourceNames": ["consumer"], "verbs": apply},
    ]
    # the Roles live in the render namespace only; the one cluster-wide grant is read-only
    for role in ("kubeview-scale", "kubeview-render"):
        assert by_kind(objs, "Role", role)["metadata"]["namespace"] == "render-a"
        binding = by_kind(objs, "RoleBinding", role)
        assert binding["roleRef"] == {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": role}
        assert binding["subjects"] == [{"kind": "ServiceAccount", "name": "kubeview", "namespace": "render-a"}]
    crb = by_kind(objs, "ClusterRoleBinding")
    assert crb["roleRef"]["name"] == "kubeview-read"
    assert crb["subjects"] == [{"kind": "ServiceAccount", "name": "kubeview", "namespace": "render-a"}]
    # the proxy name in the rule is the one the render job uses, and the Service has that port
    assert m.STATUS_PROXY == "http:producer:status"
    assert "status" in [p["name"] for p in by_kind(objs, "Service")["spec"]["ports"]]


def test_gpu_variant_asks_one_gpu_in_requests_and_limits(capsys: pytest.CaptureFixture[str]) -> None:
    objs = render(capsys, "three-spheres", "--gpu", "1", "--cpu", "250m")
    rs = by_kind(objs, "ReplicaSet")
    (c,) = rs["spec"]["template"]["spec"]["containers"]
    assert c["resources"]["requests"]["nvidia.com/gpu"] == "1"
    assert c["resources"]["limits"]["nvidia.com/gpu"] == "1"  # requests-only is rejected with 422
    assert c["resources"]["requests"]["cpu"] == "250m"
    assert {"name": "RENDERER_KERNEL", "value": "auto"} in c["env"]
    for init in rs["spec"]["template"]["spec"]["initContainers"]:  # the GPU is the consumer's alone
        assert "nvidia.com/gpu" not in str(init["resources"])
    cpu_only = render(capsys, "three-spheres")
    assert "nvidia.com/gpu" not in yaml.safe_dump_all(cpu_only)


def test_consumer_resources_and_replicas(capsys: pytest.CaptureFixture[str]) -> None:
    objs = render(capsys, "three-spheres", "--replicas", "24", "--cpu", "100m", "--image", "reg.example/kv:1")
    rs = by_kind(objs, "ReplicaSet")
    assert rs["spec"]["replicas"] == 24
    (c,) = rs["spec"]["template"]["spec"]["containers"]
    assert c["resources"] == {"requests": {"cpu": "100m", "memory": "192Mi"},
                              "limits": {"cpu": "1", "memory": "512Mi"}}
    assert c["image"] == "reg.example/kv:1"
    assert c["command"] == ["python", "-m", "renderer", "consumer", "--connect", "producer:7000",
                            "--token-file", "/token/token"]
    dep = by_kind(objs, "Deployment")
    (p,) = dep["spec"]["template"]["spec"]["containers"]
    assert p["command"] == ["python", "-m", "renderer", "producer", "/scene/scene.yaml", "--listen", "0.0.0.0:7000",
                            "--status", "0.0.0.0:7001", "-o", "/out/render.png", "--checkpoint",
                            "/out/checkpoint.npz", "--token-file", "/token/token", "--serve-after-done"]
    assert p["image"] == "reg.example/kv:1"
    # issue 16 item 10: the checkpoint is on a volume that outlives the container (an OOM kill or a crash
    # restarts the container in the same pod, which resumes from it instead of 0%)
    out = next(m for m in p["volumeMounts"] if m["mountPath"] == "/out")
    vol = next(v for v in dep["spec"]["template"]["spec"]["volumes"] if v["name"] == out["name"])
    assert "emptyDir" in vol and not out.get("readOnly")


def test_pods_are_locked_down(capsys: pytest.CaptureFixture[str]) -> None:
    objs = render(capsys, "three-spheres", "--gpu", "1")
    for spec in pod_specs(objs):
        assert spec["automountServiceAccountToken"] is False
        assert spec["securityContext"]["runAsNonRoot"] is True
        volumes = {v["name"] for v in spec["volumes"]}
        for c in spec["containers"] + spec.get("initContainers", []):
            sc = c["securityContext"]
            assert sc["readOnlyRootFilesystem"] is True
            assert sc["allowPrivilegeEscalation"] is False
            assert sc["capabilities"] == {"drop": ["ALL"]}
            assert {v["name"] for v in c["volumeMounts"]} <= volumes
        for c in spec["containers"]:  # numba needs a writable cache directory: an emptyDir
            assert {"name": "NUMBA_CACHE_DIR", "value": m.CACHE_MOUNT} in c["env"]
            assert {"name": "numba-cache", "mountPath": m.CACHE_MOUNT} in c["volumeMounts"]


def test_scene_and_token(capsys: pytest.CaptureFixture[str]) -> None:
    objs = render(capsys, str(THREE))
    text = by_kind(objs, "ConfigMap")["data"]["scene.yaml"]
    assert text == THREE.read_text()
    assert parse(text).name == "three-spheres"
    token = base64.b64decode(by_kind(objs, "Secret")["data"]["token"]).decode()
    again = base64.b64decode(by_kind(render(capsys, str(THREE)), "Secret")["data"]["token"]).decode()
    assert len(token) == 64 and int(token, 16) >= 0 and token != again


@pytest.mark.parametrize(("args", "word"), [
    (["nope-not-a-scene"], "nope-not-a-scene"),
    (["BAD"], "radius"),
    (["three-spheres", "--cpu", "lots"], "--cpu"),
    (["three-spheres", "--namespace", "Not_A_Name"], "namespace"),
    (["three-spheres", "--width", "0"], "--width"),
    (["three-spheres", "--spp", "many"], "--spp"),
])
def test_bad_input_is_one_line_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str],
                                      word: str) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(THREE.read_text().replace("radius: 0.5, material: center", "radius: -0.5, material: center"))
    args = [str(bad) if a == "BAD" else a for a in args]
    try:
        code = main(["render-manifests", *args])
    except SystemExit as exc:  # a bad value for a flag is argparse's usage error
        code = exc.code
    assert code == 2
    out = capsys.readouterr()
    assert out.out == ""
    assert out.err.count("\n") == 1 and word in out.err and "Traceback" not in out.err


def test_spp_and_width_reach_the_producer_as_with_render(capsys: pytest.CaptureFixture[str]) -> None:
    objs = render(capsys, "three-spheres", "--spp", "7", "--width", "96")
    (producer,) = by_kind(objs, "Deployment")["spec"]["template"]["spec"]["containers"]
    args = producer["args"] if "args" in producer else producer["command"]
    assert args[-6:] == ["--width", "96", "--height", "64", "--spp", "7"]  # 48x32 scene: the aspect kept
    from kubeview.render.inputs import choose_scene

    assert args[-6:] == choose_scene("three-spheres", spp=7, width=96).producer_args()  # what --render runs
    assert "--spp" not in str(render(capsys, "three-spheres"))  # without them: the scene's own


def test_bad_scene_from_the_shell() -> None:
    out = subprocess.run([sys.executable, "-m", "kubeview", "render-manifests", "no-such-scene"],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 2 and out.stdout == ""
    assert out.stderr.count("\n") == 1 and "no-such-scene" in out.stderr


def test_checked_in_manifests_are_the_commands_output(capsys: pytest.CaptureFixture[str]) -> None:
    gen = runpy.run_path(str(ROOT / "manifests" / "render" / "generate.py"))
    expected = gen["expected_files"]()
    for path, text in expected.items():
        assert path.read_text() == text, f"{path} is stale: run python manifests/render/generate.py"
    # and those files are `kubeview render-manifests spheres` with the placeholder token
    assert main(["render-manifests", "spheres"]) == 0
    printed = list(yaml.safe_load_all(capsys.readouterr().out))
    for o in printed:
        if o["kind"] == "Secret":
            o["data"]["token"] = base64.b64encode(m.PLACEHOLDER_TOKEN.encode()).decode()
    render_dir = ROOT / "manifests" / "render"
    checked_in = [d for name in ("00-namespace-rbac.yaml", "10-render.yaml")
                  for d in yaml.safe_load_all((render_dir / name).read_text())]
    assert checked_in == printed
    gpu = list(yaml.safe_load_all((render_dir / "gpu" / "10-render.yaml").read_text()))
    assert by_kind(gpu, "ReplicaSet")["spec"]["template"]["spec"]["containers"][0]["resources"]["limits"][
        "nvidia.com/gpu"] == "1"


def test_object_paths() -> None:
    spec = m.RenderSpec(THREE.read_text(), "three-spheres", "t", namespace="ns")
    paths = [m.object_path(o) for o in m.all_objects(spec)]
    assert paths[0] == "/api/v1/namespaces/ns"
    assert "/apis/rbac.authorization.k8s.io/v1/clusterroles/kubeview-read" in paths
    assert paths[-5:] == ["/api/v1/namespaces/ns/configmaps/render-scene", "/api/v1/namespaces/ns/secrets/render-token",
                          "/api/v1/namespaces/ns/services/producer", "/apis/apps/v1/namespaces/ns/deployments/producer",
                          "/apis/apps/v1/namespaces/ns/replicasets/consumer"]
