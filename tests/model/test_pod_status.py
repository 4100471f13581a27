"""One reading of a Pod's restarts (model/pod_status.py), used by the model, the render jobs and the
local controllers alike."""

from __future__ import annotations

from kubeview.model.pod_status import restarts
from kubeview.model.views import PodView


def test_restarts_sum_every_container_and_read_a_missing_count_as_zero() -> None:
    pod = {"metadata": {"namespace": "ns", "name": "p"}, "spec": {"containers": []},
           "status": {"containerStatuses": [{"restartCount": 2}, {"restartCount": 3}, {}, {"restartCount": None}]}}
    assert restarts(pod) == 5
    assert PodView.from_api(pod).restarts == 5  # the view reads the same
    assert restarts({"metadata": {}}) == 0 and restarts({"status": None}) == 0
    assert restarts({"status": {"containerStatuses": None}}) == 0
