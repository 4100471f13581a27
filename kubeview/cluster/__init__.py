"""Sources of cluster state: the Kubernetes API, the embedded local cluster, Prometheus."""
