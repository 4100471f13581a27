"""Which cluster kubeview talks to: the kubeconfig's cluster when there is one, else the local one.

`--local` forces the embedded cluster, and so does `--demo` (the embedded cluster with the demo's
workloads, kubeview.cluster.local.demo), even beside a kubeconfig. The kube source is imported only when it is used, so the
local path never pays for (or depends on) the kubernetes client.
"""

from __future__ import annotations

import argparse

from kubeview.cluster.kube.discovery import kubeconfig_available
from kubeview.cluster.source import ClusterSource, SourceError


def wants_kube(args: argparse.Namespace) -> bool:
    """True when a kubeconfig (or in-cluster config) exists and neither `--local` nor `--demo` was given.

    Raises SourceError (one sentence) for a cluster option that cannot be honoured: `--context` or
    `-n` with no kubeconfig to apply them to, or beside `--local`/`--demo`; `--cluster` beside
    `--demo`, which runs the bundled cluster. A script with a typo must not get the embedded
    cluster's simulated data and exit 0. All of these are usage errors (exit 2)."""
    asked = [f"{flag} {value}" for flag, attr in (("--context", "context"), ("-n", "namespace"))
             if (value := getattr(args, attr, None))]
    given = {"--demo": getattr(args, "demo", False), "--local": getattr(args, "local", False)}
    local = next((flag for flag, on in given.items() if on), None)
    if local:  # wins over a kubeconfig (as before), not over an explicit context
        if asked:
            raise SourceError(f"{asked[0]} is for a real cluster, but {local} asks for the embedded one; drop one of them.",
                              usage=True)
        if local == "--demo" and getattr(args, "cluster", None):
            raise SourceError(f"--demo runs the bundled cluster, not --cluster {args.cluster}; drop one of them.",
                              usage=True)
        return False
    if kubeconfig_available(getattr(args, "kubeconfig", None)):
        return True
    if asked:
        raise SourceError(f"{asked[0]} needs a kubeconfig, and there is none ($KUBECONFIG unset, no "
                          "~/.kube/config, not in a pod); pass --kubeconfig FILE, or --local for the "
                          "embedded cluster.", usage=True)
    return False


def open_source(args: argparse.Namespace, *, events: bool = True) -> ClusterSource:
    """The source for these arguments; raises SourceError (one sentence) if it cannot start. `events`:
    also watch Events (the TUI's pod view shows them; a snapshot reads the autoscalers' words on pending pods)."""
    if wants_kube(args):
        from kubeview.cluster.kube.source import KubeSource

        return KubeSource(kubeconfig=getattr(args, "kubeconfig", None), context=getattr(args, "context", None),
                          namespace=getattr(args, "namespace", None), events=events)
    if getattr(args, "demo", False):
        from kubeview.cluster.local.demo import open_demo

        return open_demo(metrics_listen=getattr(args, "local_metrics", None))
    from kubeview.cluster.local.source import LocalSource

    return LocalSource(getattr(args, "cluster", None), metrics_listen=getattr(args, "local_metrics", None))
