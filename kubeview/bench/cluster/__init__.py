"""`kubeview bench cluster --kubeconfig FILE`: kubeview's read path against a real API server, beside
the tools operators use instead (kubectl-view-allocations, kube-capacity, k9s, kubectl), in one run.
The entry point is command.py; fill.py creates and removes the cluster's contents."""

# what `--skip` may leave out: each costs memory beside the plane (at 150,000 pods `kubectl get pods -A
# -o json` alone grew to 5.8 GB, which with the plane's own ~17 GB filled a 24 GiB machine)
SKIPPABLE = ("kubectl-json", "kubectl-view-allocations", "kube-capacity", "k9s")
