"""What a user (or the render job, the demo, a test) asks of the embedded cluster: create and apply
objects, scale, change and suspend Jobs, preempt a node, change the scheduler's packing.

A mixin of `LocalCluster` (state.py), which owns the objects and the apiserver's verbs; like it, pure
state transitions: each action writes objects and reconciles, or raises ActionError with one sentence.
"""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING

from kubeview.cluster.local import dra as dra
from kubeview.cluster.local import objects as obj
from kubeview.cluster.local.claims import TEMPLATE
from kubeview.cluster.local.gang_objects import GANG_OBJECT_KINDS, job_gang
from kubeview.cluster.local.jobs import normalize_job
from kubeview.cluster.local.kubelet_status import Intent, Key, StopPod, _key
from kubeview.cluster.source import ActionError
from kubeview.model.quantity import QuantityError, parse
from kubeview.scheduling.config import PackingConfig

# what the kubelet's graceful node shutdown writes (pkg/kubelet/nodeshutdown): a reclaimed spot node
NODE_SHUTDOWN_MESSAGE = "Pod was terminated in response to imminent node shutdown."
SCALABLE = ("ReplicaSet", "Deployment")


class ClusterActions:
    """The actions of `LocalCluster`; see the module docstring."""

    packing: PackingConfig
    intents: list[Intent]
    _dra: bool
    _processes: set[Key]
    _node_index: dict[str, int]
    _schedule_needed: bool

    if TYPE_CHECKING:  # provided by LocalCluster and its other mixins
        def get(self, kind: str, namespace: str, name: str) -> dict | None: ...
        def list(self, kind: str) -> list[dict]: ...
        def create(self, kind: str, o: dict) -> dict: ...
        def update(self, kind: str, o: dict) -> dict: ...
        def delete(self, kind: str, namespace: str, name: str) -> None: ...
        def delete_pod(self, namespace: str, name: str, grace: float | None = None) -> None: ...
        def reconcile(self, rounds: int = 20) -> None: ...
        def _write(self, kind: str, type_: obj.Change, o: dict) -> dict: ...
        def _kubelet_run(self, pod: dict) -> None: ...
        def create_gang_object(self, manifest: dict) -> dict: ...
        def apply_quota(self, manifest: dict) -> dict: ...

    def create_pod(self, manifest: dict) -> dict:
        pod = obj.admit_pod(manifest)
        if not (pod["metadata"].get("name") or "").strip():
            raise ActionError("a pod needs metadata.name")
        _check_resources(pod.get("spec") or {}, f"pod {pod['metadata']['name']}")
        created = self.create("Pod", pod)
        if (created.get("spec") or {}).get("nodeName"):
            self._kubelet_run(created)
        self.reconcile()
        return created

    def apply_workload(self, manifest: dict) -> dict:
        """Create or replace a ReplicaSet or Deployment (`kind` says which; `kubectl apply`, roughly)."""
        kind = manifest.get("kind")
        if kind == "Job":
            return self.apply_job(manifest)
        if kind in GANG_OBJECT_KINDS:
            return self.create_gang_object(manifest)
        if kind == "ResourceQuota":
            return self.apply_quota(manifest)
        if kind not in SCALABLE:
            raise ActionError(f"the local cluster runs ReplicaSets, Deployments, Jobs, Workloads, PodGroups and "
                              f"ResourceQuotas, "
                              f"not {kind or 'objects without a kind'}")
        name = (manifest.get("metadata") or {}).get("name")
        if not name:
            raise ActionError(f"a {kind} needs metadata.name")
        ns = (manifest.get("metadata") or {}).get("namespace") or "default"
        _check_resources(((manifest.get("spec") or {}).get("template") or {}).get("spec") or {}, f"{kind} {name}")
        old = self.get(kind, ns, name)
        if old is None:
            made = self.create(kind, obj.normalize_workload(kind, manifest))
        else:
            fresh = obj.normalize_workload(kind, {**manifest, "metadata": {**old["metadata"], **manifest["metadata"],
                                                                           "namespace": ns}})
            fresh["status"] = copy.deepcopy(old.get("status") or {})
            made = self.update(kind, fresh)
        self.reconcile()
        return made

    def create_claim_object(self, manifest: dict) -> dict:
        """Create a ResourceClaimTemplate or a standalone ResourceClaim (`kubectl create`)."""
        kind = manifest.get("kind")
        if kind not in (TEMPLATE, "ResourceClaim"):
            raise ActionError(f"{kind or 'an object without a kind'} is not a ResourceClaim or ResourceClaimTemplate")
        if not self._dra:
            raise ActionError(f"the local cluster serves no resource.k8s.io/v1 (no node has dra:), so no {kind}")
        meta = manifest.get("metadata") or {}
        if not (meta.get("name") or "").strip():
            raise ActionError(f"a {kind} needs metadata.name")
        made = obj.metadata(meta["name"], meta.get("namespace") or "default", labels=meta.get("labels"))
        spec = manifest.get("spec") or {}
        if kind == "ResourceClaim":
            body = {"metadata": made, "spec": dra.claim_spec(spec), "status": {}}
        else:
            body = {"metadata": made, "spec": {**spec, "spec": dra.claim_spec(spec.get("spec") or {})}}
        created = self.create(kind, body)
        self.reconcile()
        return created

    def delete_workload(self, kind: str, namespace: str, name: str) -> None:
        if self.get(kind, namespace, name) is None:
            raise ActionError(f"{kind.lower()} {namespace}/{name} not found")
        self.delete(kind, namespace, name)
        self.reconcile()

    def remove_pod(self, namespace: str, name: str, grace: float | None = None) -> None:
        if self.get("Pod", namespace, name) is None:
            raise ActionError(f"pod {namespace}/{name} not found")
        self.delete_pod(namespace, name, grace)
        self.reconcile()

    def scale(self, kind: str, namespace: str, name: str, replicas: int) -> str:
        if kind not in SCALABLE:
            raise ActionError(f"the local cluster can scale ReplicaSets and Deployments, not {kind}")
        if not isinstance(replicas, int) or replicas < 0:
            raise ActionError(f"replicas must be 0 or more, not {replicas}")
        current = self.get(kind, namespace, name)
        if current is None:
            raise ActionError(f"{kind.lower()} {namespace}/{name} not found")
        owner = next((r for r in current["metadata"].get("ownerReferences") or [] if r.get("controller")), None)
        if owner is not None:
            raise ActionError(f"{kind.lower()} {name} is managed by {owner['kind'].lower()} {owner['name']}: "
                              f"scale the {owner['kind'].lower()} instead")
        if int(current["spec"].get("replicas", 1)) != replicas:
            fresh = copy.deepcopy(current)
            fresh["spec"]["replicas"] = replicas
            fresh["metadata"]["generation"] = int(fresh["metadata"].get("generation", 1)) + 1
            self.update(kind, fresh)
            self.reconcile()
        return f"{kind.lower()} {namespace}/{name} scaled to {replicas}"

    def apply_job(self, manifest: dict) -> dict:
        """Create a Job (a Job's pod template cannot change: an existing one is refused, as kube does)."""
        name = (manifest.get("metadata") or {}).get("name")
        if not name:
            raise ActionError("a Job needs metadata.name")
        ns = (manifest.get("metadata") or {}).get("namespace") or "default"
        if self.get("Job", ns, name) is not None:
            raise ActionError(f"job {ns}/{name} already exists")
        try:
            job = normalize_job({**manifest, "metadata": {**manifest["metadata"], "namespace": ns}})
            job_gang(job)  # a spec.scheduling the local Job controller can run (gang_objects.py)
        except ValueError as exc:
            raise ActionError(f"Job {ns}/{name} is invalid: {exc}") from None
        _check_resources(job["spec"]["template"]["spec"], f"Job {name}")
        made = self.create("Job", job)
        self.reconcile()
        return made

    def _patch_job(self, namespace: str, name: str, change: dict) -> None:
        current = self.get("Job", namespace, name)
        if current is None:
            raise ActionError(f"job {namespace}/{name} not found")
        fresh = copy.deepcopy(current)
        fresh["spec"].update(change)
        if fresh["spec"] != current["spec"]:
            fresh["metadata"]["generation"] = int(fresh["metadata"].get("generation", 1)) + 1
            self.update("Job", fresh)
            self.reconcile()

    def set_parallelism(self, namespace: str, name: str, parallelism: int) -> str:
        if isinstance(parallelism, bool) or not isinstance(parallelism, int) or parallelism < 0:
            raise ActionError(f"parallelism must be 0 or more, not {parallelism}")
        self._patch_job(namespace, name, {"parallelism": parallelism})
        return f"Job {namespace}/{name} parallelism set to {parallelism}."

    def suspend_job(self, namespace: str, name: str, suspend: bool) -> str:
        self._patch_job(namespace, name, {"suspend": bool(suspend)})
        return f"Job {namespace}/{name} {'suspended' if suspend else 'resumed'}."

    def preempt_node(self, name: str) -> str:
        """A spot node reclaimed: its pods are killed and marked `DisruptionTarget` (reason
        `TerminationByKubelet`, the node-shutdown message), then the Node object goes. Controllers
        replace what they own; a Job's podFailurePolicy decides whether the failures count."""
        node = self.get("Node", "", name)
        if node is None:
            raise ActionError(f"node {name} not found")
        killed = 0
        for pod in self.list("Pod"):
            if (pod.get("spec") or {}).get("nodeName") != name:
                continue
            if (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed"):
                continue
            key = _key(pod)
            if key in self._processes:
                self._processes.discard(key)  # what the process does from now on is not reported
                self.intents.append(StopPod(key, 0.0))
            self.update("Pod", obj.disrupted(pod, "TerminationByKubelet", NODE_SHUTDOWN_MESSAGE))
            killed += 1
        self._write("Node", "DELETED", copy.deepcopy(node))
        self._node_index.pop(name, None)
        self.reconcile()
        return f"node {name} preempted: {killed} pod{'s' if killed != 1 else ''} killed, node removed."

    def set_packing(self, config: PackingConfig) -> str:
        self.packing = config
        self._schedule_needed = True
        self.reconcile()
        return f"local scheduler now packs with policy {config.policy}"


def _check_resources(spec: dict, what: str) -> None:
    """Quantities the apiserver would reject (422) are refused here, in one sentence."""
    for c in list(spec.get("containers") or []) + list(spec.get("initContainers") or []):
        for field in ("requests", "limits"):
            for resource, value in ((c.get("resources") or {}).get(field) or {}).items():
                try:
                    if parse(value) < 0:
                        raise QuantityError
                except QuantityError:
                    raise ActionError(f"{what}: container {c.get('name', '')!r} {field} {resource}: "
                                      f"{value!r} is not a valid quantity") from None
