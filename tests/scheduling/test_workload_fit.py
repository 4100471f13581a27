"""workload_fit: a manifest's units (Deployments, Jobs, gangs of each scheduler) and their fit, each unit
seeing the ones before it placed; a gang whose group is neither in the manifest nor in the cluster waits."""

from __future__ import annotations

import builders
import pytest
from builders import cluster, node

from kubeview.scheduling import PackingConfig
from kubeview.scheduling.workload_fit import ManifestError, fit_units, resolve_groups, units_from

GPU = "nvidia.com/gpu"


def template(gpu: int = 1, **meta) -> dict:
    return {"metadata": meta, "spec": {"containers": [{"name": "c", "resources": {"limits": {GPU: str(gpu)}}}]}}


def pod(name: str, gpu: int, annotations: dict | None = None, group: str | None = None) -> dict:
    t = template(gpu, name=name, **({"annotations": annotations} if annotations else {}))
    if group:
        t["spec"]["schedulingGroup"] = {"podGroupName": group}
    return {"apiVersion": "v1", "kind": "Pod", **t}


def test_units_of_each_kind() -> None:
    docs = [
        {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
         "spec": {"replicas": 3, "template": template(0)}},
        {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "plain", "namespace": "ml"},
         "spec": {"parallelism": 4, "completions": 2, "template": template()}},
        {"apiVersion": "scheduling.run.ai/v2alpha2", "kind": "PodGroup", "metadata": {"name": "pg"},
         "spec": {"minMember": 2, "queue": "q"}},
        pod("k0", 1, {"pod-group-name": "pg"}), pod("k1", 1, {"pod-group-name": "pg"}),
        None,
    ]
    units, skipped = units_from(docs, "team")
    assert [(u.what, u.size, u.min_count, u.gang) for u in units] == [
        ("Deployment team/web", 3, 3, False), ("Job ml/plain", 2, 2, False), ("kai.PodGroup team/pg", 2, 2, True)]
    assert units[1].template.requests[GPU] == 1  # the limit is the request, as the API server defaults it
    assert skipped == []


def test_units_see_the_ones_before_them_placed() -> None:
    alloc = cluster([node("a", gpu=2), node("b", gpu=2)])
    docs = [{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"},
             "spec": {"replicas": 3, "template": template()}},
            {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "g"},
             "spec": {"parallelism": 2, "scheduling": {"schedulingPolicy": {"gang": {"minCount": 2}}},
                      "template": template()}}]
    units, _ = units_from(docs, "default")
    first, second = fit_units(alloc, units, PackingConfig(policy="pack"))
    assert first.fits and not second.fits  # 3 of 4 GPUs taken by the Deployment: the gang of 2 has room for 1
    assert second.fit.room == 1 and second.fit.message == "minCount (2) cannot be satisfied: 1 scheduled, 0 remaining"


def test_a_group_only_the_cluster_has_and_one_nobody_has() -> None:
    """The cluster's group `known` (minCount 3) has a member bound on a and one pending; the manifest
    adds a third: the gang is all three, and fits with the bound one where it is."""
    docs = [pod("a2", 1, group="known"), pod("b0", 1, group="nowhere")]
    units, _ = units_from(docs, "default")
    there = [builders.pod("a0", gpu=1, node_name="a"), builders.pod("a1", gpu=1)]
    resolve_groups(units, lambda key: (3, there) if key[2] == "known" else None)
    known, nowhere = units
    assert (known.missing_group, known.min_count, [p.name for p in known.pods]) == (None, 3, ["a0", "a1", "a2"])
    assert nowhere.missing_group == 'waiting for pods\'s pod group "nowhere" to appear in scheduling queue'
    fits = fit_units(cluster([node("a", gpu=2), node("b", gpu=2)], [there[0]]), units, PackingConfig())
    assert [f.fits for f in fits] == [True, False]
    assert fits[0].fit.room == 3 and ("a0", "a") in [(p.name, n) for p, n in fits[0].fit.placement]


@pytest.mark.parametrize(("docs", "why"), [
    ([{"kind": "Job", "metadata": {"name": "j"}, "spec": {"template": {"spec": None}}}], "has no spec.template.spec"),
    ([{"kind": "Pod", "metadata": {"name": "p"}, "spec": {"containers": ["x"]}}], "a container is not a mapping"),
    ([{"kind": "Pod", "metadata": {}, "spec": {}}], "a Pod has no metadata.name"),
])
def test_bad_objects_are_one_sentence(docs: list, why: str) -> None:
    with pytest.raises(ManifestError, match=why):
        units_from(docs, "default")


def test_a_job_or_deployment_whose_pods_name_a_group_is_that_gang() -> None:
    """Issue #42: a PodGroup (minCount 5) and a Job of 5 whose pod template names it are one gang, all
    or nothing; a Deployment naming it adds its pods; a group no pod names is said, never dropped."""
    named = template(1)
    named["spec"]["schedulingGroup"] = {"podGroupName": "pg"}
    docs = [{"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "PodGroup", "metadata": {"name": "pg"},
             "spec": {"schedulingPolicy": {"gang": {"minCount": 5}}}},
            {"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "PodGroup", "metadata": {"name": "lonely"},
             "spec": {"schedulingPolicy": {"gang": {"minCount": 2}}}},
            {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "j"},
             "spec": {"parallelism": 4, "template": named}},
            {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"},
             "spec": {"replicas": 1, "template": named}}]
    units, skipped = units_from(docs, "default")
    (gang,) = units
    assert (gang.what, gang.gang, gang.min_count, gang.made_by) == (
        "PodGroup default/pg", True, 5, ("Job default/j", "Deployment default/d"))
    assert [p.name for p in gang.pods] == ["j-0", "j-1", "j-2", "j-3", "d-0"]
    assert [(s.what, s.why) for s in skipped] == [("PodGroup default/lonely", "no pod of the manifest names this group")]
    (fit,) = fit_units(cluster([node("a", gpu=2), node("b", gpu=2)]), units, PackingConfig())
    assert (fit.fits, fit.fit.room, fit.fit.placement) == (False, 4, [])  # all or nothing: none placed
    assert fit.fit.message == "minCount (5) cannot be satisfied: 4 scheduled, 0 remaining"


def test_kinds_fit_does_not_place_are_named_with_why() -> None:
    docs = [{"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": "agent"}},
            {"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": "nightly"}},
            {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm"}}, pod("p", 1)]
    units, skipped = units_from(docs, "default")
    assert [u.what for u in units] == ["Pod default/p"]
    assert [(s.what, s.why.split(":")[0]) for s in skipped] == [
        ("DaemonSet default/agent", "not placed"), ("CronJob default/nightly", "not placed"),
        ("ConfigMap default/cm", "makes no pods")]
