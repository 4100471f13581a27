"""Workloads (ReplicaSet, Deployment, StatefulSet) as the TUI shows and scales them.

Only what an operator needs to act: how many replicas were asked for and how many are ready. The
field names of the API differ a little between kinds; this is the one place that knows.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from kubeview.model.server_version import image_name_tag

WORKLOAD_KINDS = ("ReplicaSet", "Deployment", "StatefulSet")


@dataclass(slots=True)
class WorkloadView:
    kind: str  # "ReplicaSet" | "Deployment" | "StatefulSet"
    namespace: str
    name: str
    desired: int  # spec.replicas (the API defaults it to 1)
    ready: int  # status.readyReplicas (absent = 0)
    current: int  # status.replicas: pods that exist, ready or not
    available: int  # status.availableReplicas
    selector: dict[str, str]  # spec.selector.matchLabels
    owner: tuple[str, str] | None  # controller (kind, name): a Deployment for its ReplicaSets
    resource_version: str = ""
    # the kube-scheduler images its pods run (a second scheduler's Deployment): checked against the API
    # server's version (model/server_version.py `scheduler_skew`); empty for every other workload
    scheduler_images: tuple[str, ...] = ()

    @classmethod
    def from_api(cls, kind: str, obj: dict) -> WorkloadView:
        meta, spec, status = obj.get("metadata") or {}, obj.get("spec") or {}, obj.get("status") or {}
        owner = next(
            ((o.get("kind", ""), o.get("name", "")) for o in meta.get("ownerReferences") or [] if o.get("controller")),
            None,
        )
        replicas = spec.get("replicas")
        return cls(
            kind=kind,
            namespace=meta.get("namespace", ""),
            name=meta["name"],
            desired=1 if replicas is None else int(replicas),
            ready=int(status.get("readyReplicas") or 0),
            current=int(status.get("replicas") or 0),
            available=int(status.get("availableReplicas") or 0),
            selector=dict((spec.get("selector") or {}).get("matchLabels") or {}),
            owner=owner,
            resource_version=meta.get("resourceVersion", ""),
            scheduler_images=scheduler_images(spec),
        )

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.kind, self.namespace, self.name)


def scheduler_images(spec: dict) -> tuple[str, ...]:
    """Images of the pod template's containers that are a kube-scheduler (`…/kube-scheduler:TAG`)."""
    containers = ((spec.get("template") or {}).get("spec") or {}).get("containers") or []
    images = (c.get("image") or "" for c in containers)
    return tuple(i for i in images if image_name_tag(i)[0] == "kube-scheduler")


class WorkloadStore:
    """The workloads the model holds, by (kind, namespace, name): the model's store for WORKLOAD_KINDS."""

    def __init__(self) -> None:
        self.views: dict[tuple[str, str, str], WorkloadView] = {}
        # Deployments and StatefulSets running a kube-scheduler (few): the skew check reads these only
        self.schedulers: dict[tuple[str, str, str], WorkloadView] = {}

    def put(self, kind: str, obj: dict) -> bool:
        view = WorkloadView.from_api(kind, obj)
        old = self.views.get(view.key)
        if old is not None and old.resource_version and old.resource_version == view.resource_version:
            return False
        self._keep(view)
        return True

    def delete(self, kind: str, obj: dict) -> bool:
        meta = obj.get("metadata") or {}
        key = (kind, meta.get("namespace", ""), meta.get("name", ""))
        self.schedulers.pop(key, None)
        return self.views.pop(key, None) is not None

    def replace(self, kind: str, objects: Iterable[dict]) -> None:
        for key in [k for k in self.views if k[0] == kind]:
            del self.views[key]
            self.schedulers.pop(key, None)
        for obj in objects:
            self._keep(WorkloadView.from_api(kind, obj))

    def _keep(self, view: WorkloadView) -> None:
        self.views[view.key] = view
        if view.scheduler_images and view.kind != "ReplicaSet":  # a Deployment's ReplicaSets say it again
            self.schedulers[view.key] = view
        else:
            self.schedulers.pop(view.key, None)
