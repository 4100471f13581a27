"""DRA in the embedded cluster: what kube-scheduler's DynamicResources plugin and the resourceclaim
controller write (claims made from templates, allocated and reserved before binding, released
with their pod), in the order the recordings show.

A mixin of `LocalCluster` (state.py), which owns the objects; pure state transitions, no I/O.
"""

from __future__ import annotations

import copy
import random
from typing import TYPE_CHECKING

from kubeview.cluster.local import dra as dra
from kubeview.cluster.local.kubelet_status import _key
from kubeview.cluster.source import ActionError
from kubeview.model.gpus.dra import ClaimView

if TYPE_CHECKING:
    from kubeview.cluster.local.objects import Change
    from kubeview.model.cluster import ClusterModel

TEMPLATE = "ResourceClaimTemplate"  # stored and used by the resourceclaim controller; no client watches it


class ClaimControllers:
    """ResourceClaims of `LocalCluster`'s pods; see the module docstring."""

    model: ClusterModel
    rng: random.Random
    _dra: bool
    _objects: dict[str, dict[tuple[str, str], dict]]

    if TYPE_CHECKING:  # provided by LocalCluster
        def get(self, kind: str, namespace: str, name: str) -> dict | None: ...
        def create(self, kind: str, o: dict) -> dict: ...
        def update(self, kind: str, o: dict) -> dict: ...
        def _write(self, kind: str, type_: Change, o: dict) -> dict: ...

    # --- DRA: what kube-scheduler and the resourceclaim controller write ---------------------------
    def _make_template_claims(self) -> None:
        """The resourceclaim controller: a claim per template entry of a live pod's `spec.resourceClaims`,
        then the pod's `status.resourceClaimStatuses` (recorded order: claim ADDED, pod MODIFIED)."""
        for pod in list(self._objects["Pod"].values()):
            entries = [c for c in (pod.get("spec") or {}).get("resourceClaims") or [] if c.get("resourceClaimTemplateName")]
            status = pod.get("status") or {}
            done = {s.get("name") for s in status.get("resourceClaimStatuses") or []}
            todo = [c for c in entries if c.get("name") not in done]
            if not todo or (pod.get("metadata") or {}).get("deletionTimestamp") or \
                    status.get("phase") in ("Succeeded", "Failed"):
                continue
            statuses = list(status.get("resourceClaimStatuses") or [])
            ns = pod["metadata"]["namespace"]
            for entry in todo:
                template = self.get(TEMPLATE, ns, entry["resourceClaimTemplateName"])
                if template is None:  # the controller retries until the template exists
                    continue
                claim = self.create("ResourceClaim", dra.template_claim(pod, entry["name"], template, self.rng))
                statuses.append({"name": entry["name"], "resourceClaimName": claim["metadata"]["name"]})
            if len(statuses) > len(status.get("resourceClaimStatuses") or []):
                self.update("Pod", dra.with_claim_statuses(pod, statuses))

    def _pod_claims(self, pod: dict) -> list[ClaimView] | None:
        """The pod's own claims (by name or made from its templates); None while one does not exist."""
        spec, status = pod.get("spec") or {}, pod.get("status") or {}
        made = {s.get("name"): s.get("resourceClaimName") for s in status.get("resourceClaimStatuses") or []}
        out = []
        for entry in spec.get("resourceClaims") or []:
            name = entry.get("resourceClaimName") or made.get(entry.get("name"))
            claim = self.get("ResourceClaim", pod["metadata"]["namespace"], name) if name else None
            if claim is None:
                return None
            out.append(ClaimView.from_api(claim))
        return out

    def _allocate_claims(self, pod: dict, node: str) -> dict:
        """Before binding: allocate the pod's own claims on `node` (or reserve a shared one already
        allocated there), and for a pod whose nvidia.com/gpu a DRA node serves create its
        extended-resource claim, allocate it the first free devices and reserve it for the pod, then
        map the pod to it (the recorded order: claim ADDED, claim allocated, pod status, binding)."""
        own = self._pod_claims(pod) if self._dra else None
        if own:
            picks = dra.allocate_on(self.model.gpus, node, own)
            if picks is None:  # the filter said they fit: a bug, not a state to paper over
                raise ActionError(f"{node} cannot allocate the claims of pod {pod['metadata']['name']}")
            for view, results in zip(own, picks, strict=True):
                claim = self._objects["ResourceClaim"][(view.namespace, view.name)]  # _pod_claims just read it
                if view.allocated:
                    self.update("ResourceClaim", dra.reserved(claim, pod))
                else:
                    self.update("ResourceClaim", dra.allocated(claim, pod, node, results))
        count = dra.gpu_request(pod) if self._dra else 0
        if count <= 0 or self.model.gpus.node(node) is None:
            return pod
        devices = dra.free_gpus(self.model.gpus, node)[:count]
        if len(devices) < count:  # the filter saw them free: a bug, not a state to paper over
            raise ActionError(f"{node} has {len(devices)} free DRA GPUs for a pod asking {count}")
        claim = self.create("ResourceClaim", dra.extended_claim(pod, self.rng, count))
        self.update("ResourceClaim", dra.allocated(claim, pod, node, [(dra.REQUEST_NAME, d) for d in devices]))
        return self.update("Pod", dra.mapped(pod, claim["metadata"]["name"]))

    def _release_claims(self, pod: dict, type_: str) -> None:
        """A pod deleted or finished: the claims it owns (extended-resource and template claims) are
        deallocated, then deleted (the recorded order; the device is free once `status.allocation` is
        gone); a standalone claim drops it from `reservedFor` and is deallocated when nobody is left."""
        if type_ != "DELETED" and (pod.get("status") or {}).get("phase") not in ("Succeeded", "Failed"):
            return
        uid = pod["metadata"].get("uid")
        for claim in list(self._objects["ResourceClaim"].values()):
            owners = claim["metadata"].get("ownerReferences") or []
            if any(r.get("uid") == uid for r in owners):
                self.update("ResourceClaim", dra.deallocated(claim))
                self._write("ResourceClaim", "DELETED", copy.deepcopy(self._objects["ResourceClaim"][_key(claim)]))
            elif any(r.get("uid") == uid for r in (claim.get("status") or {}).get("reservedFor") or []):
                self.update("ResourceClaim", dra.unreserved(claim, uid))
