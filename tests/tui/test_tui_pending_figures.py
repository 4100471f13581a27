"""The header and the node rows under the completeness rule (model/freshness.py), pure: the model fed the
events the kube source emits for a list in progress and a relist (#41 item 1). tests/realk8s/
test_pending_figures.py shows the same on the real API server with a page held."""

from __future__ import annotations

import re

from rich.text import Text

from kubeview.model.cluster import ClusterModel
from kubeview.model.events import ConnectionState, Listed, Listing
from kubeview.tui import format as fmt
from kubeview.tui.rows import nodes as rows
from kubeview.tui.summary import summarize
from kubeview.tui.widgets.cluster_header import ClusterHeader

GPU = "nvidia.com/gpu"
KINDS = ("Node", "Pod")


def node(name: str) -> dict:
    res = {"cpu": "16", "memory": "64Gi", "pods": "110", GPU: "4"}
    return {"metadata": {"name": name, "resourceVersion": "1"},
            "status": {"capacity": res, "allocatable": res, "conditions": [{"type": "Ready", "status": "True"}]}}


def pod(name: str, gpus: int) -> dict:
    req = {"cpu": "4", GPU: str(gpus)}
    return {"metadata": {"name": name, "namespace": "ns", "uid": name, "resourceVersion": "2"},
            "spec": {"nodeName": "n1", "containers": [{"name": "c", "resources": {"requests": req, "limits": req}}]},
            "status": {"phase": "Running"}}


def lines(model: ClusterModel) -> list[Text]:
    header, s = ClusterHeader("Nodes"), summarize(model, kinds=KINDS)
    return [header._line1(s), header._line2(s), header._line3(s)]


def node_row(model: ClusterModel) -> list[Text | str]:
    return rows.cells(rows.build(model, fresh=model.lists().freshness(KINDS)), "n1")


def dim(text: Text | str) -> bool:
    return isinstance(text, Text) and any("dim" in str(sp.style) and sp.start == 0 and sp.end >= len(text.plain)
                                          for sp in text.spans)


def listed_model() -> ClusterModel:
    m = ClusterModel("t")
    m.apply_all([ConnectionState("live", 1.0), Listing("Node", 0, 1.0), Listing("Pod", 0, 1.0), Listed("Node", [node("n1")])])
    return m


def test_while_the_first_pod_list_runs_nothing_that_counts_pods_is_a_number() -> None:
    m = listed_model()
    m.apply(Listing("Pod", 90_000, 1.0))
    line1, line2, line3 = (t.plain for t in lines(m))
    assert "listing Pod 90,000…" in line1 and "1 nodes … pods … pending" in line1
    assert line2.split() == ["cpu", "…", "│", "mem", "…", "│", "GPU", "…"]
    assert line3.strip() == "GPUs … (listing Pod 90,000…)"
    cells = [c.plain if isinstance(c, Text) else c for c in node_row(m)]
    assert cells[1:6] == ["…/16", "…/64Gi", "…/4", "…/110", "…"]  # allocatable is the node's own: a fact
    assert not re.search(r"\d", line2 + line3.replace("90,000", ""))  # no number but how far the list got


def test_a_relist_keeps_the_last_complete_figures_dimmed_as_of_when_it_began() -> None:
    m = listed_model()
    m.apply(Listed("Pod", [pod("a", 1), pod("b", 2)]))
    fact = lines(m)
    assert "2 pods" in fact[0].plain and not dim(fact[1]) and not dim(node_row(m)[1])
    as_of = 1_800_000_000.0
    m.apply(Listing("Pod", 0, as_of))  # the watch expired: relisting
    m.apply(Listing("Pod", 40_000, as_of))
    line1, line2, line3 = lines(m)
    assert f"figures as of {fmt.clock(as_of)}, relisting Pod 40,000…" in line1.plain
    assert (line2.plain, line3.plain) == (fact[1].plain, fact[2].plain) and dim(line2) and dim(line3)
    row = node_row(m)
    assert isinstance(row[4], Text) and row[4].plain == "2/110"  # the complete list's count, kept
    assert all(dim(c) for c in row[1:6]) and not dim(row[0])  # the figures dimmed, the name not
    m.apply(Listed("Pod", [pod("a", 1)]))  # done: facts again, the new ones
    line1, line2, _ = lines(m)
    assert "as of" not in line1.plain and "1 pods" in line1.plain and not dim(line2)
