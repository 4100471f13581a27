"""What a cluster source can do is declared (cluster/source.py's Protocols), and read from there.

Each source class says which capabilities it has; the headless readers (plan's evictor, the packing a
`fit` assumes) follow the declaration, so a source without one gets no evictor, not an AttributeError.
"""

from __future__ import annotations

from kubeapi import KubeAPI

from kubeview.cluster.kube.source import KubeSource
from kubeview.cluster.local.source import LocalSource
from kubeview.cluster.packing import KUBE_DEFAULT, current_packing
from kubeview.cluster.plan_apply import evictor_for
from kubeview.cluster.source import ClusterSource, capabilities
from kubeview.cluster.synthetic import SyntheticSource


def test_the_embedded_cluster_declares_every_action_it_takes() -> None:
    source = LocalSource()
    try:
        assert isinstance(source, ClusterSource)
        assert capabilities(source) == ("Scales", "EditsJobs", "KnowsPacking", "RunsPacking", "GetsObjects",
                                        "Evicts", "Preempts", "MaybeDemo")
        assert evictor_for(source) is source  # its own Eviction API
        assert current_packing(source) == (source.packing, "the embedded scheduler's")
    finally:
        source.close()


def test_a_real_cluster_declares_its_client_and_the_kinds_it_waits_for(kube_api: KubeAPI) -> None:
    source = KubeSource(str(kube_api.kubeconfig))
    try:
        assert isinstance(source, ClusterSource)
        assert capabilities(source) == ("ListsKinds", "Scales", "EditsJobs", "FetchesObjects", "TalksToKube")
        from kubeview.cluster.kube.evict import KubeEvictor

        assert isinstance(evictor_for(source), KubeEvictor)  # evictions go through its API client
        assert current_packing(source)[1] == KUBE_DEFAULT  # kube-scheduler's profile is not readable
    finally:
        source.close()


def test_the_synthetic_cluster_declares_fewer() -> None:
    source = SyntheticSource(nodes=4, pods=8)
    assert isinstance(source, ClusterSource)
    # its pretend scheduler takes a packing policy; no Job edits, no evictions, no preemption
    assert capabilities(source) == ("Scales", "KnowsPacking", "RunsPacking")
    assert evictor_for(source) is None  # `plan` says "this cluster cannot evict pods (no Eviction API)"


class Bare:
    """A source with nothing beyond what every source has."""

    title = "bare"
    is_local = False

    def run(self, emit, stop) -> None:  # noqa: ANN001
        stop.wait()

    def close(self) -> None:
        pass


def test_a_source_with_only_the_base_declares_nothing_more() -> None:
    source = Bare()
    assert isinstance(source, ClusterSource) and capabilities(source) == ()
    assert evictor_for(source) is None
    assert current_packing(source, "pack")[0].policy == "pack"
