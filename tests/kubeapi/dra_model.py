"""The recorded DRA cluster's final lists (tests/fixtures/k8s/dra) folded into a ClusterModel."""

from __future__ import annotations

from kubeview.model.cluster import ClusterModel
from kubeview.model.events import Listed

from . import fixtures

DRA_LISTS = (("Node", "nodes.json"), ("Pod", "pods.json"), ("DeviceClass", "deviceclasses.json"),
             ("ResourceSlice", "resourceslices.json"), ("ResourceClaim", "resourceclaims.json"))


def recorded_dra_model() -> ClusterModel:
    m = ClusterModel()
    for kind, name in DRA_LISTS:
        m.apply(Listed(kind, fixtures.load(f"dra/{name}")["items"]))
    return m
