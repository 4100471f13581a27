"""The GPU ledger (model/gpus/ledger.py) on the recorded DRA cluster (tests/fixtures/k8s/dra), and its
place in the snapshot document and the metrics."""

from __future__ import annotations

import copy
import json

from kubeapi import fixtures
from kubeapi.dra_model import recorded_dra_model

from kubeview.model.cluster import ClusterModel
from kubeview.model.events import Listed, WatchEvent
from kubeview.model.gpus.dra import DeviceClassView, parse_cel
from kubeview.model.gpus.idle import find_idle
from kubeview.model.usage import UsageUpdate
from kubeview.snapshot.document import SNAPSHOT_SCHEMA, build_snapshot, snapshot_json
from kubeview.snapshot.ksm import exposition
from kubeview.snapshot.schema import validate

recorded = recorded_dra_model


def gpu(m: ClusterModel, node: str) -> tuple[int, int]:
    a = m.allocation()
    i, c = a.nodes.index(node), a.column("nvidia.com/gpu")
    return int(a.allocatable[i, c]), int(a.requested[i, c])


def test_snapshot_carries_pod_claim_device_uuid_and_stays_true_to_its_schema() -> None:
    m = recorded()
    doc = build_snapshot(m, now=0.0)
    assert validate(doc, SNAPSHOT_SCHEMA) == []
    assert json.loads(snapshot_json(m, now=0.0)) == json.loads(json.dumps(doc))
    claim = next(c for c in doc["dra"]["claims"] if c["reservedFor"] == ["ext-pod"])
    slices = fixtures.load("dra/resourceslices.json")["items"]
    uuid = next(d["attributes"]["uuid"]["string"] for s in slices if s["spec"]["nodeName"] == "dra-node-2"
                for d in s["spec"]["devices"] if d["name"] == "gpu-0")
    assert claim["extendedResource"] and claim["node"] == "dra-node-2"
    assert [(d["device"], d["uuid"], d["type"]) for d in claim["devices"]] == [("gpu-0", uuid, "gpu")]
    big = next(c for c in doc["dra"]["claims"] if c["reservedFor"] == ["big-ext-pod"])
    assert {(d["type"], d["profile"], d["uuid"]) for d in big["devices"]} == {("mig", "1g.10gb", None)}
    assert {d["parentUUID"] for d in big["devices"]} == {"GPU-adbc4e6b-b375-5186-8c8d-b2c45815cb4a"}
    assert len(doc["dra"]["devices"]) == 2 + 2 + 10
    assert doc["dra"]["unevaluatedClasses"] == []
    ext_pod = next(p for p in doc["pods"] if p["name"] == "ext-pod")
    assert "nvidia.com/gpu" not in ext_pod["requests"]  # counted once, as the device
    nodes = {n["name"]: n for n in doc["nodes"]}
    assert nodes["dra-node-2"]["resources"]["nvidia.com/gpu"]["requested"] == 1
    broken = copy.deepcopy(doc)
    broken["dra"]["devices"][0]["state"] = "taken"
    assert any("state" in e for e in validate(broken, SNAPSHOT_SCHEMA))


def test_metrics_have_one_series_per_device() -> None:
    text = exposition(recorded())
    lines = [ln for ln in text.splitlines() if ln.startswith("kubeview_dra_device_allocated{")]
    assert len(lines) == 14
    assert sum(ln.endswith(" 1") for ln in lines) == 2 + 1 + 6  # dra-node-1, dra-node-2, the MIG node
    assert any('device="gpu-0-mig-1g10gb-19-6"' in ln and 'profile="1g.10gb"' in ln and ln.endswith(" 0")
               for ln in lines)
    # KSM's node series read node.status: a DRA node declares no nvidia_com_gpu there
    assert 'kube_node_status_allocatable{node="dra-node-1",resource="nvidia_com_gpu"' not in text


def test_only_the_newest_pool_generation_counts() -> None:
    m = recorded()
    s = next(x for x in fixtures.load("dra/resourceslices.json")["items"] if x["spec"]["nodeName"] == "dra-node-2")
    newer = copy.deepcopy(s)
    newer["metadata"].update(name="dra-node-2-newer", resourceVersion="999")
    newer["spec"]["pool"]["generation"] = 2
    newer["spec"]["devices"] = newer["spec"]["devices"][:1] + [dict(newer["spec"]["devices"][1], name="gpu-9"),
                                                               dict(newer["spec"]["devices"][1], name="gpu-10")]
    assert gpu(m, "dra-node-2") == (2, 1)
    m.apply(WatchEvent("ResourceSlice", "ADDED", newer))
    assert gpu(m, "dra-node-2") == (3, 1)  # gpu-0 (still allocated), gpu-9, gpu-10; the old slice is ignored
    assert [d.device.name for d in m.gpus.node("dra-node-2").devices] == ["gpu-0", "gpu-10", "gpu-9"]
    m.apply(WatchEvent("ResourceSlice", "DELETED", newer))
    assert gpu(m, "dra-node-2") == (2, 1)


def test_an_incomplete_pool_hands_out_nothing() -> None:
    m = recorded()
    counters = next(x for x in fixtures.load("dra/resourceslices.json")["items"] if x["spec"].get("sharedCounters"))
    m.apply(WatchEvent("ResourceSlice", "DELETED", counters))
    states = {d.device.name: d.state for d in m.gpus.node("dra-mig-node-1").devices}
    assert states["gpu-0-mig-1g10gb-19-6"] == "unavailable" and gpu(m, "dra-mig-node-1") == (6, 6)


def test_cel_subset_and_what_is_not_evaluated() -> None:
    assert parse_cel("device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'mig'") == (
        ("", "driver", "gpu.nvidia.com"), ("gpu.nvidia.com", "type", "mig"))
    assert parse_cel('device.attributes["gpu.nvidia.com"]["profile"] == "1g.10gb"') == (
        ("gpu.nvidia.com", "profile", "1g.10gb"),)
    assert parse_cel("device.capacity['gpu.nvidia.com'].memory.compareTo(quantity('40Gi')) >= 0") is None
    cls = DeviceClassView.from_api({"metadata": {"name": "big"}, "spec": {
        "extendedResourceName": "nvidia.com/gpu",
        "selectors": [{"cel": {"expression": "device.capacity['gpu.nvidia.com'].memory.compareTo(quantity('40Gi')) >= 0"}}]}})
    assert not cls.evaluated
    m = recorded()
    m.apply(WatchEvent("DeviceClass", "ADDED", {"metadata": {"name": "big"}, "spec": {
        "selectors": [{"cel": {"expression": "device.capacity['x'].memory > 1"}}]}}))
    assert m.gpus.unevaluated_classes() == ["big"]
    assert build_snapshot(m, now=0.0)["dra"]["unevaluatedClasses"] == ["big"]


def test_idle_gpus_join_dcgm_by_uuid_when_pod_labels_are_missing() -> None:
    m = recorded()
    uuid = {(d.device.node, d.device.name): d.device.uuid for ng in m.gpus.nodes().values() for d in ng.devices}
    m.apply(UsageUpdate(source="prometheus", gpus={uuid[("dra-node-2", "gpu-0")]: 1.0,
                                                    uuid[("dra-node-1", "gpu-0")]: 80.0}))
    report = find_idle(m.pods.values(), m.usage.pods, dra=m.gpus.pod_devices(), by_uuid=m.usage.gpus)
    assert report.pods[("dra", "ext-pod")].idle == 1  # no pod labels, found by its device's UUID
    assert report.pods[("dra", "claim-pod")].idle == 0
    assert report.pods[("dra", "shared-1")].idle is None  # its GPU has no series: unmeasured, not idle
    assert report.pods[("dra", "big-ext-pod")].requested == 4 and report.pods[("dra", "big-ext-pod")].idle is None
    assert report.pods[("dra", "mixed-ext-pod")].requested == 1  # the device-plugin pod, as before
    doc = build_snapshot(m, now=0.0)
    assert doc["cluster"]["usage"]["idleGpus"] == 1


def test_a_deleted_nodes_devices_are_gone_everywhere() -> None:
    """#24 item 5: a Node deleted while its ResourceSlice stays (garbage collection later, or never in the
    embedded cluster) left its MIG devices listed as free. Gone: no units, not free, held by no pod, in the
    snapshot and the metrics too; back when the node is."""
    m = recorded()
    node = next(n for n, ng in m.gpus.nodes().items() if any(d.device.type == "mig" for d in ng.devices))
    before = m.gpus.node(node)
    assert before is not None and before.gpu_total > 0 and {s.state for s in before.devices} & {"free", "allocated"}
    obj = {"metadata": {"name": node}}
    assert m.apply(WatchEvent("Node", "DELETED", obj))
    gone = m.gpus.node(node)
    assert gone is not None and len(gone.devices) == len(before.devices)  # still listed (the slice is there)...
    assert {s.state for s in gone.devices} == {"gone"} and (gone.gpu_total, gone.gpu_free) == (0, 0)  # ...as gone
    assert not any(d.node == node for ds in m.gpus.pod_gpus().values() for d in ds)
    doc = build_snapshot(m, now=0.0)
    assert validate(doc, SNAPSHOT_SCHEMA) == []
    assert {d["state"] for d in doc["dra"]["devices"] if d["node"] == node} == {"gone"}
    assert not any(f'node="{node}"' in ln and ln.endswith(" 1") for ln in exposition(m).splitlines()
                   if ln.startswith("kubeview_dra_device_allocated{"))
    # a relist of Nodes without it says the same; the node coming back brings its devices back
    nodes = fixtures.load("dra/nodes.json")["items"]
    m.apply(Listed("Node", [n for n in nodes if n["metadata"]["name"] != node]))
    assert {s.state for s in m.gpus.node(node).devices} == {"gone"}
    m.apply(WatchEvent("Node", "ADDED", next(n for n in nodes if n["metadata"]["name"] == node)))
    assert m.gpus.node(node) == before and gpu(m, node)[0] == before.gpu_total
