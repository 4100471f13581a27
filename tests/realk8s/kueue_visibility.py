"""Kueue's on-demand visibility API (queue positions) on the realk8s plane: how it is made reachable.

The visibility server is an aggregated API server inside the manager (pkg/visibility/server.go,
`visibility.kueue.x-k8s.io` v1beta2 and v1beta1). What it takes here, read from Kueue v0.17.0's and
k8s.io/apiserver v0.37.2's source:
- Its port and address come from the Configuration's `visibilityServer` (`bindAddress`, `bindPort`; the
  `--visibility-server-port` flag otherwise): a free loopback port.
- The API server reaches it through an APIService whose Service is of type ExternalName `localhost`: the
  aggregator's resolver (k8s.io/apiserver pkg/util/proxy ResolveCluster) takes an ExternalName Service as
  `https://<externalName>:<the APIService's service.port>`, no ClusterIP or endpoints needed; the
  serving certificate is self-signed, so the APIService says `insecureSkipTLSVerify`.
- It authenticates the aggregator's requests by delegation: the front-proxy client certificate and the
  request-header CA the API server publishes in kube-system's `extension-apiserver-authentication`
  (plane.py's front-proxy flags), a SubjectAccessReview per request; the kubeconfig it delegates with is
  the `--kubeconfig` flag's (flag.Lookup("kubeconfig")), so the manager gets that flag, not $KUBECONFIG.
- Its serving certificate is written to the fixed directory `/visibility` (`certDir`, not configurable:
  with internal certificate management on it is `CertDirectory`, and the self-signed pair is written
  there; off, `/visibility/tls.crt` must exist). Writing to / of the machine is not acceptable, so the
  manager runs in a mount namespace of its own (`unshare --mount`) chrooted into a tmpfs holding a
  recursive bind mount of each top-level directory and an empty `visibility`: the same files everywhere
  else, and `/visibility` exists only for it, gone with its namespace when it exits. Needs root
  (CAP_SYS_ADMIN): the realk8s plane runs as root here.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from kubernetes import client

from .objects import ignoring

GROUP, VERSION = "visibility.kueue.x-k8s.io", "v1beta2"
API_SERVICE = f"{VERSION}.{GROUP}"
SERVICE = "kueue-visibility-server"

# $1: the (empty) directory the tmpfs root goes on; the rest: the command, run chrooted there
_ROOT_SCRIPT = r"""set -e
root="$1"; shift
mount -t tmpfs kubeview-kueue-root "$root"
for d in /*; do
  n="${d#/}"
  if [ -L "$d" ]; then ln -s "$(readlink "$d")" "$root/$n"
  elif [ -d "$d" ]; then mkdir "$root/$n"; mount --rbind "$d" "$root/$n"
  fi
done
mkdir "$root/visibility"
exec chroot "$root" "$@"
"""


def missing() -> str | None:
    """What running the manager with its own /visibility needs and lacks (None: nothing)."""
    tools = [t for t in ("unshare", "chroot", "mount") if shutil.which(t) is None]
    return f"{', '.join(tools)} (util-linux, coreutils)" if tools else None


def with_visibility_dir(argv: list[str], root: Path) -> list[str]:
    """`argv` run where `/visibility` is a directory of its own (see the module docstring)."""
    root.mkdir(parents=True, exist_ok=True)
    return ["unshare", "--mount", "--propagation", "private", "sh", "-c", _ROOT_SCRIPT, "kueue-visibility-root",
            str(root), *argv]


def config(port: int) -> dict:
    """The Configuration's `visibilityServer`: loopback only."""
    return {"visibilityServer": {"bindAddress": "127.0.0.1", "bindPort": port}}


def register(api_client: client.ApiClient, namespace: str, port: int) -> None:
    """The ExternalName Service and the APIService pointing the aggregator at the loopback port."""
    core = client.CoreV1Api(api_client)
    service = client.V1Service(metadata=client.V1ObjectMeta(name=SERVICE, namespace=namespace),
                               spec=client.V1ServiceSpec(type="ExternalName", external_name="localhost"))
    ignoring(409, lambda: core.create_namespaced_service(namespace, service))
    body = {"apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService", "metadata": {"name": API_SERVICE},
            "spec": {"group": GROUP, "version": VERSION, "insecureSkipTLSVerify": True,
                     "groupPriorityMinimum": 100, "versionPriority": 100,
                     "service": {"namespace": namespace, "name": SERVICE, "port": port}}}
    custom = client.CustomObjectsApi(api_client)
    ignoring(409, lambda: custom.create_cluster_custom_object("apiregistration.k8s.io", "v1", "apiservices", body))


def available(api_client: client.ApiClient) -> bool:
    """The aggregator reached the server (the APIService's Available condition True)."""
    try:
        svc = client.CustomObjectsApi(api_client).get_cluster_custom_object(
            "apiregistration.k8s.io", "v1", "apiservices", API_SERVICE)
    except client.ApiException:
        return False
    return any(c.get("type") == "Available" and c.get("status") == "True"
               for c in (svc.get("status") or {}).get("conditions") or ())


def unregister(api_client: client.ApiClient, namespace: str) -> None:
    """The APIService first: a registered group nobody serves makes discovery answer 503 for it."""
    ignoring(404, lambda: client.CustomObjectsApi(api_client).delete_cluster_custom_object(
        "apiregistration.k8s.io", "v1", "apiservices", API_SERVICE))
    ignoring(404, lambda: client.CoreV1Api(api_client).delete_namespaced_service(SERVICE, namespace))
