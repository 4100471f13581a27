"""charts/kubeview-extender, rendered by the real helm: lint-clean, and the same objects as
manifests/scheduler/ (one source of truth: a change to either without the other fails here)."""

from __future__ import annotations

import base64
from pathlib import Path

import yaml

from .chart import CHART, helm, manifest_objects, objects

NS = "kubeview-system"
NAMESPACE = ("Namespace", NS)  # made by `helm install --create-namespace`, labelled as NOTES says
TOKEN, CONFIG = ("Secret", "kubeview-extender-token"), ("ConfigMap", "kubeview-extender-scheduler-config")


def _render(tmp: Path, *sets: str) -> dict[tuple[str, str], dict]:
    args = [a for s in sets for a in ("--set", s)]
    return objects(helm("template", "kubeview-extender", str(CHART), "-n", NS, *args, home=tmp).stdout)


def _scheduler_config(rendered: dict) -> dict:
    return yaml.safe_load(rendered[CONFIG]["data"]["kubeview-scheduler-config.yaml"])


def test_lint_is_clean(tmp_path: Path) -> None:
    out = helm("lint", "--strict", str(CHART), home=tmp_path)
    assert "0 chart(s) failed" in out.stdout


def test_default_values_render_the_manifests_objects(tmp_path: Path) -> None:
    rendered = _render(tmp_path)
    shipped = manifest_objects("00-namespace-rbac.yaml", "10-extender.yaml")
    assert shipped.pop(NAMESPACE)["metadata"]["labels"]["pod-security.kubernetes.io/enforce"] == "restricted"
    token, config = rendered.pop(TOKEN), _scheduler_config(rendered)
    rendered.pop(CONFIG)
    assert rendered == shipped
    assert len(base64.b64decode(token["data"]["token"])) == 43
    assert config == yaml.safe_load((Path(__file__).parents[2] / "manifests/scheduler/default-scheduler/"
                                     "kubeview-scheduler-config.yaml").read_text())


def test_tls_renders_the_tls_manifests(tmp_path: Path) -> None:
    rendered = _render(tmp_path, "tls.enabled=true")
    tls = manifest_objects("tls/10-extender-tls.yaml")
    assert {k: rendered[k] for k in tls} == tls
    assert _scheduler_config(rendered) == yaml.safe_load(
        (Path(__file__).parents[2] / "manifests/scheduler/tls/kubeview-scheduler-config.yaml").read_text())


def test_bind_is_opt_in_with_its_rbac(tmp_path: Path) -> None:
    """packing.bind: the bindVerb and create on pods/binding come together (bind/pods-binding-rbac.yaml)."""
    plain = _render(tmp_path)
    role = ("ClusterRole", "kubeview-extender")
    assert "bindVerb" not in _scheduler_config(plain)["extenders"][0]
    assert not any("pods/binding" in rule["resources"] for rule in plain[role]["rules"])
    bound = _render(tmp_path, "packing.bind=true")
    assert _scheduler_config(bound)["extenders"][0]["bindVerb"] == "bind"
    rules = bound[role]["rules"]
    extra = manifest_objects("bind/pods-binding-rbac.yaml")[("ClusterRole", "kubeview-extender-bind")]["rules"]
    assert [r for r in rules if r not in plain[role]["rules"]] == extra
    out = helm("template", "kubeview-extender", str(CHART), "--set", "packing.bind=maybe", home=tmp_path, check=False)
    assert out.returncode != 0 and "bind" in out.stderr


def test_an_existing_token_secret_is_used_not_made(tmp_path: Path) -> None:
    rendered = _render(tmp_path, "token.existingSecret=ours", "schedulerConfig.create=false")
    assert TOKEN not in rendered and CONFIG not in rendered
    volumes = rendered[("Deployment", "kubeview-extender")]["spec"]["template"]["spec"]["volumes"]
    assert volumes == [{"name": "token", "secret": {"secretName": "ours", "defaultMode": 0o440}}]


def test_values_are_checked_by_the_chart_schema(tmp_path: Path) -> None:
    for bad, word in (("policy=tightest", "policy"), ("tls.enabled=yes", "enabled"), ("nmae=x", "nmae")):
        out = helm("template", "kubeview-extender", str(CHART), "--set", bad, home=tmp_path, check=False)
        assert out.returncode != 0 and word in out.stderr, (bad, out.stderr)


def test_native_mode_renders_the_native_profile_and_no_extender(tmp_path: Path) -> None:
    """packing.mode=native: the scheduler ConfigMap holds manifests/scheduler/native/'s profile (the one
    `kubeview scheduler-manifests --default-scheduler` prints); the extender's objects are left out."""
    from kubeview.scheduling import PackingConfig
    from kubeview.scheduling.native_profile import scoring_of
    from kubeview.scheduling.scheduler_manifests import default_configuration

    rendered = _render(tmp_path, "packing.mode=native")
    assert list(rendered) == [CONFIG]
    assert _scheduler_config(rendered) == yaml.safe_load(
        (Path(__file__).parents[2] / "manifests/scheduler/native/kubeview-scheduler-config.yaml").read_text())
    shaped = _render(tmp_path, "packing.mode=native", "packing.native.strategy=RequestedToCapacityRatio")
    assert _scheduler_config(shaped) == default_configuration(
        scoring_of(PackingConfig(), "RequestedToCapacityRatio"))
    assert _render(tmp_path, "packing.mode=native", "schedulerConfig.create=false") == {}


def test_native_values_are_checked_by_the_chart_schema(tmp_path: Path) -> None:
    for bad, word in (("packing.mode=both", "mode"), ("packing.native.resources[0].weight=101", "weight"),
                      ("packing.native.strategy=Balanced", "strategy")):
        out = helm("template", "kubeview-extender", str(CHART), "--set", bad, home=tmp_path, check=False)
        assert out.returncode != 0 and word in out.stderr, (bad, out.stderr)
