"""Applying a policy in native mode on the real plane: `kubeview scheduler-manifests` applied again with
other weights updates the profile's ConfigMap and rolls the second scheduler's Deployment (the real
Deployment controller makes a new ReplicaSet); applied again unchanged, nothing rolls.

kube-scheduler reads its configuration only at start, so the roll is how a new policy takes effect:
not instant (docs/scheduler.md, "Native packing").
"""

from __future__ import annotations

import json
from pathlib import Path

import yaml
from kubernetes import client

from kubeview.cli import main
from kubeview.scheduling.scheduler_manifests import CONFIG_HASH, CONFIG_MAP, NAMESPACE

from .objects import api, ensure_namespace
from .plane import Plane
from .procs import wait_until

DEPLOYMENT = "kubeview-scheduler"


def _print(capsys, path: Path, *argv: str) -> Path:  # noqa: ANN001
    assert main(["scheduler-manifests", *argv]) == 0
    path.write_text(capsys.readouterr().out)
    return path


def _deployment(plane: Plane) -> dict:
    return json.loads(plane.kubectl("get", "deployment", DEPLOYMENT, "-n", NAMESPACE, "-o", "json").stdout)


def _replica_sets(plane: Plane) -> dict[str, str]:
    """ReplicaSet name -> its pod template's config hash, for the scheduler's Deployment."""
    out = json.loads(plane.kubectl("get", "replicasets", "-n", NAMESPACE, "-o", "json",
                                   "-l", f"app.kubernetes.io/name={DEPLOYMENT}").stdout)
    return {rs["metadata"]["name"]: rs["spec"]["template"]["metadata"]["annotations"][CONFIG_HASH]
            for rs in out["items"]}


def _weights(plane: Plane) -> list[dict]:
    cm = json.loads(plane.kubectl("get", "configmap", CONFIG_MAP, "-n", NAMESPACE, "-o", "json").stdout)
    config = yaml.safe_load(cm["data"]["config.yaml"])
    return config["profiles"][0]["pluginConfig"][0]["args"]["scoringStrategy"]["resources"]


def test_a_new_policy_updates_the_profile_and_rolls_the_scheduler(plane: Plane, tmp_path: Path, capsys) -> None:  # noqa: ANN001
    ensure_namespace(client.CoreV1Api(api(plane.kubeconfig)), NAMESPACE)
    first = _print(capsys, tmp_path / "first.yaml")
    plane.kubectl("apply", "-f", str(first))
    try:
        old = wait_until(lambda: _replica_sets(plane) or None, 60, "the scheduler's first ReplicaSet")
        assert list(old.values()) == [_deployment(plane)["spec"]["template"]["metadata"]["annotations"][CONFIG_HASH]]
        assert _weights(plane)[0] == {"name": "nvidia.com/gpu", "weight": 100}

        second = _print(capsys, tmp_path / "second.yaml", "--weight", "nvidia.com/gpu=1", "--weight", "cpu=1")
        plane.kubectl("apply", "-f", str(second))
        assert _weights(plane) == [{"name": "cpu", "weight": 100}, {"name": "nvidia.com/gpu", "weight": 100},
                                   {"name": "memory", "weight": 1}]  # heaviest first, then by name
        new_hash = _deployment(plane)["spec"]["template"]["metadata"]["annotations"][CONFIG_HASH]
        assert new_hash not in old.values()
        rolled = wait_until(lambda: r if len(r := _replica_sets(plane)) == 2 else None, 60,
                            "a second ReplicaSet: the Deployment controller rolling the scheduler")
        assert sorted(rolled.values()) == sorted([*old.values(), new_hash])

        generation = _deployment(plane)["metadata"]["generation"]
        plane.kubectl("apply", "-f", str(second))  # the same policy again: the template is unchanged
        assert _deployment(plane)["metadata"]["generation"] == generation
    finally:
        plane.kubectl("delete", f"deployment/{DEPLOYMENT}", f"configmap/{CONFIG_MAP}", "-n", NAMESPACE,
                      "--ignore-not-found", "--wait=false")


def test_the_tuis_packing_screen_applies_to_the_native_profile(plane: Plane, tmp_path: Path, capsys) -> None:  # noqa: ANN001
    """`kubeview --native-scheduler`: the Packing screen reads the profile, its what-if scores natively,
    and Apply (here: the next policy, spread) rewrites the profile and rolls the scheduler."""
    from tui.tui_helpers import run_async, settle, wait_for

    from kubeview.cluster.kube.source import KubeSource
    from kubeview.scheduling.scheduler_manifests import config_hash, config_text, configuration
    from kubeview.tui.app import make_app

    ensure_namespace(client.CoreV1Api(api(plane.kubeconfig)), NAMESPACE)
    plane.kubectl("apply", "-f", str(_print(capsys, tmp_path / "first.yaml")))
    source = KubeSource(str(plane.kubeconfig))
    app = make_app(source, native_scheduler=True)

    @run_async
    async def drive() -> None:
        async with app.run_test(size=(120, 40)) as pilot:
            await settle(pilot)
            await wait_for(pilot, lambda: app.packing_live is not None, what="the native profile read")
            assert app.packing_label == "pack · native profile, kubeview-scheduler"
            await pilot.press("4")
            await settle(pilot)
            screen = app.screen
            assert screen.whatif is not None and screen.whatif.config.native is not None  # type: ignore[attr-defined]
            await pilot.press("p", "a")
            await wait_for(pilot, lambda: app.banner[1] in ("ok", "error"), what="the profile applied")
            assert app.banner[1] == "ok", app.banner
            assert "kubeview-scheduler is restarting with it (not instant" in app.banner[0]

    try:
        drive()
        live = app.packing_live
        assert live is not None and live.native is not None and live.native.strategy == "LeastAllocated"
        cm = json.loads(plane.kubectl("get", "configmap", CONFIG_MAP, "-n", NAMESPACE, "-o", "json").stdout)
        assert yaml.safe_load(cm["data"]["config.yaml"])["profiles"][0]["pluginConfig"][0]["args"][
            "scoringStrategy"]["type"] == "LeastAllocated"
        want = config_hash(config_text(configuration("native", live.native)))
        assert _deployment(plane)["spec"]["template"]["metadata"]["annotations"][CONFIG_HASH] == want
        wait_until(lambda: want in _replica_sets(plane).values(), 60, "the ReplicaSet of the new profile")
    finally:
        source.close()
        plane.kubectl("delete", f"deployment/{DEPLOYMENT}", f"configmap/{CONFIG_MAP}", "-n", NAMESPACE,
                      "--ignore-not-found", "--wait=false")
