"""The API server's version and what it does not serve: the words the header and snapshot use."""

from __future__ import annotations

from kubeview.model.cluster import ClusterModel
from kubeview.model.events import Scope
from kubeview.model.server_version import DRA_API, GANG_API, TESTED, not_served, parse_version, title_words


def test_versions_parse_with_pre_releases_and_vendor_suffixes() -> None:
    assert parse_version("v1.35.4").minor == 35
    assert parse_version("v1.38.0-beta.0").minor == 38
    assert parse_version("v1.36.3-eks-4f1a6b2").minor == 36
    assert parse_version("v1.37.2+k3s1").minor == 37
    assert parse_version("weird").minor is None


def test_skew_is_said_outside_the_tested_range_only() -> None:
    assert all(parse_version(f"v1.{m}.0").skew is None for m in range(TESTED[0], TESTED[1] + 1))
    older = parse_version(f"v1.{TESTED[0] - 1}.9").skew
    newer = parse_version(f"v1.{TESTED[1] + 1}.0").skew
    assert older is not None and "older" in older
    assert newer is not None and "newer" in newer
    assert "not a Kubernetes version" in (parse_version("weird").skew or "")


def test_not_served_names_the_gang_api_unless_a_workload_or_podgroup_is_served() -> None:
    base = ("Node", "Pod", "ResourceSlice", "ResourceClaim", "DeviceClass")
    assert set(not_served(base, gangs=True, dra=True)) == {GANG_API}
    assert not_served((*base, "PodGroup"), gangs=True, dra=True) == {}
    assert not_served(base, gangs=False, dra=True) == {}  # not asked: nothing to say
    assert set(not_served(("Node", "Pod"), gangs=True, dra=True)) == {GANG_API, DRA_API}
    assert not_served(("Node", "Pod", "Workload"), gangs=True, dra=False) == {}


def test_title_words_name_each_missing_feature_once() -> None:
    words = title_words(parse_version("v1.35.4"), {GANG_API: "why"})
    assert words == "v1.35.4, no gang API"
    assert title_words(parse_version("v1.30.1"), {}) == "v1.30.1, untested version"
    assert title_words(None, {}) == ""


def test_the_model_keeps_what_the_scope_says() -> None:
    model = ClusterModel()
    assert model.apply(Scope("ctx (v1.35.4, no gang API)", kubernetes="v1.35.4", not_served={GANG_API: "why"}))
    assert (model.kubernetes, model.not_served) == ("v1.35.4", {GANG_API: "why"})
    assert not model.apply(Scope("ctx (v1.35.4, no gang API)", kubernetes="v1.35.4", not_served={GANG_API: "why"}))


def test_the_header_names_the_version_and_what_is_missing_once() -> None:
    from kubeview.tui.summary import summarize
    from kubeview.tui.widgets.cluster_header import ClusterHeader

    model = ClusterModel()
    model.apply(Scope("prod @ https://k", kubernetes="v1.35.4", not_served={GANG_API: "why"}))
    line = ClusterHeader()._line1(summarize(model)).plain
    assert "prod @ https://k (v1.35.4, no gang API) │" in line
    assert line.count("gang API") == 1
    model.apply(Scope("prod @ https://k", kubernetes="v1.37.2"))
    assert "prod @ https://k (v1.37.2) │" in ClusterHeader()._line1(summarize(model)).plain
    assert "(" not in ClusterHeader()._line1(summarize(ClusterModel("local cluster"))).plain.split("│")[0]


def _scheduler(name: str, image: str, kind: str = "Deployment") -> dict:
    return {"metadata": {"name": name, "namespace": "kubeview-system", "resourceVersion": "1"},
            "spec": {"replicas": 1, "template": {"spec": {"containers": [{"name": "s", "image": image}]}}}}


def test_scheduler_skew_follows_the_version_skew_policy() -> None:
    from kubeview.model.server_version import scheduler_skew

    server = parse_version("v1.37.2")
    said = scheduler_skew(server, [("a", "registry.k8s.io/kube-scheduler:v1.37.0"),
                                   ("b", "registry.k8s.io/kube-scheduler:v1.36.2"),
                                   ("c", "registry.k8s.io/kube-scheduler:v1.38.0-beta.0"),
                                   ("d", "mirror.local:5000/k8s/kube-scheduler:v1.35.4@sha256:abc"),
                                   ("e", "registry.k8s.io/kube-scheduler@sha256:abc"),
                                   ("f", "registry.k8s.io/kube-scheduler:latest")])
    assert len(said) == 3
    assert said[0].startswith("b runs") and "one minor older" in said[0] and "allowed during an upgrade" in said[0]
    assert said[1].startswith("c runs") and "newer than the API server: not supported" in said[1]
    assert said[2].startswith("d runs") and "more than one minor older" in said[2]
    assert scheduler_skew(None, [("b", "registry.k8s.io/kube-scheduler:v1.30.0")]) == []


def test_the_model_checks_only_kube_scheduler_workloads() -> None:
    from kubeview.model.events import Listed

    model = ClusterModel()
    model.apply(Scope("t", kubernetes="v1.37.2"))
    model.apply(Listed("Deployment", [_scheduler("kubeview-scheduler", "registry.k8s.io/kube-scheduler:v1.36.2"),
                                      _scheduler("web", "nginx:1.36.2")]))
    model.apply(Listed("ReplicaSet", [_scheduler("kubeview-scheduler-5d9", "registry.k8s.io/kube-scheduler:v1.36.2")]))
    skew = model.scheduler_skew()
    assert len(skew) == 1 and skew[0].startswith("Deployment kubeview-system/kubeview-scheduler runs")
    from kubeview.tui.summary import summarize

    assert summarize(model).kubernetes == "v1.37.2, kube-scheduler skew"
    model.apply(Listed("Deployment", [_scheduler("kubeview-scheduler", "registry.k8s.io/kube-scheduler:v1.37.2")]))
    assert model.scheduler_skew() == [] and summarize(model).kubernetes == "v1.37.2"
