"""replica_fit: identical pods placed with bounded work. A Deployment of 10^9 replicas is answered by
placing room+1 of them (the one after the room fits nowhere, and so does every later one), the room
is exact arithmetic (equal to placing them one by one), and a bound that is hit is said."""

from __future__ import annotations

import random

import pytest
from builders import cluster, node, pod

from kubeview.scheduling import PackingConfig
from kubeview.scheduling.gang_fit import fit_gang
from kubeview.scheduling.replica_fit import MAX_TRIED, materialize, room_per_node
from kubeview.scheduling.workload_fit import fit_units, units_from

GPU = "nvidia.com/gpu"


def deployment(name: str, replicas: int, cpu: str = "1", gpu: int = 0, kind: str = "Deployment",
               spec: dict | None = None) -> dict:
    resources = {"requests": {"cpu": cpu}, "limits": {GPU: str(gpu)} if gpu else {}}
    template = {"spec": {"containers": [{"name": "c", "resources": resources}], **(spec or {})}}
    count = {"parallelism": replicas} if kind == "Job" else {"replicas": replicas}
    return {"apiVersion": "apps/v1", "kind": kind, "metadata": {"name": name}, "spec": {**count, "template": template}}


def test_a_billion_replicas_place_room_plus_one_and_count_the_rest() -> None:
    alloc = cluster([node("a", cpu="8"), node("b", cpu="4"), node("c", cpu="2", unschedulable=True)])
    units, _ = units_from([deployment("web", 10**9)], "default")
    (f,) = fit_units(alloc, units, PackingConfig())
    assert (f.fits, f.room, f.unit.size) == (False, 12, 10**9)
    assert len(f.fit.members) == 13  # the work: room + 1 pods placed, not 10^9
    assert [m.node is not None for m in f.fit.members] == [True] * 12 + [False]
    assert f.untried == 10**9 - 13 and f.untried_message == f.fit.members[-1].message
    assert f.untried_message == "0/3 nodes are available: 1 node(s) were unschedulable, 2 Insufficient cpu."
    assert f.fit.summary.startswith("1,000,000,000 × 1 cpu: room for 12 of 1,000,000,000 (largest free cpu per node: "
                                    "a 8 cpu, b 4 cpu)")


def test_past_the_bound_the_room_is_counted_and_the_bound_is_said() -> None:
    alloc = cluster([node("big", cpu="100000", pods=200_000)])
    units, _ = units_from([deployment("many", 10**6, cpu="10m"), deployment("after", 1, cpu="10m")], "default")
    first, after = fit_units(alloc, units, PackingConfig())
    assert (first.fits, first.room, len(first.fit.members)) == (False, 200_000, MAX_TRIED)
    assert "placed the first 2,000 pods one by one" in first.notes[0]
    assert not after.fits  # the node filled to its pod count: the load of the counted pods is known
    units, _ = units_from([deployment("some", 5_000, cpu="10m"), deployment("after", 1, cpu="10m")], "default")
    some, after = fit_units(alloc, units, PackingConfig())
    assert (some.fits, some.room, len(some.fit.members), after.fits) == (True, 5_000, MAX_TRIED, True)
    assert len(after.fit.members) == 1  # the manifest's budget is spent: still one tried, for its answer
    assert some.notes[0].endswith("the units after it are placed without those pods' load")


@pytest.mark.parametrize("seed", range(6))
def test_room_per_node_is_what_placing_one_by_one_finds(seed: int) -> None:
    rng = random.Random(seed)
    nodes = [node(f"n{i}", cpu=str(rng.randint(1, 16)), gpu=rng.choice([0, 2, 8]), pods=rng.randint(1, 30),
                  unschedulable=rng.random() < 0.2) for i in range(6)]
    bound = [pod(f"b{i}", cpu=f"{rng.randint(1, 4)}", gpu=rng.choice([0, 1]), node_name=f"n{rng.randrange(6)}")
             for i in range(5)]
    alloc = cluster(nodes, bound)
    template = pod("t-0", cpu=rng.choice(["250m", "1", "3"]), gpu=rng.choice([0, 1, 2]))
    for policy in ("pack", "spread"):
        config = PackingConfig(policy=policy)
        room = int(room_per_node(alloc, template, config).sum())
        pods = materialize(template, room + 3)
        assert fit_gang(alloc, pods, len(pods), config, gang=False).room == room


def test_a_gang_too_big_to_place_one_by_one_is_counted() -> None:
    alloc = cluster([node("a", gpu=8), node("b", gpu=8)])
    gang = {"scheduling": {"schedulingPolicy": {"gang": {"minCount": 10**9}}}}
    job = deployment("huge", 10**9, cpu="1", gpu=1, kind="Job")
    job["spec"].update(gang)
    (f,) = fit_units(alloc, units_from([job], "default")[0], PackingConfig())
    assert (f.fits, f.fit.room, f.fit.members, f.unit.gang) == (False, 16, [], True)
    assert f.fit.summary == "1,000,000,000 × 1 GPU: room for 16 of 1,000,000,000"
    job["spec"]["scheduling"]["schedulingPolicy"]["gang"]["minCount"] = 16
    (f,) = fit_units(alloc, units_from([job], "default")[0], PackingConfig())
    assert f.fits and "counted by each node's free resources" in f.fit.notes[0]
