"""Physical GPUs behind the advertised units (#35): MIG mixed and single, time-slicing and MPS, AMD
and Intel, NVLink cliques and ComputeDomains, read by the model from Node objects as
gpu-feature-discovery and the device plugins write them (docs/gpu-sources.md)."""

from __future__ import annotations

import pytest

from kubeview.model.cluster import ClusterModel
from kubeview.model.events import Listed
from kubeview.model.gpus.vendors import DEFAULT, parse_names


def node(name: str, labels: dict, resources: dict, ready: bool = True) -> dict:
    res = {"cpu": "64", "memory": "512Gi", "pods": "110", **{k: str(v) for k, v in resources.items()}}
    return {"metadata": {"name": name, "labels": labels},
            "status": {"capacity": res, "allocatable": res,
                       "conditions": [{"type": "Ready", "status": "True" if ready else "False"}]}}


def pod(name: str, node_name: str | None, requests: dict, ns: str = "team") -> dict:
    req = {k: str(v) for k, v in requests.items()}
    return {"metadata": {"name": name, "namespace": ns, "uid": f"uid-{name}"},
            "spec": {"nodeName": node_name, "containers": [{"name": "c", "resources": {"requests": req, "limits": req}}]},
            "status": {"phase": "Running" if node_name else "Pending"}}


TS = {"nvidia.com/gpu.count": "2", "nvidia.com/gpu.replicas": "4", "nvidia.com/gpu.sharing-strategy": "time-slicing",
      "nvidia.com/gpu.product": "NVIDIA-L4-SHARED"}
MPS = {"nvidia.com/gpu.count": "2", "nvidia.com/gpu.replicas": "2", "nvidia.com/gpu.sharing-strategy": "mps",
       "nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3-SHARED"}
MIXED = {"nvidia.com/gpu.count": "2", "nvidia.com/mig.strategy": "mixed", "nvidia.com/gpu.product": "NVIDIA-A100-SXM4-80GB",
         "nvidia.com/mig-1g.10gb.count": "14"}
SINGLE = {"nvidia.com/mig.strategy": "single", "nvidia.com/gpu.product": "NVIDIA-A100-SXM4-40GB-MIG-1g.5gb",
          "nvidia.com/gpu.count": "14", "nvidia.com/gpu.slices.gi": "1"}


def model_of(nodes: list[dict], pods: list[dict] = ()) -> ClusterModel:
    m = ClusterModel()
    m.apply(Listed("Node", nodes))
    m.apply(Listed("Pod", list(pods)))
    return m


def test_time_sliced_node_is_two_physical_gpus_times_four() -> None:
    m = model_of([node("ts", TS, {"nvidia.com/gpu": 8})],
                 [pod("a", "ts", {"nvidia.com/gpu": 1}), pod("pair", "ts", {"nvidia.com/gpu": 2})])
    g = m.gpu_shapes().nodes["ts"]
    assert (g.physical, g.replicas, g.sharing, g.product) == (2, 4, "time-slicing", "NVIDIA-L4")
    (o,) = g.offers
    assert (o.kind, o.advertised, o.allocated, o.free, o.physical, o.unit) == ("shared", 8, 3, 5, 2, "replica")
    assert g.words() == "8 advertised = 2 physical × 4 (time-slicing)"
    assert g.warnings == ("team/pair holds 2 time-slicing replicas of nvidia.com/gpu: they may be one physical GPU",)
    assert g.carves[0].gpu == "each of 2 GPUs" and g.carves[0].parts == (("time-slicing replicas", 4, -1),)
    # the scheduler's figures stay the scheduler's: 8 allocatable, as kube-state-metrics reports
    a = m.allocation()
    assert a.allocatable[0, a.column("nvidia.com/gpu")] == 8


def test_renamed_shared_resource_and_mps() -> None:
    renamed = {**TS, "nvidia.com/gpu.replicas": "4"}
    m = model_of([node("ren", renamed, {"nvidia.com/gpu.shared": 8}), node("mps", MPS, {"nvidia.com/gpu": 4})])
    ren, mps = m.gpu_shapes().nodes["ren"], m.gpu_shapes().nodes["mps"]
    assert (ren.offers[0].resource, ren.offers[0].kind, ren.physical) == ("nvidia.com/gpu.shared", "shared", 2)
    assert (mps.sharing, mps.physical, mps.offers[0].advertised, mps.replicas) == ("mps", 2, 4, 2)


def test_mig_mixed_counts_slices_per_profile_and_never_adds_them_to_gpus() -> None:
    m = model_of([node("mig", MIXED, {"nvidia.com/mig-1g.10gb": 14, "nvidia.com/gpu": 0})],
                 [pod("s", "mig", {"nvidia.com/mig-1g.10gb": 3})])
    g = m.gpu_shapes().nodes["mig"]
    assert g.mig_strategy == "mixed" and g.physical == 2
    (o,) = g.offers
    assert (o.kind, o.profile, o.advertised, o.allocated, o.physical, o.unit) == ("mig", "1g.10gb", 14, 3, 2, "1g.10gb slice")
    assert g.carves[0].parts == (("1g.10gb", 7, -1),)
    assert m.largest_fit("nvidia.com/mig-1g.10gb").tolist() == [11]
    assert m.largest_fit("nvidia.com/gpu").tolist() == [0]  # slices are not GPUs
    assert m.gpu_shapes().vendors() == {}  # whole-GPU units: none


def test_mig_single_reads_the_profile_from_the_product() -> None:
    m = model_of([node("single", SINGLE, {"nvidia.com/gpu": 14})])
    g = m.gpu_shapes().nodes["single"]
    (o,) = g.offers
    assert (g.mig_strategy, o.kind, o.profile, o.advertised, o.physical, g.physical) == ("single", "mig", "1g.5gb", 14, 2, 2)


def test_amd_and_intel_are_gpus_of_their_vendor() -> None:
    m = model_of([node("amd", {"amd.com/gpu.product-name": "AMD_Instinct_MI300X"}, {"amd.com/gpu": 8}),
                  node("intel", {}, {"gpu.intel.com/i915": 2}), node("cpu", {}, {})],
                 [pod("x", "amd", {"amd.com/gpu": 3})])
    shapes = m.gpu_shapes()
    assert set(shapes.nodes) == {"amd", "intel"}
    assert (shapes.nodes["amd"].vendor, shapes.nodes["amd"].product, shapes.nodes["amd"].physical) == ("amd", "AMD_Instinct_MI300X", 8)
    assert shapes.vendors() == {"amd": (3, 8), "intel": (0, 2)}
    assert shapes.physical == 10


def test_configured_names_replace_or_add() -> None:
    assert parse_names("+habana.ai/gaudi").classify("habana.ai/gaudi").vendor == "habana.ai"
    assert parse_names("+habana.ai/gaudi").classify("amd.com/gpu") is not None
    assert parse_names("amd.com/gpu").classify("nvidia.com/gpu") is None
    assert DEFAULT.classify("nvidia.com/mig-3g.40gb.shared").profile == "3g.40gb"
    assert DEFAULT.classify("example.com/foo") is None and DEFAULT.classify("cpu") is None
    with pytest.raises(ValueError, match="not an extended resource name"):
        parse_names("gpu")


def test_nvlink_cliques_free_gpus_and_largest_job() -> None:
    clique = {"nvidia.com/gpu.product": "NVIDIA-GB200", "nvidia.com/gpu.count": "4"}
    nodes = [node(f"{c}-{i}", {**clique, "nvidia.com/gpu.clique": f"uuid-1.{c}"}, {"nvidia.com/gpu": 4})
             for c in ("a", "b") for i in range(2)]
    nodes.append(node("b-2", {**clique, "nvidia.com/gpu.clique": "uuid-1.b"}, {"nvidia.com/gpu": 4}, ready=False))
    m = model_of(nodes, [pod("p1", "a-0", {"nvidia.com/gpu": 3}), pod("p2", "b-1", {"nvidia.com/gpu": 4})])
    doms = {d.name: d for d in m.gpu_shapes().domains}
    assert (doms["uuid-1.a"].nodes, doms["uuid-1.a"].gpus, doms["uuid-1.a"].free, doms["uuid-1.a"].largest_job) == (
        ("a-0", "a-1"), 8, 5, 5)
    assert (doms["uuid-1.b"].gpus, doms["uuid-1.b"].free, doms["uuid-1.b"].largest_job) == (12, 8, 4)  # b-2 not Ready
    fits = dict(zip(m.allocation().nodes, m.largest_fit().tolist(), strict=True))
    assert doms["uuid-1.a"].room(2, fits) == 2 and doms["uuid-1.b"].room(4, fits) == 1


def test_compute_domains_group_their_status_nodes() -> None:
    clique = {"nvidia.com/gpu.count": "4"}
    m = model_of([node(f"n{i}", clique, {"nvidia.com/gpu": 4}) for i in range(3)])
    cd = {"apiVersion": "resource.nvidia.com/v1beta1", "kind": "ComputeDomain",
          "metadata": {"name": "train-cd", "namespace": "team"},
          "spec": {"numNodes": 2, "channel": {"resourceClaimTemplate": {"name": "train-channel"}}},
          "status": {"status": "Ready", "nodes": [{"name": "n0", "cliqueID": "u.1"}, {"name": "n2", "cliqueID": "u.1"}]}}
    m.apply(Listed("ComputeDomain", [cd]))
    (d,) = m.gpu_shapes().domains
    assert (d.name, d.source, d.nodes, d.gpus) == ("team/train-cd", "ComputeDomain", ("n0", "n2"), 8)


def test_snapshot_gpus_section_is_valid_and_says_what_the_units_are() -> None:
    from kubeview.snapshot.document import SNAPSHOT_SCHEMA, build_snapshot
    from kubeview.snapshot.schema import validate

    m = model_of([node("ts", TS, {"nvidia.com/gpu": 8}), node("mig", MIXED, {"nvidia.com/mig-1g.10gb": 14}),
                  node("amd", {}, {"amd.com/gpu": 4})],
                 [pod("pair", "ts", {"nvidia.com/gpu": 2}), pod("s", "mig", {"nvidia.com/mig-1g.10gb": 1})])
    doc = build_snapshot(m, now=0)
    assert validate(doc, SNAPSHOT_SCHEMA) == []
    gpus = doc["gpus"]
    by = {n["node"]: n for n in gpus["nodes"]}
    assert by["ts"]["words"] == "8 advertised = 2 physical × 4 (time-slicing)" and by["ts"]["warnings"]
    assert by["mig"]["offers"][0] | {} == {"resource": "nvidia.com/mig-1g.10gb", "vendor": "nvidia", "kind": "mig",
                                           "profile": "1g.10gb", "source": "device-plugin", "advertised": 14,
                                           "allocated": 1, "free": 13, "physical": 2, "replicas": 1}
    assert gpus["physical"] == {"total": 8, "unknownNodes": 0, "free": None}  # shared: free physical unknown
    assert gpus["vendors"] == {"amd": {"allocated": 0, "advertised": 4}, "nvidia": {"allocated": 2, "advertised": 8}}
    # the scheduler's figures are unchanged beside it
    assert {n["name"]: n["resources"]["nvidia.com/gpu"]["allocatable"] for n in doc["nodes"]}["ts"] == 8


def test_fragmentation_apart_for_whole_gpus_and_shared_replicas() -> None:
    from kubeview.snapshot.document import build_snapshot

    m = model_of([node("ts", TS, {"nvidia.com/gpu": 8}), node("w1", {"nvidia.com/gpu.count": "2"}, {"nvidia.com/gpu": 2}),
                  node("w2", {"nvidia.com/gpu.count": "2"}, {"nvidia.com/gpu": 2})],
                 [pod("a", "w1", {"nvidia.com/gpu": 1}), pod("b", "w2", {"nvidia.com/gpu": 1})])
    doc = build_snapshot(m, now=0)
    two = {k: next(s for s in f["sizes"] if s["size"] == 2) for k, f in doc["gpus"]["fragmentation"].items()}
    assert (two["gpu"]["placeable"], two["gpu"]["ideal"], two["gpu"]["stranded"]) == (0, 1, 1)
    assert (two["shared"]["placeable"], doc["gpus"]["fragmentation"]["shared"]["freeTotal"]) == (4, 8)
    assert doc["fragmentation"]["freeTotal"] == 10  # the scheduler's units, wherever they are


def test_amd_partitions_and_intel_shared_devices_from_their_labels() -> None:
    # the labeller counts partitions too (its devices include amdgpu_xcp_*): the GPUs are not known
    cpx = {"beta.amd.com/gpu.family.AI": "64", "amd.com/gpu.compute-memory-partition": "cpx_nps4"}
    mixed = {"beta.amd.com/gpu.family.AI": "16"}
    intel = {"gpu.intel.com/device-id.0300-56c0.count": "2", "gpu.intel.com/product": "Flex_170"}
    m = model_of([node("amd-single", cpx, {"amd.com/gpu": 64}), node("amd-mixed", mixed, {"amd.com/cpx_nps4": 16}),
                  node("intel", intel, {"gpu.intel.com/i915": 6})])
    s = m.gpu_shapes().nodes
    (a,) = s["amd-single"].offers
    assert (a.kind, a.profile, a.advertised, s["amd-single"].physical, a.unit) == ("partition", "cpx_nps4", 64, None,
                                                                                  "cpx_nps4 partition")
    (b,) = s["amd-mixed"].offers
    assert (b.resource, b.vendor, b.kind, b.physical, s["amd-mixed"].physical) == (
        "amd.com/cpx_nps4", "amd", "partition", None, None)
    assert model_of([node("plain", {"beta.amd.com/gpu.family.AI": "8"}, {"amd.com/gpu": 8})]).gpu_shapes().nodes[
        "plain"].physical == 8
    (i,) = s["intel"].offers
    assert (i.kind, i.replicas, i.physical, s["intel"].product) == ("shared", 3, 2, "Flex_170")
    assert m.gpu_shapes().vendors() == {"intel": (0, 6)}  # partitions are their own unit


def test_mps_warns_that_the_plugin_refuses_more_than_one() -> None:
    m = model_of([node("mps", MPS, {"nvidia.com/gpu": 4})], [pod("two", "mps", {"nvidia.com/gpu": 2})])
    (w,) = m.gpu_shapes().nodes["mps"].warnings
    assert w.startswith("team/two asks 2 MPS replicas of nvidia.com/gpu: the device plugin refuses more than 1")


def test_mig_enabled_gpus_report_zero_replicas_and_are_not_shared() -> None:
    labels = {**MIXED, "nvidia.com/gpu.replicas": "0", "nvidia.com/gpu.sharing-strategy": "none"}
    g = model_of([node("mig", labels, {"nvidia.com/mig-1g.10gb": 14})]).gpu_shapes().nodes["mig"]
    assert (g.sharing, g.replicas, g.offers[0].replicas) == (None, 1, 1)


def test_several_mig_profiles_leave_the_slices_gpus_unknown() -> None:
    balanced = {"nvidia.com/gpu.count": "2", "nvidia.com/mig.strategy": "mixed", "nvidia.com/gpu.product": "NVIDIA-A100-SXM4-40GB"}
    m = model_of([node("bal", balanced, {"nvidia.com/mig-1g.5gb": 4, "nvidia.com/mig-2g.10gb": 2,
                                         "nvidia.com/mig-3g.20gb": 2})])
    g = m.gpu_shapes().nodes["bal"]
    assert [o.physical for o in g.offers] == [None, None, None] and g.physical == 2
    assert g.carves[0].parts == (("1g.5gb", 2, -1), ("2g.10gb", 1, -1), ("3g.20gb", 1, -1))  # evenly: each GPU alike


def test_intel_shared_units_held_twice_are_warned() -> None:
    intel = {"gpu.intel.com/device-id.0300-56c0.count": "2"}
    m = model_of([node("i", intel, {"gpu.intel.com/i915": 8})], [pod("two", "i", {"gpu.intel.com/i915": 2})])
    (w,) = m.gpu_shapes().nodes["i"].warnings
    assert w == "team/two holds 2 shared replicas of gpu.intel.com/i915: they may be one physical GPU"


def test_a_slice_pods_size_is_named_in_slices() -> None:
    from kubeview.scheduling.gang_fit import describe

    assert describe({"nvidia.com/mig-1g.5gb": 2, "cpu": 100}) == "2 nvidia.com/mig-1g.5gb"
    assert describe({"amd.com/gpu": 1}) == "1 amd.com/gpu"
