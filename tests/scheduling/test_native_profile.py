"""native_profile: kubeview's policy as a KubeSchedulerConfiguration profile (kube-scheduler accepting
it is tests/realk8s/test_native_profile_real.py)."""

from __future__ import annotations

import pytest

from kubeview.scheduling import PackingConfig
from kubeview.scheduling.config import FALLBACK_RESOURCES
from kubeview.scheduling.native_profile import profile, scheduler_configuration, scoring_of
from kubeview.scheduling.native_scoring import NativeScoring, integer_weights


def test_default_policy_packs_gpus_most_allocated() -> None:
    scoring = scoring_of(PackingConfig())
    assert scoring == NativeScoring("MostAllocated", (("nvidia.com/gpu", 100), ("cpu", 1), ("memory", 1)))
    prof = profile(scoring)
    assert prof == {
        "schedulerName": "kubeview-scheduler",
        "percentageOfNodesToScore": 100,
        "plugins": {"score": {"disabled": [{"name": "NodeResourcesBalancedAllocation"}, {"name": "ImageLocality"}]}},
        "pluginConfig": [{"name": "NodeResourcesFit", "args": {"scoringStrategy": {
            "type": "MostAllocated",
            "resources": [{"name": "nvidia.com/gpu", "weight": 100}, {"name": "cpu", "weight": 1},
                          {"name": "memory", "weight": 1}]}}}],
    }
    doc = scheduler_configuration(scoring)
    assert doc["leaderElection"]["resourceName"] == "kubeview-scheduler"
    assert doc["profiles"] == [prof]


def test_weights_scale_to_kube_schedulers_integers() -> None:
    weights = {"nvidia.com/gpu": 4.0, "amd.com/gpu": 2.0, "cpu": 0.001, "memory": 0.0}
    # largest 100, the rest in proportion, none below 1; weight 0 left out, then memory added at 1
    assert integer_weights(weights, FALLBACK_RESOURCES) == (("nvidia.com/gpu", 100), ("amd.com/gpu", 50), ("cpu", 1), ("memory", 1))


def test_shape_spread_and_refusals() -> None:
    rtcr = scoring_of(PackingConfig(), "RequestedToCapacityRatio")
    strategy = rtcr.fit_args()["scoringStrategy"]
    assert strategy["type"] == "RequestedToCapacityRatio"
    assert strategy["requestedToCapacityRatio"] == {"shape": [{"utilization": 0, "score": 0},
                                                              {"utilization": 100, "score": 10}]}
    assert scoring_of(PackingConfig(policy="spread")).strategy == "LeastAllocated"
    with pytest.raises(ValueError, match="balanced has no native form"):
        scoring_of(PackingConfig(policy="balanced"))
    with pytest.raises(ValueError, match="spread is LeastAllocated natively"):
        scoring_of(PackingConfig(policy="spread"), "MostAllocated")
    with pytest.raises(ValueError, match="1..100"):
        NativeScoring("MostAllocated", (("cpu", 101),))
    with pytest.raises(ValueError, match="shape"):
        NativeScoring("MostAllocated", (("cpu", 1),), ((0, 0), (100, 10)))


@pytest.mark.parametrize(("config", "strategy"), [
    (PackingConfig(), None),
    (PackingConfig(weights={"nvidia.com/gpu": 3.0, "amd.com/gpu": 1.0, "cpu": 0.5}), None),
    (PackingConfig(), "RequestedToCapacityRatio"),
    (PackingConfig(policy="spread"), None)])
def test_a_written_profile_reads_back_as_the_same_scoring(config: PackingConfig, strategy: str | None) -> None:
    from kubeview.scheduling.native_profile import config_from_configuration, native_config

    written = native_config(config, strategy)
    assert written.native is not None
    read = config_from_configuration(scheduler_configuration(written.native))
    assert read.native == written.native and read.policy == config.policy
    assert config_from_configuration(scheduler_configuration(read.native)) == read  # stable: a fixed point


def test_profiles_kubeview_did_not_write_are_refused_in_one_sentence() -> None:
    from kubeview.scheduling.native_profile import config_from_configuration

    with pytest.raises(ValueError, match="no profile kubeview-scheduler"):
        config_from_configuration({"profiles": [{"schedulerName": "default-scheduler"}]})
    with pytest.raises(ValueError, match="no NodeResourcesFit scoringStrategy"):
        config_from_configuration({"profiles": [{"schedulerName": "kubeview-scheduler"}]})
    doc = scheduler_configuration(scoring_of(PackingConfig(), "RequestedToCapacityRatio"))
    doc["profiles"][0]["pluginConfig"][0]["args"]["scoringStrategy"]["requestedToCapacityRatio"]["shape"][1]["score"] = 5
    with pytest.raises(ValueError, match="shape is not kubeview's"):
        config_from_configuration(doc)
