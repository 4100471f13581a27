"""scheduler_manifests: the second scheduler's objects from code equal the shipped YAML
(manifests/scheduler/second-scheduler/ for the extender, native/ for native mode)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from kubeview.scheduling import PackingConfig
from kubeview.scheduling.native_profile import scoring_of
from kubeview.scheduling.scheduler_manifests import CONFIG_HASH, objects

MANIFESTS = Path(__file__).resolve().parents[2] / "manifests" / "scheduler"


def _parsed(docs: list[dict]) -> list[dict]:
    """Objects with the ConfigMap's configuration parsed (its text's layout is the file's own)."""
    out = []
    for d in docs:
        if d["kind"] == "ConfigMap":
            d = {**d, "data": {"config.yaml": yaml.safe_load(d["data"]["config.yaml"])}}
        out.append(d)
    return out


def _shipped(name: str) -> list[dict]:
    return _parsed([d for d in yaml.safe_load_all((MANIFESTS / name).read_text()) if d])


def test_extender_mode_is_the_shipped_second_scheduler() -> None:
    assert _parsed(objects("extender")) == _shipped("second-scheduler/kubeview-scheduler.yaml")


def test_native_mode_is_the_shipped_native_scheduler() -> None:
    native = objects("native", scoring_of(PackingConfig()))
    assert _parsed(native) == _shipped("native/kubeview-scheduler.yaml")
    # the same objects as the extender's but the configuration and the hash that rolls the Deployment
    extender = objects("extender")
    differ = [d["kind"] for d, e in zip(native, extender, strict=True) if d != e]
    assert differ == ["ConfigMap", "Deployment"]
    config = yaml.safe_load(native[-2]["data"]["config.yaml"])
    assert "extenders" not in config and config["profiles"][0]["schedulerName"] == "kubeview-scheduler"


def test_a_new_policy_changes_the_pod_template_so_the_scheduler_rolls() -> None:
    def template_hash(config: PackingConfig) -> str:
        deploy = objects("native", scoring_of(config))[-1]
        return deploy["spec"]["template"]["metadata"]["annotations"][CONFIG_HASH]

    same = template_hash(PackingConfig())
    assert template_hash(PackingConfig()) == same
    assert template_hash(PackingConfig(weights={"nvidia.com/gpu": 1.0, "cpu": 0.5})) != same
    assert template_hash(PackingConfig(policy="spread")) != same
    with pytest.raises(ValueError, match="mode"):
        objects("both")


def test_default_scheduler_native_config_is_the_shipped_file() -> None:
    from kubeview.scheduling.scheduler_manifests import default_configuration

    shipped = yaml.safe_load((MANIFESTS / "native" / "kubeview-scheduler-config.yaml").read_text())
    assert default_configuration(scoring_of(PackingConfig())) == shipped


@pytest.mark.parametrize(("argv", "path"), [
    ((), "native/kubeview-scheduler.yaml"),
    (("--default-scheduler",), "native/kubeview-scheduler-config.yaml")])
def test_the_command_prints_the_shipped_files(capsys: pytest.CaptureFixture[str], argv: tuple[str, ...],
                                              path: str) -> None:
    """The checked-in files are the command's output (their comment lines aside): regenerate them with it."""
    from kubeview.cli import main

    assert main(["scheduler-manifests", *argv]) == 0
    shipped = "".join(line for line in (MANIFESTS / path).read_text().splitlines(keepends=True)
                      if not line.startswith("# "))
    printed = "".join(line for line in capsys.readouterr().out.splitlines(keepends=True) if not line.startswith("# "))
    assert printed == shipped


def test_the_command_refuses_what_native_cannot_do(capsys: pytest.CaptureFixture[str]) -> None:
    from kubeview.cli import main

    assert main(["scheduler-manifests", "--policy", "spread", "--strategy", "RequestedToCapacityRatio"]) == 2
    assert "spread is LeastAllocated natively" in capsys.readouterr().err
    assert main(["scheduler-manifests", "--weight", "nvidia.com/gpu=-1"]) == 2
    assert "weight of 'nvidia.com/gpu'" in capsys.readouterr().err
    assert main(["scheduler-manifests", "--mode", "extender", "--default-scheduler"]) == 2
    assert main(["scheduler-manifests", "--weight", "nvidia.com/gpu=2", "--weight", "amd.com/gpu=1"]) == 0
    config = yaml.safe_load(next(d for d in yaml.safe_load_all(capsys.readouterr().out)
                                 if d["kind"] == "ConfigMap")["data"]["config.yaml"])
    resources = config["profiles"][0]["pluginConfig"][0]["args"]["scoringStrategy"]["resources"]
    assert resources == [{"name": "nvidia.com/gpu", "weight": 100}, {"name": "amd.com/gpu", "weight": 50},
                         {"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}]


def test_the_bind_verb_is_opt_in(capsys: pytest.CaptureFixture[str]) -> None:
    """--bind adds the extender's bindVerb and nothing else; native mode refuses it in one line."""
    from kubeview.cli import main

    def extender_of(out: str) -> dict:
        config_map = next(d for d in yaml.safe_load_all(out) if d["kind"] == "ConfigMap")
        return yaml.safe_load(config_map["data"]["config.yaml"])["extenders"][0]

    assert main(["scheduler-manifests", "--mode", "extender"]) == 0
    shipped = extender_of(capsys.readouterr().out)
    assert "bindVerb" not in shipped
    assert main(["scheduler-manifests", "--mode", "extender", "--bind"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[1].startswith("# `kubeview scheduler-manifests --mode extender --bind`")
    assert extender_of(out) == {**shipped, "bindVerb": "bind"}
    assert main(["scheduler-manifests", "--bind"]) == 2
    assert capsys.readouterr().err.strip().splitlines() == [
        "kubeview: scheduler-manifests: --bind goes with --mode extender (native mode has no extender)"]


def test_the_image_follows_the_control_plane_version(capsys: pytest.CaptureFixture[str]) -> None:
    """#36: one value, a clear default (the version kubeview is tested on), and a one-line refusal."""
    from kubeview.cli import main
    from kubeview.scheduling.scheduler_image import KUBE_VERSION

    def image() -> str:
        docs = list(yaml.safe_load_all(capsys.readouterr().out))
        deployment = next(d for d in docs if d and d["kind"] == "Deployment")
        return deployment["spec"]["template"]["spec"]["containers"][0]["image"]

    assert main(["scheduler-manifests"]) == 0
    assert image() == f"registry.k8s.io/kube-scheduler:{KUBE_VERSION}"
    assert main(["scheduler-manifests", "--mode", "extender", "--kube-version", "1.35.4"]) == 0
    assert image() == "registry.k8s.io/kube-scheduler:v1.35.4"
    assert main(["scheduler-manifests", "--image", "mirror.local/kube-scheduler:v1.36.3"]) == 0
    assert image() == "mirror.local/kube-scheduler:v1.36.3"
    with pytest.raises(SystemExit) as exit_:
        main(["scheduler-manifests", "--kube-version", "1.37"])
    assert exit_.value.code == 2 and "expected a Kubernetes version such as" in capsys.readouterr().err
