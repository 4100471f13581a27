"""What test_gpu_sharing_real.py puts on the plane: the nodes of tests/fixtures/k8s/gpu-sharing (one
set per round, each a kwok node with the fixture's labels and capacity), the pods that ask for each GPU
resource name, the ComputeDomain CRD and one ComputeDomain, and what kubeview should say of them.

Every round has its own nodes (`gs<round>-<fixture>`), namespace (`gs-r<round>`) and NVLink cliques
(clique ids 2r+1 and 2r+2 of the fixtures' cluster UUID: the format gpu-feature-discovery writes).
"""

from __future__ import annotations

import json

from kubernetes import client

from .objects import add_node
from .plane import REPO, Plane

FIXTURES = REPO / "tests" / "fixtures" / "k8s" / "gpu-sharing"
CLUSTER_UUID = "7b968a6d-c8aa-45e1-9e07-e1e51be99c31"
CLIQUE = "nvidia.com/gpu.clique"
SHAPES = ("mig-mixed", "mig-single", "time-sliced", "time-sliced-renamed", "mps", "amd", "amd-cpx", "intel",
          "intel-shared", "nvl72-a-0", "nvl72-a-1", "nvl72-b-0", "nvl72-b-1")
GPU_RESOURCES = ("nvidia.com/gpu", "nvidia.com/gpu.shared", "nvidia.com/mig-1g.5gb", "nvidia.com/mig-2g.10gb",
                 "nvidia.com/mig-3g.20gb", "amd.com/gpu", "amd.com/cpx_nps4", "gpu.intel.com/i915")
CD_CRD = "computedomains.resource.nvidia.com"


def ns_of(r: int) -> str:
    return f"gs-r{r}"


def node_of(r: int, shape: str) -> str:
    return f"gs{r}-{shape}"


def clique_of(r: int, which: str) -> str:
    """Round r's clique "a" or "b": `<clusterUUID>.<cliqueID>`."""
    return f"{CLUSTER_UUID}.{2 * r + (1 if which == 'a' else 2)}"


def fixture(name: str) -> dict:
    return json.loads((FIXTURES / name).read_text())


def add_round_nodes(core: client.CoreV1Api, r: int) -> list[str]:
    """Round r's nodes, made from the fixtures (capacity = allocatable, as the fixtures have it)."""
    names = []
    for shape in SHAPES:
        obj = fixture(f"node-{shape}.json")
        labels = {k: v for k, v in obj["metadata"]["labels"].items() if k != "kubernetes.io/hostname"}
        if CLIQUE in labels:
            labels[CLIQUE] = clique_of(r, shape.split("-")[1])
        assert obj["status"]["capacity"] == obj["status"]["allocatable"], shape
        add_node(core, node_of(r, shape), obj["status"]["capacity"], labels)
        names.append(node_of(r, shape))
    return names


def pod(ns: str, name: str, resource: str, units: int, selector: dict[str, str]) -> dict:
    res = {"cpu": "100m", "memory": "64Mi", resource: str(units)}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": ns},
            "spec": {"nodeSelector": {"type": "kwok", **selector}, "terminationGracePeriodSeconds": 0,
                     "containers": [{"name": "main", "image": "registry.k8s.io/pause:3.10",
                                     "resources": {"requests": res, "limits": dict(res)}}]}}


# (pod name, resource, units, node shape or clique "a"/"b"): what each round asks for
ASKS = [
    *[(f"mig-small-{i}", "nvidia.com/mig-1g.5gb", 1, "mig-mixed") for i in range(3)],
    ("mig-large", "nvidia.com/mig-3g.20gb", 1, "mig-mixed"),
    *[(f"mig-single-{i}", "nvidia.com/gpu", 1, "mig-single") for i in range(2)],
    *[(f"sliced-{i}", "nvidia.com/gpu", 1, "time-sliced") for i in range(5)],
    ("two-replicas", "nvidia.com/gpu", 2, "time-sliced"),
    *[(f"renamed-{i}", "nvidia.com/gpu.shared", 1, "time-sliced-renamed") for i in range(2)],
    *[(f"mps-{i}", "nvidia.com/gpu", 1, "mps") for i in range(2)],
    ("mps-two", "nvidia.com/gpu", 2, "mps"),  # a kubelet's device plugin would refuse it (MPS: >1 fails by default)
    ("amd-two", "amd.com/gpu", 2, "amd"),
    ("amd-one", "amd.com/gpu", 1, "amd"),
    *[(f"cpx-{i}", "amd.com/cpx_nps4", 1, "amd-cpx") for i in range(3)],
    ("intel-one", "gpu.intel.com/i915", 1, "intel"),
    *[(f"intel-shared-{i}", "gpu.intel.com/i915", 1, "intel-shared") for i in range(5)],
    ("intel-two", "gpu.intel.com/i915", 2, "intel-shared"),
    *[(f"clique-a-{i}", "nvidia.com/gpu", 1, "a") for i in range(2)],
]


def round_pods(r: int, asks: list[tuple[str, str, int, str]] = ASKS) -> list[dict]:
    out = []
    for name, resource, units, where in asks:
        selector = {CLIQUE: clique_of(r, where)} if where in ("a", "b") else {"kubernetes.io/hostname": node_of(r, where)}
        out.append(pod(ns_of(r), name, resource, units, selector))
    return out


def fill_cliques_to_three(r: int) -> list[dict]:
    """1-GPU pods that leave 3 free GPUs in each of round r's cliques (A: 8 - 2 held, B: 8)."""
    return round_pods(r, [*[(f"fill-a-{i}", "nvidia.com/gpu", 1, "a") for i in range(3)],
                          *[(f"fill-b-{i}", "nvidia.com/gpu", 1, "b") for i in range(5)]])


# per node shape: the node fields and offers (resource -> kind, profile, advertised, allocated, physical,
# replicas) snapshot's `gpus` must show after ASKS; physical per gpu-feature-discovery's labels
# (mig-single: no label says it, kubeview infers 14 1g.5gb slices / 7 per A100 = 2; mig-mixed offers: null,
# the labels do not say which GPUs hold a profile: 2 3g.20gb slices are 2 GPUs under all-balanced, 1 under
# all-3g.20gb)
EXPECT: dict[str, tuple[dict, dict[str, tuple]]] = {
    "mig-mixed": ({"vendor": "nvidia", "product": "A100-SXM4-40GB", "physical": 2, "sharing": None,
                   "migStrategy": "mixed", "clique": None},
                  {"nvidia.com/mig-1g.5gb": ("mig", "1g.5gb", 4, 3, None, 1),
                   "nvidia.com/mig-2g.10gb": ("mig", "2g.10gb", 2, 0, None, 1),
                   "nvidia.com/mig-3g.20gb": ("mig", "3g.20gb", 2, 1, None, 1)}),
    "mig-single": ({"vendor": "nvidia", "product": "A100-SXM4-40GB-MIG-1g.5gb", "physical": 2, "sharing": None,
                    "migStrategy": "single", "clique": None},
                   {"nvidia.com/gpu": ("mig", "1g.5gb", 14, 2, 2, 1)}),
    "time-sliced": ({"vendor": "nvidia", "product": "Tesla-T4", "physical": 2, "sharing": "time-slicing",
                     "replicas": 4, "migStrategy": None, "clique": None},
                    {"nvidia.com/gpu": ("shared", None, 8, 7, 2, 4)}),
    "time-sliced-renamed": ({"vendor": "nvidia", "product": "Tesla-T4", "physical": 2, "sharing": "time-slicing",
                             "replicas": 4, "migStrategy": None, "clique": None},
                            {"nvidia.com/gpu.shared": ("shared", None, 8, 2, 2, 4)}),
    "mps": ({"vendor": "nvidia", "product": "Tesla-T4", "physical": 2, "sharing": "mps", "replicas": 2,
             "migStrategy": None, "clique": None},
            {"nvidia.com/gpu": ("shared", None, 4, 4, 2, 2)}),
    "amd": ({"vendor": "amd", "product": "AMD_Instinct_MI300X", "physical": 8, "sharing": None, "migStrategy": None},
            {"amd.com/gpu": ("gpu", None, 8, 3, 8, 1)}),
    "intel": ({"vendor": "intel", "product": "Flex_170", "physical": 2, "sharing": None, "migStrategy": None},
              {"gpu.intel.com/i915": ("gpu", None, 2, 1, 2, 1)}),
    "intel-shared": ({"vendor": "intel", "product": "Flex_170", "physical": 2, "sharing": "shared", "replicas": 4,
                      "migStrategy": None},
                     {"gpu.intel.com/i915": ("shared", None, 8, 7, 2, 4)}),
    # physical: the labeller's counts include the partitions (64), so 8 is not on the Node: null (or 8
    # from MI300X's 8 partitions per GPU in CPX), checked apart in test_b_amd_partitions_are_not_gpus
    "amd-cpx": ({"vendor": "amd", "product": None, "sharing": None, "migStrategy": None},
                {"amd.com/cpx_nps4": ("partition", "cpx_nps4", 64, 3, None, 1)}),
}


def install_compute_domain_crd(plane: Plane) -> None:
    """NVIDIA's ComputeDomain CRD as its Helm chart ships it (the fixture), Established."""
    plane.kubectl("apply", "--server-side", "-f", str(FIXTURES / "computedomains-crd.yaml"))
    plane.kubectl("wait", "--for=condition=Established", "--timeout=60s", f"crd/{CD_CRD}")


def put_compute_domain(custom: client.CustomObjectsApi, ns: str, nodes: list[str], clique: str) -> object:
    """The fixture's ComputeDomain in `ns` over `nodes`; its status written through the status
    subresource, as the driver's controller writes it."""
    cd = fixture("computedomain-nvl-train.json")
    status = cd.pop("status")
    cd["metadata"]["namespace"] = ns
    for entry, name in zip(status["nodes"], nodes, strict=True):
        entry.update(name=name, cliqueID=clique)
    custom.create_namespaced_custom_object("resource.nvidia.com", "v1beta1", ns, "computedomains", cd)
    return custom.patch_namespaced_custom_object_status("resource.nvidia.com", "v1beta1", ns, "computedomains",
                                                        cd["metadata"]["name"], {"status": status})
