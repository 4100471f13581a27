"""Shared, MIG-sliced and other vendors' GPUs in the views (#35), pure: the Nodes table's GPU cell and
FIT in each node's own unit, `/` finding them, the header's additions at every width, the node screen's
GPUs block and the pod screen's warning. The TUI never says "8 GPUs free" of 2 GPUs shared 4 ways."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
from rich.text import Text

from kubeview.model.cluster import ClusterModel
from kubeview.model.events import Listed
from kubeview.model.freshness import Lists
from kubeview.model.usage import NodeUsage, UsageUpdate
from kubeview.tui.rows import nodes as rows
from kubeview.tui.rows.gpu_block import node_block, pod_warnings
from kubeview.tui.rows.gpu_units import NONE, header_words, shaped
from kubeview.tui.summary import gpu_parts, summarize
from kubeview.tui.widgets.cluster_header import ClusterHeader
from kubeview.tui.widgets.gpu_shape import gpu_lines

TS = {"nvidia.com/gpu.count": "2", "nvidia.com/gpu.replicas": "4", "nvidia.com/gpu.sharing-strategy": "time-slicing",
      "nvidia.com/gpu.product": "NVIDIA-L4-SHARED"}
MIXED = {"nvidia.com/gpu.count": "1", "nvidia.com/mig.strategy": "mixed", "nvidia.com/gpu.product": "NVIDIA-A100-SXM4-80GB",
         "nvidia.com/mig-1g.10gb.count": "7"}


def node(name: str, labels: dict, resources: dict) -> dict:
    res = {"cpu": "64", "memory": "512Gi", "pods": "110", **{k: str(v) for k, v in resources.items()}}
    return {"metadata": {"name": name, "labels": labels, "resourceVersion": "1"},
            "status": {"capacity": res, "allocatable": res, "conditions": [{"type": "Ready", "status": "True"}]}}


def pod(name: str, node_name: str, requests: dict, ns: str = "team") -> dict:
    req = {k: str(v) for k, v in requests.items()}
    return {"metadata": {"name": name, "namespace": ns, "uid": f"uid-{name}"},
            "spec": {"nodeName": node_name, "containers": [{"name": "c", "resources": {"requests": req, "limits": req}}]},
            "status": {"phase": "Running"}}


def cluster() -> ClusterModel:
    m = ClusterModel()
    m.apply(Listed("Node", [node("plain", {"nvidia.com/gpu.count": "2"}, {"nvidia.com/gpu": 2}),
                            node("ts", TS, {"nvidia.com/gpu": 8}),
                            node("mig", MIXED, {"nvidia.com/mig-1g.10gb": 7}),
                            node("amd", {"amd.com/gpu.product-name": "AMD_Instinct_MI300X"}, {"amd.com/gpu": 8}),
                            node("cpu", {}, {})]))
    m.apply(Listed("Pod", [pod("a", "plain", {"nvidia.com/gpu": 1}), pod("one", "ts", {"nvidia.com/gpu": 1}),
                           pod("pair", "ts", {"nvidia.com/gpu": 2}), pod("s", "mig", {"nvidia.com/mig-1g.10gb": 3}),
                           pod("x", "amd", {"amd.com/gpu": 3})]))
    return m


def gpu_cell(r: rows.NodeRows, name: str, width: int = 16) -> str:
    cell = rows.cells(r, name, {"gpu": width})[3]
    return (cell.plain if isinstance(cell, Text) else cell).rstrip()


def test_only_unusual_nodes_get_a_shape() -> None:
    m = cluster()
    assert sorted(shaped(m).nodes) == ["amd", "mig", "ts"]  # plain whole GPUs: no shape to compute
    plain = ClusterModel()
    plain.apply(Listed("Node", [node("n", {"nvidia.com/gpu.count": "2"}, {"nvidia.com/gpu": 2})]))
    assert shaped(plain) is NONE


def test_nodes_table_reads_each_node_in_its_unit() -> None:
    m = cluster()
    r = rows.build(m, shapes=shaped(m))
    assert gpu_cell(r, "plain").endswith(" 1/2")
    assert gpu_cell(r, "ts").endswith(" 3/8 ×4")  # replicas of 2 GPUs, never "8 GPUs"
    assert gpu_cell(r, "mig").endswith(" 3/7 1g")  # 1g.10gb slices, not GPUs
    assert gpu_cell(r, "amd").endswith(" 3/8 amd")
    fit = {n: int(r.fit[r.row[n]]) for n in ("plain", "ts", "mig", "amd")}
    assert fit == {"plain": 1, "ts": 5, "mig": 4, "amd": 5}  # in the node's unit
    # the model's arrays are not written: the allocation keeps the scheduler's figures
    a = m.allocation()
    assert a.requested[a.nodes.index("mig"), a.column("nvidia.com/gpu")] == 0 if a.column("nvidia.com/gpu") else True
    assert int(m.largest_fit()[a.nodes.index("mig")]) == 0
    # narrow: the figure and its unit stay, the bar gives way
    assert gpu_cell(r, "ts", 9).endswith("3/8 ×4")


def test_sorting_and_search_use_the_shown_unit() -> None:
    m = cluster()
    r = rows.build(m, shapes=shaped(m))
    assert rows.order(r, "gpu")[:3] == ["mig", "amd", "ts"]  # 3 held each, then the fullest (3/7), then by name
    assert rows.order(r, "fit")[0] == "amd"
    for text, hit in (("mig", ["mig"]), ("time-slicing", ["ts"]), ("amd", ["amd"]), ("1g.10gb", ["mig"])):
        mask = rows.matches(r, text, {})
        assert [n for n, ok in zip(r.names, mask, strict=True) if ok] == hit, text
    assert rows.stamp(r, "ts") != rows.stamp(rows.build(m), "ts")  # the suffix is part of the row's cache key


def test_header_says_what_the_total_is_made_of() -> None:
    m = cluster()
    w = header_words(shaped(m))
    assert w.inside == (("8 = 2 physical × 4 shared", "8 shared"),)
    assert w.outside == (("+ 3/7 MIG slices", "+ 7 MIG"), ("+ amd 3/8", "+ amd 8"))
    s = summarize(m, shapes=shaped(m))
    assert (s.gpu.requested, s.gpu.allocatable) == (4, 10)  # the scheduler's nvidia.com/gpu figures
    assert s.gpu_free_replicas == 5
    assert gpu_parts(s)[0].text == "6 free (5 shared replicas), largest placeable 5"


def test_header_line_keeps_the_words_at_every_width() -> None:
    m = cluster()
    s = summarize(m, shapes=shaped(m))
    header = ClusterHeader("Nodes")
    wide = header._line2(s, 160).plain
    assert "GPU" in wide and "(8 = 2 physical × 4 shared) + 3/7 MIG slices + amd 3/8" in wide
    narrow = header._line2(s, 80).plain
    assert len(narrow) <= 80 and "(8 shared) + 7 MIG + amd 8" in narrow
    assert "(8" not in header._line2(s, 40).plain  # too narrow: the words go before the GPU total does
    unknown = header._line2(replace(s, lists=Lists(frozenset({"Node"}))), 160).plain
    assert "shared" not in unknown and "GPU …" in unknown  # not listed yet: "…", no words


def test_node_block_words_offers_carves_use_warnings() -> None:
    m = cluster()
    m.usage.merge(UsageUpdate(at=1.0, nodes={"ts": NodeUsage(gpu_util=(87.0, 12.0)), "mig": NodeUsage(gpu_util=(40.0,))}))
    shapes = shaped(m)
    ts = node_block(m, "ts", shapes)
    assert ts is not None and ts.title == "8 advertised = 2 physical × 4 (time-slicing)" and ts.product == "NVIDIA-L4"
    assert ts.offers == (("nvidia.com/gpu", "shared", "device-plugin", "3/8", "2", "4"),)
    assert ts.carves == ("each of 2 GPUs: 4 time-slicing replicas",)
    assert ts.use == ("GPU 0 87% · 4 replicas", "GPU 1 12% · 4 replicas")
    assert ts.warnings == ("team/pair holds 2 time-slicing replicas of nvidia.com/gpu: they may be one physical GPU",)
    mig = node_block(m, "mig", shapes)
    assert mig is not None and mig.offers == (("nvidia.com/mig-1g.10gb", "mig 1g.10gb", "device-plugin", "3/7", "1", "-"),)
    assert mig.product == "NVIDIA-A100-SXM4-80GB · MIG mixed"
    assert mig.use == ("GPU 0 40% · 7 × 1g.10gb, 3 held",)
    assert node_block(m, "plain", shapes) is None and node_block(m, "cpu", shapes) is None
    text = gpu_lines(ts, 80).plain.splitlines()
    assert text[0].startswith("GPUs 8 advertised = 2 physical × 4 (time-slicing)")
    assert max(len(line) for line in text) <= 80 and "physical GPU" in text[-1]  # the warning wrapped, whole
    short = gpu_lines(ts, 80, short=True).plain  # 80x24: no column headers, no carves; the warning stays
    assert "RESOURCE" not in short and "each of" not in short and "may be one" in short


def test_pod_warning_for_two_replicas() -> None:
    m = cluster()
    pair = m.pods[("team", "pair")]
    assert pod_warnings(shaped(m), pair) == [
        "team/pair holds 2 time-slicing replicas of nvidia.com/gpu: they may be one physical GPU"]
    assert pod_warnings(shaped(m), m.pods[("team", "one")]) == []


def test_nodes_table_unchanged_without_shapes() -> None:
    m = cluster()
    r = rows.build(m)
    assert not r.unit and gpu_cell(r, "ts").endswith(" 3/8")
    assert np.array_equal(r.alloc["gpu"], m.allocation().allocatable[:, m.allocation().column("nvidia.com/gpu")])


def test_pods_gpu_column_counts_slices_and_other_vendors() -> None:
    from kubeview.tui.rows.pods import gpus

    m = cluster()
    assert gpus(m.pods[("team", "s")], {}) == (3, True)  # 3 MIG slices: "3 mig"
    assert gpus(m.pods[("team", "x")], {}) == (3, False)  # AMD's GPUs
    assert gpus(m.pods[("team", "pair")], {}) == (2, False)


def test_a_plain_node_in_an_nvlink_clique_gets_the_block_with_its_domain() -> None:
    m = ClusterModel()
    clique = {"nvidia.com/gpu.count": "4", "nvidia.com/gpu.product": "NVIDIA-GB200", "nvidia.com/gpu.clique": "u.1"}
    m.apply(Listed("Node", [node("a", clique, {"nvidia.com/gpu": 4}), node("b", clique, {"nvidia.com/gpu": 4}),
                            node("c", {"nvidia.com/gpu.count": "4"}, {"nvidia.com/gpu": 4})]))
    m.apply(Listed("Pod", [pod("p", "a", {"nvidia.com/gpu": 3})]))
    b = node_block(m, "a", shaped(m))
    assert b is not None and b.title == "4 GPUs" and b.product == "NVIDIA-GB200 · clique u.1"
    assert b.domains == ("NVLink clique u.1: 2 nodes, 5/8 GPUs free, largest job that fits 5",)
    assert node_block(m, "c", shaped(m)) is None  # whole GPUs, no domain: no block


def test_dcgm_use_per_gpu_on_one_line_or_short() -> None:
    m = cluster()
    m.usage.merge(UsageUpdate(at=1.0, nodes={"ts": NodeUsage(gpu_util=(87.0, 12.0))}))
    b = node_block(m, "ts", shaped(m))
    assert b is not None
    wide = [ln for ln in gpu_lines(b, 120).plain.splitlines() if ln.startswith("used ")]
    assert wide == ["used GPU 0 87% · 4 replicas │ GPU 1 12% · 4 replicas"]
    narrow = [ln for ln in gpu_lines(b, 40).plain.splitlines() if ln.startswith("used ")]
    assert narrow == ["used GPU 0 87% │ GPU 1 12%"]
