"""A gang with a topology constraint (scheduling/gang_domain.py through `fit_of`): the PodGroup's
`schedulingConstraints.topology[0].key` read into the Gang, every member inside one domain, the
group's words as kube-scheduler 1.37.2's placement algorithm writes them when no domain holds it."""

from __future__ import annotations

import numpy as np

from kubeview.model.cluster import ClusterModel
from kubeview.model.events import Listed
from kubeview.model.gangs.messages import NO_PLACEMENTS, member_held
from kubeview.scheduling.config import PackingConfig
from kubeview.scheduling.evaluate import ExtraLoad
from kubeview.scheduling.gang_domain import fit_gang_within
from kubeview.scheduling.gang_fit import fit_gang, fit_of

KEY = "kubeview.test/rack"
GROUP = "scheduling.k8s.io/v1beta1"


def node(name: str, rack: str | None, gpus: int) -> dict:
    res = {"cpu": "8", "memory": "32Gi", "pods": "110", "nvidia.com/gpu": str(gpus)}
    return {"metadata": {"name": name, "labels": {KEY: rack} if rack else {}},
            "status": {"capacity": res, "allocatable": res, "conditions": [{"type": "Ready", "status": "True"}]}}


def member(i: int, node_name: str | None = None) -> dict:
    req = {"nvidia.com/gpu": "1", "cpu": "100m"}
    return {"metadata": {"name": f"g-{i}", "namespace": "ml", "uid": f"g-{i}"},
            "spec": {"schedulingGroup": {"podGroupName": "g"}, "nodeName": node_name,
                     "containers": [{"name": "c", "resources": {"requests": req, "limits": {"nvidia.com/gpu": "1"}}}]},
            "status": {"phase": "Running" if node_name else "Pending"}}


def model(nodes: list[dict], key: str | None = KEY, bound: dict[int, str] | None = None) -> ClusterModel:
    spec: dict = {"schedulingPolicy": {"gang": {"minCount": 4}}}
    if key:
        spec["schedulingConstraints"] = {"topology": [{"key": key}]}
    m = ClusterModel()
    m.apply(Listed("Node", nodes))
    m.apply(Listed("Pod", [member(i, (bound or {}).get(i)) for i in range(4)]))
    m.apply(Listed("PodGroup", [{"apiVersion": GROUP, "kind": "PodGroup", "metadata": {"name": "g", "namespace": "ml"},
                                 "spec": spec}]))
    return m


TWO_RACKS = [node("a-1", "rack-a", 2), node("b-1", "rack-b", 1), node("b-2", "rack-b", 1), node("loose", None, 8)]


def test_the_key_is_read_and_no_one_domain_holds_four() -> None:
    m = model(TWO_RACKS)
    gang = m.gangs.get("PodGroup", "ml", "g")
    assert gang is not None and gang.topology_key == KEY
    fit = fit_of(m, gang)
    assert (fit.fits, fit.domain, fit.topology_key, fit.placement) == (False, None, KEY, [])
    assert fit.domains == {"rack-a": (2, 4, 2), "rack-b": (2, 4, 2)}
    assert fit.summary == f"4 × 1 GPU: topology {KEY}: no one domain holds 4 pods: rack-a allows 2 of 4, rack-b 2 of 4"
    first = "minCount (4) cannot be satisfied: 2 scheduled, 1 remaining"
    group = f"pod group is unschedulable, 0/2 placements are available, first placement status: {first}"
    assert fit.message == group
    # the closest domain (rack-a, by name among equals) stands for the first placement tried
    assert [m.message for m in fit.members] == [member_held(group)] * 2 + [
        "0/1 nodes are available: 1 Insufficient nvidia.com/gpu.", group]
    # without the key the 8 GPUs outside any rack hold it
    plain = model(TWO_RACKS, key=None)
    assert fit_of(plain, plain.gangs.get("PodGroup", "ml", "g")).fits


def test_a_domain_of_four_holds_it_and_the_nodes_are_there() -> None:
    m = model([*TWO_RACKS, node("c-1", "rack-c", 2), node("c-2", "rack-c", 2)])
    fit = fit_of(m, m.gangs.get("PodGroup", "ml", "g"))
    assert (fit.fits, fit.domain, fit.room) == (True, "rack-c", 4)
    assert sorted(n for _, n in fit.placement) == ["c-1", "c-1", "c-2", "c-2"]
    assert fit.summary.startswith(f"4 × 1 GPU: fits inside {KEY}=rack-c (")
    assert not any("at random" in n for n in fit.notes)  # one domain holds it: deterministic


def test_several_domains_hold_it_best_fit_and_a_note() -> None:
    m = model([node("c-1", "rack-c", 4), node("d-1", "rack-d", 8)])
    fit = fit_of(m, m.gangs.get("PodGroup", "ml", "g"))
    assert fit.domain == "rack-c" and any("at random" in n for n in fit.notes)


def test_bound_members_pin_their_domain_and_no_label_means_no_placement() -> None:
    m = model([node("c-1", "rack-c", 4), node("d-1", "rack-d", 8)], bound={0: "d-1"})
    assert fit_of(m, m.gangs.get("PodGroup", "ml", "g")).domain == "rack-d"
    bare = model([node("x", None, 8)])
    fit = fit_of(bare, bare.gangs.get("PodGroup", "ml", "g"))
    assert (fit.fits, fit.message, fit.domains) == (False, NO_PLACEMENTS, {})
    assert {mf.message for mf in fit.members} == {NO_PLACEMENTS}
    assert fit.summary == f"4 × 1 GPU: topology {KEY}: no node has the label {KEY}, so there is no domain to place it in"


def test_assumed_load_is_taken_per_domain() -> None:
    m = model([node("c-1", "rack-c", 4), node("d-1", "rack-d", 8)])
    alloc = m.allocation()
    pods = [p for p in m.pods.values() if p.name.startswith("g-")]
    row = alloc.nodes.index("c-1")
    load = ExtraLoad(np.asarray([row], dtype=np.intp), alloc.vector({"nvidia.com/gpu": 1})[None, :])
    fit = fit_gang_within(fit_gang, alloc, sorted(pods, key=lambda p: p.name), 4, PackingConfig(), KEY, load, None)
    assert fit.domain == "rack-d"


def test_the_panel_and_the_snapshot_say_the_key_and_the_domains() -> None:
    from rich.text import Text

    from kubeview.snapshot.document import SNAPSHOT_SCHEMA, build_snapshot
    from kubeview.snapshot.schema import validate
    from kubeview.tui.rows import gang_panel

    m = model(TWO_RACKS)
    gang = m.gangs.get("PodGroup", "ml", "g")
    fit = fit_of(m, gang)
    text = Text.from_markup(gang_panel.describe(gang, gang.key, fit, "spread")).plain
    assert f"topology {KEY} (all in one domain)" in text
    assert f"topology {KEY}: no one domain holds 4 pods: rack-a allows 2 of 4, rack-b 2 of 4" in text
    doc = build_snapshot(m, now=0, gang_fits={gang.key: (fit, "spread")})
    assert validate(doc, SNAPSHOT_SCHEMA) == []
    (g,) = doc["gangs"]
    assert g["topologyKey"] == KEY and g["fit"]["domain"] is None
    assert g["fit"]["domains"] == [{"name": "rack-a", "room": 2, "members": 4, "freeGpus": 2},
                                   {"name": "rack-b", "room": 2, "members": 4, "freeGpus": 2}]


def test_the_planner_keeps_the_gang_inside_one_domain() -> None:
    from kubeview.scheduling.plan_types import Inputs, fit_without
    from kubeview.scheduling.planner import target_of_gang

    m = model(TWO_RACKS)
    target = target_of_gang(m, m.gangs.get("PodGroup", "ml", "g"))
    assert target.topology_key == KEY
    fit = fit_without(Inputs(m.allocation(), target, PackingConfig(), [], [], [], []), [])
    assert not fit.fits and fit.domains == {"rack-a": (2, 4, 2), "rack-b": (2, 4, 2)}


def test_the_gang_row_puts_the_point_of_the_placement_words_first() -> None:
    from kubeview.model.gangs.messages import group_point

    real = ("pod group is unschedulable, 0/2 placements are available, first placement status: minCount (4) cannot "
            "be satisfied: 2 scheduled, 1 remaining, pod group preemption: No preemption victims found")
    assert group_point(real) == ("minCount (4) cannot be satisfied: 2 scheduled, 1 remaining, pod group preemption: "
                                 "No preemption victims found (0/2 placements)")
    assert group_point("minCount (3) cannot be satisfied: 2 scheduled, 0 remaining") == \
        "minCount (3) cannot be satisfied: 2 scheduled, 0 remaining"
