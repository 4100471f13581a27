"""`kubeview bench scheduler`: scheduler_perf-style scenarios on the embedded scheduler
(run, scenarios), the extender's round trips (extender, ab) and the same scenarios against a real
API server (kube, kube_plan, kube_cli); `command` is the entry point.

May import kubeview.model, kubeview.scheduling and kubeview.cluster; never kubeview.tui or
kubeview.commands.
"""
