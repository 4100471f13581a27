"""Fit inside one topology domain (scheduling/domain_fit.py), pure: best fit among the domains that
hold everything, the closest named otherwise, members already bound pin their domain."""

from __future__ import annotations

from kubeview.model.cluster import ClusterModel
from kubeview.model.events import Listed
from kubeview.model.views import PodView
from kubeview.scheduling.config import PackingConfig
from kubeview.scheduling.domain_fit import fit_within, required_level
from kubeview.scheduling.workload_fit import Unit

KEY = "nvidia.com/gpu.clique"


def node(name: str, clique: str | None, gpus: int) -> dict:
    res = {"cpu": "32", "memory": "64Gi", "pods": "110", "nvidia.com/gpu": str(gpus)}
    return {"metadata": {"name": name, "labels": {KEY: clique} if clique else {}},
            "status": {"capacity": res, "allocatable": res, "conditions": [{"type": "Ready", "status": "True"}]}}


def pod(name: str, node_name: str | None = None) -> PodView:
    req = {"nvidia.com/gpu": "1", "cpu": "1"}
    return PodView.from_api({"metadata": {"name": name, "namespace": "ml", "uid": name},
                             "spec": {"nodeName": node_name, "containers": [{"name": "c", "resources": {"requests": req, "limits": req}}]},
                             "status": {"phase": "Running" if node_name else "Pending"}})


def cluster(*extra: dict) -> ClusterModel:
    m = ClusterModel()
    m.apply(Listed("Node", [node("a1", "u.1", 4), node("a2", "u.1", 4), node("b1", "u.2", 2), node("b2", "u.2", 2),
                            node("plain", None, 8)]))
    m.apply(Listed("Pod", list(extra)))
    return m


def gang(n: int, bound: dict[int, str] | None = None) -> Unit:
    pods = [pod(f"w-{i}", (bound or {}).get(i)) for i in range(n)]
    return Unit("PodGroup ml/w", pods, n, True)


def test_best_fit_picks_the_smallest_domain_that_holds_it() -> None:
    m = cluster()
    d = fit_within(m.allocation(), [gang(4)], PackingConfig(), KEY)
    assert (d.domain, d.outside, d.rooms) == ("u.2", 1, {"u.1": (4, 4, 8), "u.2": (4, 4, 4)})
    assert {mf.node for mf in d.fits[0].fit.members} <= {"b1", "b2"}
    d6 = fit_within(m.allocation(), [gang(6)], PackingConfig(), KEY)
    assert d6.domain == "u.1"


def test_none_holds_it_the_closest_is_named() -> None:
    d = fit_within(cluster().allocation(), [gang(9)], PackingConfig(), KEY)
    assert (d.ok, d.closest) == (False, "u.1")
    assert d.words() == (f"no one {KEY} domain holds all 9 pods: the closest is u.1 with room for 8 "
                         "(8 GPUs free there, 2 domains tried)")


def test_a_bound_member_pins_its_domain() -> None:
    raw = {"metadata": {"name": "w-0", "namespace": "ml", "uid": "w-0"},
           "spec": {"nodeName": "a1", "containers": [{"name": "c", "resources": {
               "requests": {"nvidia.com/gpu": "1", "cpu": "1"}, "limits": {"nvidia.com/gpu": "1", "cpu": "1"}}}]},
           "status": {"phase": "Running"}}
    m = cluster(raw)
    d = fit_within(m.allocation(), [gang(3, {0: "a1"})], PackingConfig(), KEY)
    assert d.domain == "u.1" and set(d.rooms) == {"u.1"}  # u.2 would be best fit, but w-0 is on a1
    split = fit_within(m.allocation(), [gang(3, {0: "a1", 1: "b1"})], PackingConfig(), KEY)
    assert not split.ok and split.words().startswith(f"no {KEY} domain holds the pods already bound")


def test_kueue_annotation_on_a_template_or_a_pod() -> None:
    job = {"kind": "Job", "metadata": {"name": "t"},
           "spec": {"template": {"metadata": {"annotations": {"kueue.x-k8s.io/podset-required-topology": KEY}}}}}
    assert required_level([job]) == (KEY, "Job t")
    bare = {"kind": "Pod", "metadata": {"name": "p", "annotations": {"kueue.x-k8s.io/podset-required-topology": "rack"}}}
    assert required_level([{"kind": "Pod", "metadata": {"name": "x"}}, bare]) == ("rack", "Pod p")
    assert required_level([job | {"spec": {}}]) is None
