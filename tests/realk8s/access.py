"""What a ServiceAccount may do, asked of the real authorizer (SubjectAccessReview as the admin),
and what kubeview's kube source actually reads (from its own tables, so a new kind is checked
against every shipped role without editing the test).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import yaml
from kubernetes import client

from kubeview.cluster.kube import source as kube
from kubeview.cluster.kube.raw import PREFIX

# the kube source names its APIs by class name (kube/raw.py reads them by path): "/apis/apps/v1" -> "apps"
GROUP_OF_API = {name: prefix.split("/")[2] if prefix.startswith("/apis/") else "" for name, prefix in PREFIX.items()}


@dataclass(frozen=True)
class Ask:
    """One request's attributes, as `kubectl auth can-i VERB RESOURCE[/SUB] [NAME] -n NS` puts them."""

    verb: str
    resource: str  # "pods", "pods/binding", "deployments/scale"
    group: str = ""
    namespace: str = ""
    name: str = ""

    def __str__(self) -> str:
        where = f" -n {self.namespace}" if self.namespace else " (cluster-wide)"
        group = f".{self.group}" if self.group else ""
        res, _, sub = self.resource.partition("/")
        return f"{self.verb} {res}{group}{'/' + sub if sub else ''}{' ' + self.name if self.name else ''}{where}"


def allowed(authz: client.AuthorizationV1Api, namespace: str, sa: str, ask: Ask) -> bool:
    res, _, sub = ask.resource.partition("/")
    user = f"system:serviceaccount:{namespace}:{sa}"
    groups = ["system:serviceaccounts", f"system:serviceaccounts:{namespace}", "system:authenticated"]
    attrs = client.V1ResourceAttributes(verb=ask.verb, group=ask.group, resource=res, subresource=sub or None,
                                        namespace=ask.namespace or None, name=ask.name or None)
    review = client.V1SubjectAccessReview(spec=client.V1SubjectAccessReviewSpec(user=user, groups=groups,
                                                                                resource_attributes=attrs))
    return bool(authz.create_subject_access_review(review).status.allowed)


def source_reads(kinds: tuple[str, ...]) -> list[Ask]:
    """list and watch, cluster-wide, of every kind the kube source reads for `kinds` plus the DRA
    kinds (read on any cluster serving resource.k8s.io/v1, fatal when forbidden)."""
    asks = []
    for kind in (*kinds, *kube.DRA_API):
        plural, api_class = kube.KUBE_KINDS[kind].plural, kube.KUBE_KINDS[kind].api
        asks += [Ask("list", plural, GROUP_OF_API[api_class]), Ask("watch", plural, GROUP_OF_API[api_class])]
    return asks


def rbac_documents(*paths: Path) -> str:
    """The namespaces, ServiceAccounts, roles and bindings of these manifest files (no Deployments,
    ConfigMaps or Services: the plane has no images to run, and the roles are what is tested)."""
    keep = {"Namespace", "ServiceAccount", "Role", "ClusterRole", "RoleBinding", "ClusterRoleBinding"}
    docs = [d for p in paths for d in yaml.safe_load_all(p.read_text()) if d and d.get("kind") in keep]
    return yaml.safe_dump_all(docs)
