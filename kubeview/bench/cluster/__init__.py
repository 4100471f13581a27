"""`kubeview bench cluster --kubeconfig FILE`: kubeview's read path against a real API server, beside
the tools operators use instead (kubectl-view-allocations, kube-capacity, k9s, kubectl), in one run.
The entry point is command.py; fill.py creates and removes the cluster's contents."""
