"""The gang rows, panel and what-if text, pure: a real ClusterModel fed Node, Pod and PodGroup lists, and
`gang_fit` itself; no app."""

from __future__ import annotations

import pytest
from tui_helpers import gang_builders

from kubeview.model.cluster import ClusterModel
from kubeview.model.events import Listed
from kubeview.scheduling.config import PackingConfig
from kubeview.scheduling.gang_fit import fit_of
from kubeview.tui.rows import gang_panel, gangs
from kubeview.tui.rows.gang_whatif import GangSpec, compute, parse_gang, verdict_detail

GPU = "nvidia.com/gpu"


def node(name: str, gpus: int) -> dict:
    amounts = {"cpu": "16", "memory": "64Gi", "pods": "110", GPU: str(gpus)}
    return {"metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}}, "spec": {},
            "status": {"capacity": amounts, "allocatable": amounts}}


def member(name: str, gpus: int, group: str = "train", node_name: str | None = None, phase: str = "Pending",
           message: str | None = None) -> dict:
    status: dict = {"phase": phase}
    if message:
        status["conditions"] = [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable",
                                 "message": message}]
    spec: dict = {"schedulingGroup": {"podGroupName": group}, "containers": [{"name": "w", "resources": {
        "requests": {"cpu": "1", GPU: str(gpus)}, "limits": {GPU: str(gpus)}}}]}
    if node_name:
        spec["nodeName"] = node_name
    return {"metadata": {"name": name, "namespace": "ml", "uid": f"uid-{name}"}, "spec": spec, "status": status}


def group(name: str, min_count: int, condition: dict | None = None) -> dict:
    return {"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "PodGroup",
            "metadata": {"name": name, "namespace": "ml", "resourceVersion": "1"},
            "spec": {"schedulingPolicy": {"gang": {"minCount": min_count}}},
            "status": {"conditions": [condition] if condition else []}}


def model_of(nodes: list[dict], pods: list[dict], groups: list[dict]) -> ClusterModel:
    model = ClusterModel("test")
    for kind, objects in (("Node", nodes), ("Pod", pods), ("PodGroup", groups)):
        model.apply(Listed(kind, objects))
    return model


HELD = "minCount (4) cannot be satisfied: 3 scheduled, 0 remaining"
FRAGMENTED = model_of(
    [node(n, 8) for n in "abc"] + [node("d", 4)],
    [member(f"w{i}", 8, message=f"pod group is unschedulable, {HELD}") for i in range(4)],
    [group("train", 4, {"type": "PodGroupInitiallyScheduled", "status": "False", "reason": "Unschedulable",
                        "message": HELD})])


@pytest.mark.parametrize("text, spec", [("4 pods × 8 GPUs", GangSpec(4, 8)), ("4x8 gpus", GangSpec(4, 8)),
                                        ("4x8", GangSpec(4, 8)), (" 2 X 1 GPU ", GangSpec(2, 1)),
                                        ("3*0", GangSpec(3, 0)), ("1 pod x 2 gpus", GangSpec(1, 2))])
def test_a_gang_is_typed_as_pods_times_gpus(text: str, spec: GangSpec) -> None:
    assert parse_gang(text) == spec


@pytest.mark.parametrize("text, error", [
    ("four", "'four' is not a gang: say PODS x GPUS, e.g. 4x8 or 4 pods × 8 GPUs"),
    ("4", "'4' is not a gang: say PODS x GPUS, e.g. 4x8 or 4 pods × 8 GPUs"),
    ("0x8", "a gang has 1 to 512 pods, not 0"),
    ("4x65", "a member asks at most 64 GPUs, not 65"),
])
def test_bad_gang_input_is_one_line_that_says_why(text: str, error: str) -> None:
    with pytest.raises(ValueError) as caught:
        parse_gang(text)
    assert str(caught.value) == error


def test_a_fragmented_gang_row_and_panel() -> None:
    gang = FRAGMENTED.gangs.get("PodGroup", "ml", "train")
    cells = [c if isinstance(c, str) else c.plain for c in gangs.cells(gang, gang.key)]
    assert cells == ["kubernetes", "ml", "train", "4/4", "0", "0", "4", "0", "waiting", HELD]
    fit = fit_of(FRAGMENTED, gang, PackingConfig(policy="pack"))
    text = gang_panel.describe(gang, gang.key, fit, "pack")
    assert "Fit now[/b] under pack: [b red]does not fit" in text
    assert "4 × 8 GPUs: room for 3 (largest free block per node: a 8, b 8, c 8, d 4)" in text
    assert "saturated (took members, then refused the rest):" in text
    for n in "abc":
        assert f"    {n}  [dim]1 × Insufficient nvidia.com/gpu[/dim]" in text
    assert "excluded (took none): 1 node\n    1 × Insufficient nvidia.com/gpu  [dim](d)[/dim]" in text
    # each member's own words, wrapped under its column at 60 cells
    narrow = gang_panel.describe(gang, gang.key, fit, "pack", width=60).split("\n")
    first = next(i for i, line in enumerate(narrow) if line.startswith("  w0  "))
    assert narrow[first + 1].startswith("[yellow]" + " " * len("  w0  pending   "))


def test_a_gang_that_fits_shows_its_placement_and_the_what_if_agrees() -> None:
    model = model_of([node(n, 8) for n in "ab"], [member(f"w{i}", 4) for i in range(4)], [group("train", 4)])
    gang = model.gangs.get("PodGroup", "ml", "train")
    assert gangs.reason(gang) == "4 pending: not scheduled yet"  # no condition yet, no member reason
    packed, spread = (fit_of(model, gang, PackingConfig(policy=p)) for p in ("pack", "spread"))
    text = gang_panel.describe(gang, gang.key, packed, "pack")
    assert "[b green]fits[/b green]" in text and "a ← w0, w1" in text and "b ← w2, w3" in text
    assert verdict_detail(packed) == "on a 2, b 2"
    w = compute(model.allocation(), spread, packed, PackingConfig(policy="pack"))
    assert w.order == ["a", "b"] and dict(w.edited_on) == {"a": 2, "b": 2}


def test_reasons_of_incomplete_running_and_member_only_gangs() -> None:
    incomplete = model_of([node("a", 8)], [member("w0", 1)], [group("train", 3)]).gangs.get("PodGroup", "ml", "train")
    assert incomplete.state == "incomplete" and gangs.reason(incomplete) == "1 of minCount 3 members exist"
    running = model_of([node("a", 8)], [member(f"w{i}", 1, node_name="a", phase="Running") for i in range(2)],
                       [group("train", 2)]).gangs.get("PodGroup", "ml", "train")
    assert running.state == "running" and gangs.reason(running) == ""
    said = model_of([node("a", 1)], [member(f"w{i}", 1, message="0/1 nodes are available: 1 Insufficient nvidia.com/gpu.")
                                     for i in range(2)], [group("train", 2)]).gangs.get("PodGroup", "ml", "train")
    assert gangs.reason(said) == "2 pending: 0/1 nodes are available: 1 Insufficient nvidia.com/gpu."


def test_the_group_condition_and_its_shared_claims_in_the_panel() -> None:
    """1.37's v1beta1 shape: a Workload owned by a Job, a PodGroup sharing two claims (one by template,
    not created yet), members that carry their group."""
    b = gang_builders()
    model = ClusterModel("test")
    model.apply(Listed("Workload", [b.v1beta1_workload()]))
    model.apply(Listed("PodGroup", [b.v1beta1_pod_group()]))
    model.apply(Listed("Pod", [b.pod(f"w{i}", group="train-workers") for i in range(3)]))
    gang = model.gangs.get("PodGroup", "train", "train-workers")
    text = gang_panel.describe(gang, gang.key, None, "spread", {"train-fabric": "n1"})
    assert "workload train (owner Job/train) · disruptionMode All" in text
    assert "[yellow]PodGroupInitiallyScheduled=False[/]  Unschedulable" in text
    assert "minCount (4) cannot be satisfied: 3 scheduled, 0 remaining" in text
    assert ("[b]Claims[/b]     train-fabric (allocated on n1), train-workers-scratch-x7 (not allocated yet)"
            "  [dim]entries fabric, scratch[/dim]") in text
    assert gang.state == "incomplete" and gangs.reason(gang).startswith("3 of minCount 4 members exist; minCount (4)")

