"""Kueue's objects for `kubeview bench model --quota` (#40): the synthetic cluster's batch side.

Shaped as sigs.k8s.io/kueue v0.17.0 writes them at kueue.x-k8s.io/v1beta2 (tests/fixtures/kueue/,
tests/fixtures/k8s/batch-schedulers/kueue-*.json), every object its own dicts as `json.loads` gives them:
- 3 ResourceFlavors: `default` (cpu, memory), `a100` and `h100` (nvidia.com/gpu, node labels);
- one ClusterQueue per ten namespaces (50), four in five in cohorts of five (`pool-<k>`), a resource group
  for cpu/memory in `default` and one for GPUs in `a100` then `h100` (h100 at its nominal quota, a100 with
  a borrowing limit); status counts and flavorsUsage/flavorsReservation summed from its Workloads;
- one LocalQueue per namespace (`team-queue`), feeding ClusterQueue `cq-<namespace index % queues>`;
- Workloads, one per Job: the admitted ones are the plain cluster's pods of every fifth ReplicaSet,
  regrouped four by four as Jobs (the pods then carry Kueue's annotation `kueue.x-k8s.io/workload`, the
  Job's labels and owner: Kueue's own members, in the plain build's pod list too); the rest (to 20,000
  at 150,000 pods) two in five finished (Kueue's `Finished` `Succeeded`) and three in five pending with
  the QuotaReserved=False messages Kueue writes (`Pending` "couldn't assign flavors to pod set main:
  insufficient unused quota for nvidia.com/gpu in flavor h100, 4 more needed"; one in 25 `Inadmissible`
  "LocalQueue team-batch doesn't exist").
"""

from __future__ import annotations

from kubeview.bench.model_cluster import _CPU, _MEM, _TS, Cluster

API = "kueue.x-k8s.io/v1beta2"
WORKLOADS_PER_POD = 20_000 / 150_000  # 20,000 Workloads at the full size
GROUP = 4  # pods per admitted Job
GPU = "nvidia.com/gpu"
ANNOTATION = "kueue.x-k8s.io/workload"
_ACTIVE = {"lastTransitionTime": _TS, "observedGeneration": 1, "reason": "Ready", "status": "True", "type": "Active"}


def _cond(kind: str, status: str, reason: str, message: str) -> dict:
    return {"lastTransitionTime": _TS, "message": message, "observedGeneration": 1, "reason": reason,
            "status": status, "type": kind}


def _quantity(resource: str, amount: int) -> str:
    """Model units back to a quantity: millicores for cpu, bytes as Mi, counts plain."""
    if resource == "cpu":
        return f"{amount}m" if amount % 1000 else str(amount // 1000)
    if resource == "memory":
        return f"{amount // 2**20}Mi"
    return str(amount)


_UNITS = {"100m": 100, "250m": 250, "500m": 500, "1": 1000, "2": 2000,
          "128Mi": 128 * 2**20, "256Mi": 256 * 2**20, "512Mi": 512 * 2**20, "1Gi": 2**30, "2Gi": 2**31}


class KueueObjects:
    """The Kueue side of a bench cluster of `namespaces` namespaces (see the module doc)."""

    def __init__(self, cluster: Cluster, namespaces: int, pods: int) -> None:
        self.cluster, self.namespaces = cluster, namespaces
        self.queues = max(namespaces // 10, 1)
        self.total = max(int(pods * WORKLOADS_PER_POD), 1)
        self.workloads: list[dict] = []
        # per ClusterQueue and per namespace: counts and (flavor, resource) -> (reserved, used)
        self._cq: dict[str, dict] = {}
        self._ns: dict[str, dict] = {}

    def queue_of(self, ns_index: int) -> str:
        return f"cq-{ns_index % self.queues:02d}"

    # -- the pods of admitted Jobs -----------------------------------------------------------------
    def adopt(self, pods: list[dict], replicasets: list[dict]) -> list[dict]:
        """Regroup the pods of every fifth ReplicaSet as Jobs of `GROUP` pods admitted by Kueue (in place:
        Kueue's annotation, the Job's labels and owner) and make their Workloads; the ReplicaSets left."""
        groups: dict[tuple[str, str], list[dict]] = {}
        n_workloads = self.cluster.workloads
        for i, (w, _, _) in self.cluster.placement.items():
            if w % 5 == 0:
                groups.setdefault((f"wl-{w:04d}-{(i // n_workloads) // GROUP:02d}", pods[i]["metadata"]["namespace"]),
                                  []).append(pods[i])
        for (group, ns), members in sorted(groups.items()):
            w, g = int(group[3:7]), int(group[8:])
            job_uid = f"{w:08x}-6666-4000-8000-{g:012x}"
            finished = all(m["status"].get("phase") in ("Succeeded", "Failed") for m in members)
            wl = self._workload(ns, group, len(members), w, job_uid, "finished" if finished else "admitted", 0)
            self.workloads.append(wl)
            for p in members:
                meta = p["metadata"]
                meta["annotations"] = {ANNOTATION: wl["metadata"]["name"]}
                meta["labels"] = {"batch.kubernetes.io/controller-uid": job_uid, "batch.kubernetes.io/job-name": group,
                                  "controller-uid": job_uid, "job-name": group, "kueue.x-k8s.io/podset": "main"}
                meta["ownerReferences"] = [{"apiVersion": "batch/v1", "kind": "Job", "name": group, "uid": job_uid,
                                            "controller": True, "blockOwnerDeletion": True}]
                p["spec"]["restartPolicy"] = "Never"
        return [rs for rs in replicasets if int(rs["metadata"]["name"][3:7]) % 5 != 0]

    def make_rest(self) -> None:
        """The Workloads without pods: finished ones and pending ones, to `total` in all."""
        for k in range(max(self.total - len(self.workloads), 0)):
            ns_index = k % self.namespaces
            ns, w = f"team-{ns_index}", 25 * (k % 7)  # GPU shapes of the plain cluster's GPU workloads
            state = "finished" if k % 5 < 2 else "pending"
            self.workloads.append(self._workload(ns, f"batch-{k:05d}", 1 + k % 8, w,
                                                 f"{k:08x}-7777-4000-8000-000000000000", state, k))

    def _workload(self, ns: str, job: str, count: int, w: int, job_uid: str, state: str, k: int) -> dict:
        gpus = (1, 1, 2, 4)[w // 25 % 4] if w % 25 == 0 else 0
        each = {"cpu": _CPU[w % 5], "memory": _MEM[(w // 5) % 5]} | ({GPU: str(gpus)} if gpus else {})
        totals = {r: _quantity(r, _UNITS.get(v, 0) * count) if r != GPU else str(gpus * count) for r, v in each.items()}
        ns_index = int(ns[5:])
        cq = self.queue_of(ns_index)
        gpu_flavor = "h100" if k % 3 == 0 else "a100"
        flavors = {"cpu": "default", "memory": "default"} | ({GPU: gpu_flavor} if gpus else {})
        queue = "team-batch" if state == "pending" and k % 25 == 2 else "team-queue"
        container = {"name": "train", "image": f"registry.example.com/team-{ns_index % 40}/train:2.{w % 9}",
                     "imagePullPolicy": "IfNotPresent", "resources": {"requests": dict(each), "limits": dict(each)},
                     "terminationMessagePath": "/dev/termination-log", "terminationMessagePolicy": "File"}
        name = f"job-{job}-{(w * 7919 + k) % 99991:05x}"
        meta = {"creationTimestamp": _TS, "finalizers": ["kueue.x-k8s.io/resource-in-use"], "generation": 1,
                "labels": {"kueue.x-k8s.io/job-uid": job_uid}, "name": name, "namespace": ns,
                "ownerReferences": [{"apiVersion": "batch/v1", "blockOwnerDeletion": True, "controller": True,
                                     "kind": "Job", "name": job, "uid": job_uid}],
                "resourceVersion": str(950_000 + len(self.workloads)),
                "uid": f"{len(self.workloads):08x}-8888-4000-8000-000000000000"}
        spec = {"active": True, "podSets": [{"count": count, "name": "main", "template": {
            "metadata": {"labels": {"batch.kubernetes.io/job-name": job}},
            "spec": {"containers": [container], "dnsPolicy": "ClusterFirst", "restartPolicy": "Never",
                     "schedulerName": "default-scheduler", "securityContext": {}, "terminationGracePeriodSeconds": 30}},
            "topologyRequest": {"podIndexLabel": "batch.kubernetes.io/job-completion-index"}}],
            "priority": 100 * (k % 3), "queueName": queue}
        if state == "pending":
            if queue == "team-batch":
                conds = [_cond("QuotaReserved", "False", "Inadmissible", f"LocalQueue {queue} doesn't exist")]
            else:
                need = f"insufficient unused quota for {GPU} in flavor h100, {gpus * count} more needed" if gpus \
                    else f"insufficient unused quota for cpu in flavor default, {totals['cpu']} more needed"
                conds = [_cond("QuotaReserved", "False", "Pending", f"couldn't assign flavors to pod set main: {need}")]
            status: dict = {"conditions": conds, "resourceRequests": [{"name": "main", "resources": totals}]}
        else:
            conds = [_cond("QuotaReserved", "True", "QuotaReserved", f"Quota reserved in ClusterQueue {cq}"),
                     _cond("Admitted", "True", "Admitted", "The workload is admitted")]
            conds += [_cond("Finished", "True", "Succeeded", "Reached expected number of succeeded pods")] \
                if state == "finished" else \
                [_cond("PodsReady", "True", "PodsReady", "All pods reached readiness and the workload is running")]
            status = {"admission": {"clusterQueue": cq, "podSetAssignments": [
                {"count": count, "flavors": flavors, "name": "main", "resourceUsage": totals}]}, "conditions": conds}
        if queue != "team-batch":  # no LocalQueue: in no ClusterQueue's counts
            self._count(cq, ns, state, {(flavors[r], r): _UNITS.get(v, 0) * count if r != GPU else gpus * count
                                        for r, v in each.items()} if state == "admitted" else {})
        return {"apiVersion": API, "kind": "Workload", "metadata": meta, "spec": spec, "status": status}

    def _count(self, cq: str, ns: str, state: str, usage: dict[tuple[str, str], int]) -> None:
        for tally in (self._cq.setdefault(cq, {}), self._ns.setdefault(ns, {})):
            if state != "finished":
                tally[state] = tally.get(state, 0) + 1
            for key, amount in usage.items():
                tally.setdefault("usage", {})[key] = tally.get("usage", {}).get(key, 0) + amount

    # -- the queues --------------------------------------------------------------------------------
    def flavors(self) -> list[dict]:
        out = []
        for i, (name, labels) in enumerate((("default", {}), ("a100", {"nvidia.com/gpu.product": "NVIDIA-A100-SXM4-80GB"}),
                                            ("h100", {"nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3"}))):
            spec: dict = {"nodeLabels": labels} if labels else {}
            if labels:
                spec["nodeTaints"] = [{"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}]
            out.append({"apiVersion": API, "kind": "ResourceFlavor", "metadata": {
                "creationTimestamp": _TS, "generation": 1, "name": name, "resourceVersion": str(940_000 + i),
                "uid": f"{i:08x}-9999-4000-8000-000000000000"}, "spec": spec})
        return out

    def cluster_queues(self) -> list[dict]:
        out = []
        for q in range(self.queues):
            name = f"cq-{q:02d}"
            tally = self._cq.get(name, {})
            usage = tally.get("usage", {})

            def amount(key: tuple[str, str], usage: dict = usage) -> int:
                return usage.get(key, 0)

            def quota(flavor: str, resource: str, extra: int) -> dict:
                row = {"name": resource, "nominalQuota": _quantity(resource, amount((flavor, resource)) + extra)}
                if flavor == "a100":
                    row["borrowingLimit"] = "8"
                return row
            groups = [{"coveredResources": ["cpu", "memory"], "flavors": [{"name": "default", "resources": [
                          quota("default", "cpu", 64_000), quota("default", "memory", 256 * 2**30)]}]},
                      {"coveredResources": [GPU], "flavors": [{"name": "a100", "resources": [quota("a100", GPU, 8)]},
                                                              {"name": "h100", "resources": [quota("h100", GPU, 0)]}]}]
            spec: dict = {"flavorFungibility": {"whenCanBorrow": "MayStopSearch", "whenCanPreempt": "TryNextFlavor"},
                          "namespaceSelector": {}, "preemption": {"borrowWithinCohort": {"policy": "Never"},
                          "reclaimWithinCohort": "Never", "withinClusterQueue": "Never"},
                          "queueingStrategy": "BestEffortFIFO", "resourceGroups": groups, "stopPolicy": "None"}
            if q % 5 != 4:
                spec["cohortName"] = f"pool-{q // 5}"
            flavors: list[dict] = [{"name": f, "resources": [{"borrowed": "0", "name": r, "total": _quantity(r, amount((f, r)))}
                                                 for r in rs]}
                       for f, rs in (("default", ("cpu", "memory")), ("a100", (GPU,)), ("h100", (GPU,)))]
            admitted = tally.get("admitted", 0)
            out.append({"apiVersion": API, "kind": "ClusterQueue", "metadata": {
                "creationTimestamp": _TS, "finalizers": ["kueue.x-k8s.io/resource-in-use"], "generation": 1,
                "name": name, "resourceVersion": str(930_000 + q), "uid": f"{q:08x}-aaaa-4000-8000-000000000000"},
                "spec": spec, "status": {
                    "admittedWorkloads": admitted, "conditions": [dict(_ACTIVE, message="Can admit new workloads")],
                    "flavorsReservation": flavors, "flavorsUsage": [
                        {"name": f["name"], "resources": [dict(r) for r in f["resources"]]} for f in flavors],
                    "pendingWorkloads": tally.get("pending", 0), "reservingWorkloads": admitted}})
        return out

    def local_queues(self) -> list[dict]:
        out = []
        for i in range(self.namespaces):
            ns = f"team-{i}"
            tally = self._ns.get(ns, {})
            usage: list[dict] = [{"name": f, "resources": [{"name": r, "total": _quantity(r, a)}
                                               for (f2, r), a in sorted(tally.get("usage", {}).items()) if f2 == f]}
                     for f in ("default", "a100", "h100")]
            admitted = tally.get("admitted", 0)
            out.append({"apiVersion": API, "kind": "LocalQueue", "metadata": {
                "creationTimestamp": _TS, "generation": 1, "name": "team-queue", "namespace": ns,
                "resourceVersion": str(960_000 + i), "uid": f"{i:08x}-bbbb-4000-8000-000000000000"},
                "spec": {"clusterQueue": self.queue_of(i), "stopPolicy": "None"},
                "status": {"admittedWorkloads": admitted,
                           "conditions": [dict(_ACTIVE, message="Can submit new workloads to localQueue")],
                           "flavorsReservation": [{"name": u["name"], "resources": [dict(r) for r in u["resources"]]}
                                                  for u in usage],
                           "flavorsUsage": usage, "pendingWorkloads": tally.get("pending", 0),
                           "reservingWorkloads": admitted}})
        return out

    def lists(self) -> list[tuple[str, list[dict]]]:
        """The four lists in the order a source may send them (each kind its own list)."""
        return [("kueue.ResourceFlavor", self.flavors()), ("kueue.ClusterQueue", self.cluster_queues()),
                ("kueue.LocalQueue", self.local_queues()), ("kueue.Workload", self.workloads)]


def kueue_cluster(nodes: int, gpu_nodes: int, pods: int, namespaces: int) -> tuple[Cluster, KueueObjects, list[dict], list[dict]]:
    """The bench's cluster with Kueue's objects made: (cluster, its Kueue objects, the pods (those of every
    fifth ReplicaSet now its Jobs'), the ReplicaSets left)."""
    cluster = Cluster(nodes, gpu_nodes, pods, namespaces=namespaces)
    kueue = KueueObjects(cluster, namespaces, pods)
    pod_list = cluster.pods()
    replicasets = kueue.adopt(pod_list, cluster.replicasets())
    kueue.make_rest()
    return cluster, kueue, pod_list, replicasets
