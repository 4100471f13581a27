"""The node and pod screens' DRA lines (tui/rows/devices.py) on the recorded DRA cluster: each device
with what it publishes and who holds it; a pod's claim -> device -> UUID."""

from __future__ import annotations

import copy

from kubeapi import fixtures
from kubeapi.dra_model import recorded_dra_model
from rich.text import Text
from tui_helpers import middle_cut

from kubeview.model.views import PodView
from kubeview.tui.rows.devices import node_devices, pod_claim_lines
from kubeview.tui.screens.pod_detail import describe
from kubeview.tui.widgets.device_table import device_lines


def plain(lines: list[str]) -> list[str]:
    return [Text.from_markup(line).plain for line in lines]


def test_node_lists_its_devices_and_their_holders() -> None:
    m = recorded_dra_model()
    table = node_devices(m, "dra-node-1")
    assert (table.allocated, table.total) == (2, 2)
    gpu1 = next(row for row in table.rows if row[0] == "gpu-1")
    assert gpu1 == ("gpu-1", "allocated", "NVIDIA H100 80GB HBM3", "GPU-3d8b0434-bee6-557b-8528-896fa1cae9a6",
                    "80Gi", "shared-1, shared-2", "dra/shared-gpu", "")  # a shared claim: one device, two pods
    mig = node_devices(m, "dra-mig-node-1")
    free = next(row for row in mig.rows if row[0] == "gpu-0-mig-1g10gb-19-6")
    assert free[1] == "free" and free[3:5] == ("of GPU-adbc4e6b-b375-5186-8c8d-b2c45815cb4a", "1g.10gb 9.6Gi")
    assert node_devices(m, "gpu-node-1") is None  # device-plugin GPUs: the figures say it all


def test_device_table_fits_every_width_one_line_per_device() -> None:
    m = recorded_dra_model()
    for node in ("dra-node-1", "dra-mig-node-1"):
        table = node_devices(m, node)
        for width in (100, 120, 160):
            lines = device_lines(table, width).plain.splitlines()
            assert len(lines) == 2 + len(table.rows)  # title, header, one line per device: nothing wraps
            assert all(len(line) <= width for line in lines), (node, width)
            assert lines[0].startswith("DRA devices  ")
            assert lines[1].split() == ["DEVICE", "STATE", "PRODUCT", "UUID", "MEMORY/MIG", "POD", "CLAIM"]
            for row, line in zip(table.rows, lines[2:], strict=True):
                assert f" {row[1]} " in line  # the state whole
                cells = line.split()
                assert middle_cut(row[0], cells[0]) or width < 120  # names whole from 120 columns
                uuid = row[3].removeprefix("of ")
                shown = next(c for c in cells if c.startswith("GPU-"))
                assert middle_cut(uuid, shown) and (width < 160 or len(shown) >= 32)  # both ends kept


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


def test_node_devices_show_taints_shares_and_admin_access() -> None:
    """The v1.37.2 recordings (tests/fixtures/k8s/dra137): a NOTE column appears when a device has
    something to say, and every line still fits."""
    import json
    from pathlib import Path

    from kubeview.model.cluster import ClusterModel
    from kubeview.model.events import Listed

    rec = Path(__file__).resolve().parents[1] / "fixtures" / "k8s" / "dra137" / "placed"
    m = ClusterModel()
    for kind, name in (("DeviceClass", "deviceclasses.json"), ("ResourceSlice", "resourceslices.json"),
                       ("DeviceTaintRule", "devicetaintrules.json"), ("ResourceClaim", "resourceclaims.json")):
        m.apply(Listed(kind, json.loads((rec / name).read_text())["items"]))
    table = node_devices(m, "dra137-node")
    rows = {row[0]: row for row in table.rows}
    assert rows["gpu-1"][1] == "tainted" and rows["gpu-1"][-1] == "taint kubeview.test/ecc=double-bit:NoSchedule"
    assert rows["gpu-2"][-1] == "taint kubeview.test/drain:NoSchedule (rule dra137-node-drain)"
    assert rows["gpu-s"][-1] == "shared: 3 shares, memory 70Gi/80Gi"
    assert rows["gpu-s"][5] == "prio-a, share-a, share-b"
    assert rows["gpu-0"][-1] == "admin access: dra137-admin/admin-a" and rows["gpu-0"][6] == "dra137/whole-a"
    for width in (100, 160):
        lines = device_lines(table, width).plain.splitlines()
        assert len(lines) == 2 + len(table.rows) and all(len(line) <= width for line in lines)
        assert lines[1].split()[-1] == "NOTE"
    prio = PodView.from_api({"metadata": {"name": "prio-a", "namespace": "dra137"},
                             "spec": {"resourceClaims": [{"name": "gpu", "resourceClaimName": "prio-a"}]},
                             "status": {"phase": "Running"}})
    assert any("(alternative shared of gpu)" in line for line in plain(pod_claim_lines(m, prio)))
