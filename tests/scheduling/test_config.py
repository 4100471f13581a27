"""PackingConfig: defaults, round trip, and a one-sentence reason for every bad field."""

from __future__ import annotations

import json

import pytest

from kubeview.scheduling import PackingConfig


def test_defaults_and_round_trip() -> None:
    config = PackingConfig()
    assert config.to_dict() == {"policy": "pack", "weights": {"nvidia.com/gpu": 1.0}, "bias": {}, "avoid": []}
    custom = PackingConfig.from_dict({"policy": "balanced", "weights": {"cpu": 1, "nvidia.com/gpu": 2.5},
                                      "bias": {"gpu-node-2": -3}, "avoid": ["cpu-node-1"]})
    again = PackingConfig.from_dict(json.loads(json.dumps(custom.to_dict())))
    assert again == custom
    assert again.avoid == frozenset({"cpu-node-1"})


def test_merged_keeps_fields_not_given() -> None:
    config = PackingConfig(bias={"a": 2}).merged({"policy": "spread"})
    assert config.policy == "spread"
    assert dict(config.bias) == {"a": 2}


def test_is_immutable() -> None:
    config = PackingConfig()
    with pytest.raises(AttributeError):
        config.policy = "spread"  # type: ignore[misc]
    with pytest.raises(TypeError):
        config.weights["cpu"] = 1  # type: ignore[index]


@pytest.mark.parametrize(("doc", "reason"), [
    ([], "config must be a JSON object"),
    ({"policy": "fastest"}, "policy must be one of pack, spread, balanced"),
    ({"polcy": "pack"}, "unknown config field 'polcy'"),
    ({"weights": []}, "weights must be an object"),
    ({"weights": {"cpu": -1}}, "weight of 'cpu' must be a number from 0 to 1000, not -1"),
    ({"weights": {"cpu": "1"}}, "weight of 'cpu' must be a number from 0 to 1000"),
    ({"weights": {"cpu": True}}, "weight of 'cpu' must be a number from 0 to 1000"),
    ({"weights": {"cpu": 1001}}, "weight of 'cpu' must be a number from 0 to 1000, not 1001"),
    ({"avoid": [f"n{i}" for i in range(10_001)]}, "avoid has 10001 entries; at most 10000 are accepted"),
    ({"weights": {"cpu": 0}}, "weights must give at least one resource a weight above 0"),
    ({"weights": {"": 1}}, "a weights key must be a non-empty string"),
    ({"bias": {"n": 11}}, "bias of node 'n' must be a number from -10 to 10"),
    ({"bias": {"n": float("nan")}}, "bias of node 'n' must be a number"),
    ({"bias": "n"}, "bias must be an object"),
    ({"avoid": "node-1"}, "avoid must be a list of node names"),
    ({"avoid": [1]}, "an avoided node must be a non-empty string"),
])
def test_bad_configs_are_refused_with_a_reason(doc: object, reason: str) -> None:
    with pytest.raises(ValueError, match="^" + reason.replace("(", r"\(")):
        PackingConfig.from_dict(doc)
