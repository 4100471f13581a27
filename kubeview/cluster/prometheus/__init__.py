"""Prometheus as a utilization source: the PromQL (queries.yaml), the client and the parsing
of its results into the model's utilization.

May import kubeview.model and kubeview.cluster.source; never another cluster source, kubeview.tui
or kubeview.commands.
"""
