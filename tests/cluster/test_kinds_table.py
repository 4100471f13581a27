"""One row per kind on each side: every kind the kube source lists (`KUBE_KINDS`, the gang CANDIDATES)
and every kind the embedded cluster emits has a row in the model's table, so a kind added on one side
only fails here; and a kind the kube source cannot read is said once, under its own kind."""

from __future__ import annotations

from kubeapi import KubeAPI
from test_kube_gangs import FORBIDDEN, run, serve

from kubeview.cluster.kube.gangs import CANDIDATES
from kubeview.cluster.kube.source import KUBE_KINDS, KubeSource
from kubeview.cluster.local.config import DEFAULT_FILE, load_cluster
from kubeview.cluster.local.state import LocalCluster
from kubeview.model.cluster import ClusterModel
from kubeview.model.events import Scope
from kubeview.model.kinds import events_unavailable, gangs_unavailable, quota_unavailable


def test_every_kind_the_kube_source_lists_has_a_row_in_the_model() -> None:
    listed = set(KUBE_KINDS) | {kind for kind, *_ in CANDIDATES}
    assert listed - set(ClusterModel().kinds) == set()


def test_every_kind_the_embedded_cluster_emits_has_a_row_in_the_model() -> None:
    emitted = set()
    for path in sorted(DEFAULT_FILE.parent.glob("*.yaml")):  # the bundled clusters, DRA ones included
        cluster = LocalCluster(load_cluster(path), seed=1)
        emitted |= {listed.kind for listed in cluster.snapshot()} | {e.kind for e in cluster.events}
    assert {"Node", "Pod", "Event", "ResourceSlice"} <= emitted
    assert emitted - set(ClusterModel().kinds) == set()


def test_two_forbidden_gang_kinds_say_their_reasons_once_each(kube_api: KubeAPI) -> None:
    g = serve(kube_api, "gang137", "v1beta1")
    kube_api.respond_fixture("GET", f"{g}/podgroups", FORBIDDEN)
    kube_api.respond_fixture("GET", f"{g}/workloads", FORBIDDEN)
    kube_api.respond_fixture("GET", "/apis/batch/v1/jobs", FORBIDDEN)
    events, model = run(kube_api)
    assert set(model.unavailable) == {"PodGroup", "Workload", "Job"}
    note = gangs_unavailable(model.unavailable)
    assert note is not None and note.startswith("some gangs are not shown: Listing ")
    assert note.count("podgroups.scheduling.k8s.io was forbidden (403)") == 1
    assert note.count("workloads.scheduling.k8s.io was forbidden (403)") == 1
    assert events_unavailable(model.unavailable) is None  # Jobs speak for Jobs, not for Events
    assert [e for e in events if isinstance(e, Scope)][-1].unavailable == model.unavailable


def test_a_refused_resourcequota_list_is_one_line_and_the_view_stands(kube_api: KubeAPI) -> None:
    serve(kube_api, "gang137", "v1beta1")
    kube_api.respond_fixture("GET", "/api/v1/resourcequotas", FORBIDDEN)
    events, model = run(kube_api)
    assert set(model.unavailable) == {"ResourceQuota"} and len(model.nodes) > 0
    note = quota_unavailable(model.unavailable)
    assert note is not None and note.startswith("quotas are not shown: Listing resourcequotas was forbidden (403)")
    assert model.quota_uses() == {} and model.held() == {}
    assert gangs_unavailable(model.unavailable) is None and events_unavailable(model.unavailable) is None


def test_a_kind_refused_twice_is_said_once(kube_api: KubeAPI) -> None:
    """The informer's 403 and the source's own failure path may both report a kind: one entry stays."""
    scopes: list[Scope] = []
    src = KubeSource(str(kube_api.kubeconfig))
    src._emit = scopes.append
    src._unavailable("PodGroup", "Listing podgroups.scheduling.k8s.io was forbidden (403)")
    src._unavailable("PodGroup", "Listing podgroups.scheduling.k8s.io was forbidden (403)")
    assert gangs_unavailable(scopes[-1].unavailable) == (
        "some gangs are not shown: Listing podgroups.scheduling.k8s.io was forbidden (403)")
    src.close()
