"""The node and pod screens' DRA lines (tui/rows/devices.py) on the recorded DRA cluster: each device
with what it publishes and who holds it; a pod's claim -> device -> UUID."""

from __future__ import annotations

import copy

from kubeapi import fixtures
from kubeapi.dra_model import recorded_dra_model
from rich.text import Text

from kubeview.model.views import PodView
from kubeview.tui.rows.devices import node_device_lines, pod_claim_lines
from kubeview.tui.screens.pod_detail import describe


def plain(lines: list[str]) -> list[str]:
    return [Text.from_markup(line).plain for line in lines]


def test_node_lists_its_devices_and_their_holders() -> None:
    m = recorded_dra_model()
    lines = plain(node_device_lines(m, "dra-node-1"))
    assert lines[0].startswith("DRA devices  2 of 2 GPUs allocated")
    gpu1 = next(ln for ln in lines if ln.strip().startswith("gpu-1 "))
    assert "NVIDIA H100 80GB HBM3 GPU-3d8b0434-bee6-557b-8528-896fa1cae9a6 80Gi" in gpu1
    assert gpu1.endswith("→ dra/shared-gpu (shared-1, shared-2)")
    mig = plain(node_device_lines(m, "dra-mig-node-1"))
    free = next(ln for ln in mig if "gpu-0-mig-1g10gb-19-6" in ln)
    assert " free " in free and "MIG 1g.10gb of GPU-adbc4e6b-b375-5186-8c8d-b2c45815cb4a" in free
    assert node_device_lines(m, "gpu-node-1") == []  # device-plugin GPUs: the figures say it all


def test_pod_detail_follows_claim_to_device_to_uuid() -> None:
    m = recorded_dra_model()
    pod = m.pods[("dra", "ext-pod")]
    text = Text.from_markup(describe(pod, pod.key, None, pod_claim_lines(m, pod))).plain
    assert ("ext-pod-extended-resources-svxzf (extended resource) → gpu.nvidia.com/dra-node-2/gpu-0 → "
            "NVIDIA H100 80GB HBM3 GPU-a373e0d6-5df3-5416-ab1c-fe5f0c580824 80Gi") in text
    big = plain(pod_claim_lines(m, m.pods[("dra", "big-ext-pod")]))
    assert sum("MIG 1g.10gb of GPU-adbc4e6b" in ln for ln in big) == 4
    assert pod_claim_lines(m, m.pods[("dra", "mixed-ext-pod")]) == []  # device plugin: no claim


def test_pending_pods_say_what_is_not_known_yet() -> None:
    m = recorded_dra_model()
    waiting = plain(pod_claim_lines(m, m.pods[("dra", "huge-ext-pod")]))
    assert any("may be served by DRA devices" in ln for ln in waiting)
    obj = copy.deepcopy(next(p for p in fixtures.load("dra/pods.json")["items"] if p["metadata"]["name"] == "claim-pod"))
    obj["metadata"]["name"] = "claim-pod-2"
    obj["spec"].pop("nodeName")
    obj["status"] = {"phase": "Pending"}
    lines = plain(pod_claim_lines(m, PodView.from_api(obj)))
    assert any("gpu: no claim yet" in ln and "does not evaluate" in ln for ln in lines)
