"""Autoscalers as kubeview reads them: the node groups that may add nodes, and what a Pending pod waits for.

A Pending pod's scheduler message ("Insufficient cpu") is true and useless when the nodes it waits for
will never come. Cluster Autoscaler and Karpenter both say what they did and why not; this package
turns what they write into one vocabulary (`groups.NodeGroup`, `groups.PodWait`). Pure: the stores
take the objects the sources list and watch; the cluster sources and the embedded cluster feed them.
"""
