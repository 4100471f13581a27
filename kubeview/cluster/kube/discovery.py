"""Is a real cluster configured? Answered from paths and the environment alone.

Kept apart from kube/config.py so that choosing the source does not import the `kubernetes` client
(0.6 s of start-up) when the answer is the embedded local cluster.
"""

from __future__ import annotations

import os
from pathlib import Path

DEFAULT_KUBECONFIG = Path("~/.kube/config")
IN_CLUSTER_ENV = "KUBERNETES_SERVICE_HOST"


def kubeconfig_paths(kubeconfig: str | None) -> list[Path]:
    """The kubeconfig files that would be read, in kubectl's order (existing or not)."""
    if kubeconfig:
        return [Path(kubeconfig).expanduser()]
    env = os.environ.get("KUBECONFIG")
    if env:
        return [Path(p).expanduser() for p in env.split(os.pathsep) if p]
    return [DEFAULT_KUBECONFIG.expanduser()]


def kubeconfig_env() -> str | None:
    """`$KUBECONFIG` when set to something (an empty value counts as unset, as for kubectl)."""
    return os.environ.get("KUBECONFIG") or None


def kubeconfig_available(kubeconfig: str | None) -> bool:
    """True if a real cluster is configured: `--kubeconfig` or `$KUBECONFIG` given (their errors,
    a missing or empty file, are reported later: a typo must not give the embedded cluster's made-up
    data and exit 0), ~/.kube/config exists, or in-cluster service account env."""
    if kubeconfig or kubeconfig_env():
        return True
    if any(p.is_file() for p in kubeconfig_paths(None)):
        return True
    return bool(os.environ.get(IN_CLUSTER_ENV))
