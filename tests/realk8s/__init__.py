"""Tests against a real Kubernetes control plane (etcd, kube-apiserver, kube-controller-manager,
kube-scheduler, kwok) built by scripts/build-kubernetes.sh; see conftest.py."""
