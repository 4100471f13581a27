"""Wording of #24 item 16: a declined scale "left at 1 replica" (not "1 replicas"), a Job's
MaxInt32 backoffLimit "unlimited", and `bench model` labelling its CPU-time rate as a rate."""

from __future__ import annotations

from kubeview.bench.model import Figure, cpu_note
from kubeview.tui.rows.jobs import backoff_text
from kubeview.tui.screens.workloads import left_at


def test_left_at_one_replica_is_singular() -> None:
    assert left_at("ReplicaSet", "default", "web", "replicas", 1) == "ReplicaSet default/web left at 1 replica."
    assert left_at("ReplicaSet", "default", "web", "replicas", 3) == "ReplicaSet default/web left at 3 replicas."


def test_maxint32_backoff_limit_is_unlimited() -> None:
    assert [backoff_text(n) for n in (6, 2147483647)] == ["6", "unlimited"]


def test_bench_model_labels_a_cpu_time_rate_as_a_rate() -> None:
    assert cpu_note(Figure("watch events applied", 25_000, "events/s", 20_000, True, 31_000)) == \
        "  (rate on cpu time: 31,000 events/s)"
    assert cpu_note(Figure("build from lists", 1.5, "s", 2.0, False, 1.2)) == "  (cpu time: 1.20 s)"
    assert cpu_note(Figure("snapshot JSON", 0.5, "s", 1.0, False)) == ""
