"""Run only by tests/test_ci_skips.py (the name keeps pytest from collecting it otherwise)."""

import pytest


def test_needs_a_module_that_is_not_installed() -> None:
    pytest.importorskip("kubeview_no_such_module_for_the_probe")


def test_skips_for_a_reason_that_is_not_a_dependency() -> None:
    pytest.skip("needs a GPU")
