"""The Kubernetes API as a cluster source: list+watch of every kind kubeview reads, scale and
Job patches, binding, discovery, kubeconfig loading and API error wording.

May import kubeview.model, kubeview.scheduling, kubeview.cluster.source and the `kubernetes`
client; never kubeview.cluster.local, kubeview.tui or kubeview.commands.
"""
