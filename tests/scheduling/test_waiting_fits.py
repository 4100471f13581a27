"""`waiting_fits` fits Kueue's pending Workloads once per shape (scheduling/waiting_fits.py): every fit it
hands out equals the one `fit_of` computes for that Workload alone, member names included, on the bench's
Kueue mix at a small size with shapes varied at random (requests, tolerations, node selectors, counts,
minCount), in namespaces that share shapes."""

from __future__ import annotations

import copy
import random

import pytest

from kubeview.bench.model_kueue import kueue_cluster
from kubeview.model.cluster import ClusterModel
from kubeview.model.events import Listed
from kubeview.model.gangs.messages import KIND_KUEUE
from kubeview.scheduling.gang_fit import fit_of, template_members
from kubeview.scheduling.waiting_fits import _read_shape, waiting_fits
from kubeview.snapshot.gangs import fit_doc


def _varied(workloads: list[dict], rng: random.Random) -> list[dict]:
    out = []
    for w in workloads:
        w = copy.deepcopy(w)
        pod_set = w["spec"]["podSets"][0]
        spec = pod_set["template"]["spec"]
        if rng.random() < 0.6:  # the same spec bytes as others (found without parsing), else only the same reads
            spec["containers"][0]["image"] = "registry.example.com/shared/train:2.0"
        pick = rng.randrange(6)
        if pick == 0:
            spec["containers"][0]["resources"] = {"requests": {"cpu": "1", "nvidia.com/gpu": str(rng.choice([1, 2, 8]))}}
        elif pick == 1:
            spec["tolerations"] = [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}]
        elif pick == 2:
            spec["nodeSelector"] = {"kubeview.test/pool": rng.choice(["gpu", "cpu", "none"])}
        elif pick == 3:
            pod_set["count"] = rng.choice([1, 3, 9])
        elif pick == 4:
            pod_set["minCount"] = 1
        out.append(w)
    return out


@pytest.mark.parametrize("seed", range(3))
def test_each_workloads_fit_is_its_own(seed: int) -> None:
    rng = random.Random(seed)
    cluster, kueue, pods, replicasets = kueue_cluster(60, 12, 1500, 12)
    model = ClusterModel("fits")
    model.apply(Listed("Node", cluster.nodes(), "1"))
    model.apply(Listed("Pod", pods, "1"))
    model.apply(Listed("ReplicaSet", replicasets, "1"))
    for kind, objects in kueue.lists():
        model.apply(Listed(kind, _varied(objects, rng) if kind == KIND_KUEUE else objects, "1"))
    fits = waiting_fits(model)
    waiting = [g for g in model.gangs.gangs() if g.kind == KIND_KUEUE and not g.members and g.key in fits]
    assert len(waiting) >= 50
    seen = {}
    for g in waiting:
        fit, _ = fits[g.key]
        alone = fit_of(model, g)
        assert fit_doc(fit, "x") == fit_doc(alone, "x"), g.key
        assert [m.pod for m in fit.members] == [m.pod for m in alone.members]  # names, labels, all
        assert all(m.pod.namespace == g.namespace and m.pod.name.startswith(g.name) for m in fit.members)
        seen[id(fit.members[0].pod) if fit.members else id(g)] = g
    shapes = {_read_shape(template_members(g), g.min_count, g.condition_reason) for g in waiting}
    assert len(shapes) > 1 and len(waiting) - len(shapes) >= 10  # many fits handed on from a shape fitted once
    assert len(seen) == len(waiting)  # every Workload's members its own objects
