"""Kueue's queues as kubeview reads them (#40, item 3): ClusterQueues, LocalQueues, ResourceFlavors and
the Workloads waiting in them. Pure: dicts in, dataclasses out.

`store.QueueStore` (`model.queues`, kinds `kueue.ClusterQueue`, `kueue.LocalQueue`, `kueue.ResourceFlavor`
and `kueue.Workload`) keeps each object read by `objects.py` (field names of kueue.x-k8s.io v1beta2 and
v1beta1, sigs.k8s.io/kueue v0.17.0 apis/kueue/*/clusterqueue_types.go, localqueue_types.go,
resourceflavor_types.go, workload_types.go); `admit.queue_refusal` is the one reading of "the ClusterQueue
has no room" for `kubeview fit`.
"""
