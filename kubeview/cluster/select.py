"""Which cluster kubeview talks to: the kubeconfig's cluster when there is one, else the local one.

`--local` forces the embedded cluster. The kube source is imported only when it is used, so the
local path never pays for (or depends on) the kubernetes client.
"""

from __future__ import annotations

import argparse

from kubeview.cluster.kube_discovery import kubeconfig_available
from kubeview.cluster.source import ClusterSource


def wants_kube(args: argparse.Namespace) -> bool:
    """True when a kubeconfig (or in-cluster config) exists and `--local` was not given."""
    if getattr(args, "local", False):
        return False
    return kubeconfig_available(getattr(args, "kubeconfig", None))


def open_source(args: argparse.Namespace) -> ClusterSource:
    """The source for these arguments; raises SourceError (one sentence) if it cannot start."""
    if wants_kube(args):
        from kubeview.cluster.kube import KubeSource

        return KubeSource(kubeconfig=getattr(args, "kubeconfig", None), context=getattr(args, "context", None),
                          namespace=getattr(args, "namespace", None))
    from kubeview.cluster.local import LocalSource

    return LocalSource(getattr(args, "cluster", None), metrics_listen=getattr(args, "local_metrics", None))
