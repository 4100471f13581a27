"""The test suite's environment: no cluster, kubeconfig or home of the caller's (issue 38).

A developer's shell may point `KUBECONFIG` (or `~/.kube/config`, or the in-cluster variables) at a
real cluster; a test that spawned kubeview with the caller's environment would then list, or render
in, that cluster. `tests/conftest.py` calls `scrub()` once at start-up and `isolate()` before every
test, so `os.environ` (and with it every subprocess that copies it) carries none of the caller's
cluster settings and a `HOME` of its own. A test that wants a cluster names it explicitly
(`KUBECONFIG=<the test API server's kubeconfig>`, the realk8s plane's admin kubeconfig).

What the tests share on purpose is named by one variable each (README, Development), pinned here to
the caller's own cache before `HOME` moves, so builds made once are found by every test.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

# A kubeconfig, the in-cluster service account's address, and everything that moves where a
# program reads its settings or state from.
CLUSTER_VARIABLES = ("KUBECONFIG", "KUBERNETES_SERVICE_HOST", "KUBERNETES_SERVICE_PORT",
                     "KUBERNETES_SERVICE_PORT_HTTPS")
HOME_VARIABLES = ("XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_STATE_HOME", "XDG_DATA_HOME", "K9S_CONFIG_DIR")

# variable -> the folder under the caller's cache (${XDG_CACHE_HOME:-~/.cache}/kubeview) it defaults to.
# The build scripts read the first five; tests/hermetic.cache() the last (PyYAML wheels and the like).
SHARED_CACHES = {
    "KUBEVIEW_K8S_CACHE": "kubernetes",   # scripts/build-kubernetes.sh: the control plane's binaries
    "KUBEVIEW_HELM_CACHE": "helm",        # scripts/build-helm.sh
    "KUBEVIEW_KREW_CACHE": "krew",        # scripts/build-krew.sh
    "KUBEVIEW_KARPENTER_CACHE": "karpenter",  # scripts/build-karpenter.sh: Karpenter (kwok provider) + CRDs
    "KUBEVIEW_KUEUE_CACHE": "kueue",      # scripts/build-kueue.sh: Kueue's manager + CRDs
    "KUBEVIEW_CA_CACHE": "cluster-autoscaler",  # scripts/build-cluster-autoscaler.sh
    "KUBEVIEW_PEERS_CACHE": "peers",      # scripts/build-peers.sh: the bench's peers
    "KUBEVIEW_CHURN_CACHE": "churn",      # scripts/build-churn.sh: the bench's Go churn (tools/churn)
    "KUBEVIEW_TEST_CACHE": "test",        # what single tests install once (an old PyYAML release)
}
# pip's own download cache, so a test that pip-installs once does not download again under a new HOME.
PIP_CACHE = "PIP_CACHE_DIR"

_session_home: Path | None = None


def _caller_cache(env: os._Environ[str] | dict[str, str]) -> Path:
    home = env.get("HOME") or str(Path.home())
    return Path(env.get("XDG_CACHE_HOME") or Path(home) / ".cache")


def pin_shared_caches(env: os._Environ[str] | dict[str, str]) -> None:
    """Name each shared cache by its variable, where the caller has not, from the caller's HOME."""
    base = _caller_cache(env)
    for variable, folder in SHARED_CACHES.items():
        env.setdefault(variable, str(base / "kubeview" / folder))
    env.setdefault(PIP_CACHE, str(base / "pip"))


def cache(variable: str) -> Path:
    """The shared cache a test reads or fills, by its variable (pinned by scrub())."""
    return Path(os.environ[variable])


def scrub() -> Path:
    """Once per test session: pin the shared caches, then drop the caller's cluster and home settings
    from os.environ and move HOME to a folder of the session's own. Returns that folder."""
    global _session_home
    pin_shared_caches(os.environ)
    for variable in (*CLUSTER_VARIABLES, *HOME_VARIABLES):
        os.environ.pop(variable, None)
    _session_home = Path(tempfile.mkdtemp(prefix="kubeview-tests-home-"))
    os.environ["HOME"] = str(_session_home)
    return _session_home


def unscrub() -> None:
    """At the session's end: remove the session's home."""
    if _session_home is not None:
        shutil.rmtree(_session_home, ignore_errors=True)


def isolate(monkeypatch, home: Path) -> None:  # noqa: ANN001 -- pytest.MonkeyPatch, typed loosely for scripts
    """Before each test: a HOME of its own and none of the cluster or home variables (a test sets
    them on purpose through monkeypatch or its subprocess's env)."""
    monkeypatch.setenv("HOME", str(home))
    for variable in (*CLUSTER_VARIABLES, *HOME_VARIABLES):
        monkeypatch.delenv(variable, raising=False)
