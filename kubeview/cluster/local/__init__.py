"""The embedded local cluster: simulated nodes whose pods are real local processes, with its own
API objects, controllers (ReplicaSet, Job), scheduler (kubeview.scheduling), kubelet and metrics.

May import kubeview.model, kubeview.scheduling, kubeview.cluster.source and renderer; never
kubeview.cluster.kube (nor the `kubernetes` client), kubeview.tui or kubeview.commands.
"""
