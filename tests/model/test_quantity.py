"""kubeview's quantity parser against the client's reference `kubernetes.utils.parse_quantity`."""

from __future__ import annotations

from decimal import Decimal

import pytest
from kubeapi import fixtures
from kubernetes.utils import parse_quantity

from kubeview.model.quantity import QuantityError, parse, resource_dict, to_units

EDGE_CASES = ["0", "00", "1", "+1", "-1", ".5", "1.", "0.5", "100m", "1.1m", "-100m", "500u", "12n", "1e-9",
              "1e3", "1E3", "1e3m", "2E", "1k", "1M", "1G", "1T", "1P", "16Gi", "1.5Gi", "0.1Ki", "1Ki",
              "1Mi", "1Ti", "1Pi", "1Ei", "128974848", "129e6", "123Mi", "1 m", " 1", "1_000"]
INVALID = ["", "abc", "1.2.3", "1Zi", "Ki", "m", "1e", "1Ki5", "nan", "1mi", "1KB", "0x10"]


def test_every_fixture_quantity_matches_the_client() -> None:
    found = fixtures.quantity_strings()
    assert {"100m", "8", "16Gi", "32Gi", "100Gi", "2", "110", "1", "0"} <= found
    for q in sorted(found):
        assert parse(q) == parse_quantity(q), q


@pytest.mark.parametrize("text", EDGE_CASES)
def test_edge_cases_match_the_client(text: str) -> None:
    assert parse(text) == parse_quantity(text)


@pytest.mark.parametrize("text", INVALID)
def test_invalid_quantities_are_refused_by_both(text: str) -> None:
    with pytest.raises(ValueError):
        parse_quantity(text)
    with pytest.raises(QuantityError):
        parse(text)


def test_where_we_follow_the_go_grammar_instead_of_the_client() -> None:
    # The python client accepts "1K" and "inf"; kube-apiserver's resource.Quantity does not, so no
    # API object can carry them. kubeview refuses them too.
    assert parse_quantity("1K") == 1000 and parse_quantity("inf") == Decimal("Infinity")
    for text in ("1K", "inf"):
        with pytest.raises(QuantityError):
            parse(text)


def test_model_units_round_up_like_milli_value() -> None:
    assert to_units("cpu", "100m") == 100
    assert to_units("cpu", "0.5") == 500
    assert to_units("cpu", "1.0001") == 1001  # MilliValue rounds up
    assert to_units("cpu", "500u") == 1
    assert to_units("memory", "1.5Gi") == 1610612736
    assert to_units("memory", "0.1") == 1
    assert to_units("nvidia.com/gpu", 2) == 2
    assert resource_dict({"cpu": "8", "memory": "16Gi", "pods": "110"}) == {
        "cpu": 8000, "memory": 16 * 2**30, "pods": 110}
