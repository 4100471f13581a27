"""cluster/kube/native_scheduler.py refuses, before any request, what a native profile cannot hold
(its reading and applying against a real API server: tests/realk8s/test_native_apply_real.py)."""

from __future__ import annotations

import pytest

from kubeview.cluster.kube.native_scheduler import apply_native
from kubeview.cluster.source import ActionError
from kubeview.scheduling.config import PackingConfig
from kubeview.scheduling.native_profile import native_config


@pytest.mark.parametrize(("config", "words"), [
    (PackingConfig(), "no native form set"),
    (native_config(PackingConfig(bias={"gpu-1": 3})), "no per-node bias or avoid"),
    (native_config(PackingConfig(avoid=frozenset({"gpu-2"}))), "no per-node bias or avoid")])
def test_what_native_cannot_hold_is_refused(config: PackingConfig, words: str) -> None:
    with pytest.raises(ActionError, match=words):
        apply_native(None, "https://unused.invalid", 1.0, config)  # type: ignore[arg-type]
