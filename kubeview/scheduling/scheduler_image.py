"""The kube-scheduler the second scheduler runs (scheduler_manifests.py): the version kubeview is built
and tested against (.ci/kubernetes-versions' default). `kubeview scheduler-manifests --kube-version`
sets the cluster's, and kubeview's header says "kube-scheduler skew" when a running one does not match
(model/server_version.py, docs/versions.md). No imports: the CLI's parser reads it."""

KUBE_VERSION = "v1.37.2"
IMAGE_REPOSITORY = "registry.k8s.io/kube-scheduler"
IMAGE = f"{IMAGE_REPOSITORY}:{KUBE_VERSION}"
