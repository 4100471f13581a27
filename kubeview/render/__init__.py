"""The render job kubeview drives on a cluster: start the producer and consumers, follow, stop."""
