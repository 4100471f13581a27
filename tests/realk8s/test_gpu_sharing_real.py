"""Shared, partitioned and linked GPUs on the real plane (issue #35).

Nodes made from tests/fixtures/k8s/gpu-sharing (MIG mixed and single, time-slicing, renamed, MPS, AMD,
Intel, two NVLink cliques; kwok nodes carry any labels and extended resources), pods asking for each
GPU resource name, bound by the real kube-scheduler, in ROUNDS node sets and namespaces side by side.
Then: (a) `kubeview snapshot --metrics` prints the same allocatable and container-request series as the
real kube-state-metrics for every one of those names, and each node's requested figure is the sum of
KSM's request series; (b) snapshot's `gpus` section says what the units are made of (physical GPUs,
MIG profiles, replicas, the 2-replica warning, cliques and a ComputeDomain) as the labels say;
(c) `kubeview fit` places a MIG slice, refuses more slices than any node has free, and keeps a 4-GPU
Job inside one clique (`--within nvidia.com/gpu.clique`) until no clique has 4 free.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
import yaml
from kubernetes import client

from kubeview.snapshot.ksm import sanitize

from .gpu_sharing_objects import (
    ASKS,
    CD_CRD,
    CLIQUE,
    EXPECT,
    GPU_RESOURCES,
    SHAPES,
    add_round_nodes,
    clique_of,
    fill_cliques_to_three,
    install_compute_domain_crd,
    node_of,
    ns_of,
    put_compute_domain,
    round_pods,
)
from .ksm import KSM, parse, running_ksm
from .objects import api, ensure_namespace, wait_nodes_ready
from .plane import REPO, Plane
from .procs import wait_until

ROUNDS = 3
SHARED = {"kube_node_status_allocatable", "kube_pod_container_resource_requests"}
SANITIZED = {sanitize(r) for r in GPU_RESOURCES}
WARNED = {"time-sliced": "two-replicas", "mps": "mps-two"}  # shape -> the pod holding 2 shared units (intel-shared: apart, below)
PHYSICAL_APART = ("mig-mixed", "amd-cpx")


def _pods(core: client.CoreV1Api, ns: str) -> list[dict]:
    """The namespace's pods as the API server's JSON (dicts: no Optional attributes to step through)."""
    return [core.api_client.sanitize_for_serialization(p) for p in core.list_namespaced_pod(ns).items]


def _clique(core: client.CoreV1Api, node: str) -> str | None:
    return (core.api_client.sanitize_for_serialization(core.read_node(node))["metadata"].get("labels") or {}).get(CLIQUE)


def _bound(core: client.CoreV1Api, namespaces: list[str], want: int) -> bool:
    pods = [p for ns in namespaces for p in _pods(core, ns)]
    return len(pods) == want and all(p["spec"].get("nodeName") and p["status"].get("phase") == "Running" for p in pods)


def _each(fn: Callable[[Any], Any], items: Iterable[Any]) -> list[Any]:
    """fn over items from 8 threads: the rounds' objects reach the API server side by side."""
    with ThreadPoolExecutor(8) as pool:
        return list(pool.map(fn, items))


def _create_and_bind(core: client.CoreV1Api, pods: list[dict], namespaces: list[str], total: int) -> None:
    _each(lambda p: core.create_namespaced_pod(p["metadata"]["namespace"], p), pods)
    wait_until(lambda: _bound(core, namespaces, total), 60, f"{total} pods bound by kube-scheduler and Running",
               interval=0.2)


@pytest.fixture(scope="module")
def gs(plane: Plane, realk8s_counts: dict[str, str]) -> Iterator[client.CoreV1Api]:
    start = time.monotonic()
    core = client.CoreV1Api(api(plane.kubeconfig))
    spaces = [ns_of(r) for r in range(ROUNDS)]
    _each(lambda ns: ensure_namespace(core, ns), spaces)
    nodes = [n for names in _each(lambda r: add_round_nodes(core, r), range(ROUNDS)) for n in names]
    install_compute_domain_crd(plane)
    wait_nodes_ready(core, nodes)
    pods = [p for r in range(ROUNDS) for p in round_pods(r)]
    _create_and_bind(core, pods, spaces, len(pods))
    realk8s_counts["gpu-sharing placed"] = f"{len(pods)} pods on {len(nodes)} nodes in {time.monotonic() - start:.1f} s"
    for r in range(ROUNDS):  # the scheduler honoured every selector (a clique's pods on that clique's nodes)
        for p in _pods(core, ns_of(r)):
            name, spec = p["metadata"]["name"], p["spec"]
            want = {node_of(r, "nvl72-a-0"), node_of(r, "nvl72-a-1")} if name.startswith("clique-a") \
                else {spec["nodeSelector"]["kubernetes.io/hostname"]}
            assert spec["nodeName"] in want, (name, spec["nodeName"])
    put_compute_domain(client.CustomObjectsApi(core.api_client), ns_of(0),
                       [node_of(0, "nvl72-a-0"), node_of(0, "nvl72-a-1")], clique_of(0, "a"))
    yield core
    for ns in spaces:
        core.delete_collection_namespaced_pod(ns, grace_period_seconds=0)
        core.delete_namespace(ns)
    for n in nodes:
        core.delete_node(n)
    plane.kubectl("delete", "--wait=false", f"crd/{CD_CRD}", check=False)


@pytest.fixture(scope="module")
def ksm(plane: Plane, gs) -> Iterator[KSM]:  # noqa: ARG001
    yield from running_ksm(plane)


def _kubeview(plane: Plane, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "kubeview", *args, "--kubeconfig", str(plane.kubeconfig)],
                          capture_output=True, text=True, timeout=120, cwd=REPO)


def _ours(series: set) -> set:
    nodes = {node_of(r, s) for r in range(ROUNDS) for s in SHAPES}
    spaces = {ns_of(r) for r in range(ROUNDS)}
    return {s for s in series if (dict(s[1]).get("namespace") in spaces if "pod" in dict(s[1])
                                  else dict(s[1]).get("node") in nodes)}


def test_a_metrics_equal_ksm_for_every_gpu_name(plane: Plane, ksm: KSM, realk8s_counts: dict[str, str]) -> None:
    out = _kubeview(plane, "snapshot", "--metrics")
    assert out.returncode == 0, out.stderr
    ours = _ours(parse(out.stdout, SHARED))
    asked = {sanitize(resource) for _, resource, _, _ in ASKS}
    for metric, names in (("kube_node_status_allocatable", SANITIZED), ("kube_pod_container_resource_requests", asked)):
        named = {dict(s[1])["resource"] for s in ours if s[0] == metric}
        assert named >= names, (metric, sorted(names - named))
    ksm.wait_same(ours, SHARED, _ours)
    realk8s_counts["gpu-sharing KSM series"] = f"{len(ours)} ({len(SANITIZED)} GPU resource names)"


@pytest.fixture(scope="module")
def doc(plane: Plane, ksm: KSM) -> dict:  # noqa: ARG001
    out = _kubeview(plane, "snapshot", "--json")
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def test_a_node_requested_is_the_sum_of_ksm_requests(doc: dict, ksm: KSM) -> None:
    want: dict[tuple[str, str], float] = defaultdict(float)
    for _, labels, value in _ours(parse(ksm.scrape(), {"kube_pod_container_resource_requests"})):
        want[(dict(labels)["node"], dict(labels)["resource"])] += value
    by_name = {n["name"]: n for n in doc["nodes"]}
    for r in range(ROUNDS):
        for shape in SHAPES:
            node = by_name[node_of(r, shape)]
            for resource, figures in node["resources"].items():
                if sanitize(resource) in SANITIZED:
                    assert figures["requested"] == want.get((node["name"], sanitize(resource)), 0), (node["name"], resource)


def test_b_gpus_section_says_what_the_units_are_made_of(doc: dict, gs: client.CoreV1Api) -> None:
    gpus = {g["node"]: g for g in doc["gpus"]["nodes"]}
    for r in range(ROUNDS):
        for shape, (fields, offers) in EXPECT.items():
            g = gpus[node_of(r, shape)]
            assert {k: g[k] for k in fields} == fields, (g["node"], g)
            got = {o["resource"]: (o["kind"], o["profile"], o["advertised"], o["allocated"], o["physical"], o["replicas"])
                   for o in g["offers"]}
            if shape in PHYSICAL_APART:  # the offers' physical apart: the tests after this one
                got = {k: (*v[:4], None, v[5]) for k, v in got.items()}
            assert got == offers, g["node"]
            assert all(o["source"] == "device-plugin" and o["free"] == o["advertised"] - o["allocated"] for o in g["offers"])
            warned = [w for w in g["warnings"] if WARNED.get(shape, "-") in w]
            if shape != "intel-shared":
                assert len(warned) == (shape in WARNED) and len(g["warnings"]) == len(warned), g["warnings"]
        for which, held in (("a", 2), ("b", 0)):
            members = [gpus[node_of(r, f"nvl72-{which}-{i}")] for i in range(2)]
            assert {(m["clique"], m["physical"], m["product"]) for m in members} == {(clique_of(r, which), 4, "NVIDIA-GB200")}
            assert sum(o["allocated"] for m in members for o in m["offers"]) == held
    domains = {(d["source"], d["name"]): d for d in doc["gpus"]["domains"]}
    for r in range(ROUNDS):
        for which, free in (("a", 6), ("b", 8)):
            d = domains[("clique", clique_of(r, which))]
            assert (d["nodes"], d["gpus"], d["free"], d["largestJob"]) == \
                ([node_of(r, f"nvl72-{which}-0"), node_of(r, f"nvl72-{which}-1")], 8, free, free)
    cd = domains[("ComputeDomain", f"{ns_of(0)}/nvl-train")]
    assert (cd["nodes"], cd["gpus"], cd["free"]) == ([node_of(0, "nvl72-a-0"), node_of(0, "nvl72-a-1")], 8, 6)
    assert doc["gpus"]["physical"]["free"] is None  # shared GPUs: no exact count of free physical GPUs
    ours = sum(gpus[node_of(r, shape)]["physical"] or 0 for r in range(ROUNDS) for shape in SHAPES)
    assert doc["gpus"]["physical"]["total"] >= ours, (doc["gpus"]["physical"], ours)
    for vendor in ("amd", "intel"):  # only this module's nodes have them: whole-GPU and replica units, every round
        units = [o for f, offers in EXPECT.values() if f["vendor"] == vendor for o in offers.values()
                 if o[0] not in ("mig", "partition")]
        assert doc["gpus"]["vendors"][vendor] == {"advertised": sum(o[2] for o in units) * ROUNDS,
                                                  "allocated": sum(o[3] for o in units) * ROUNDS}


def test_b_mixed_profiles_physical_is_unknown(doc: dict) -> None:
    """On a mixed node carved into several profiles the labels say how many slices of each, not which
    GPUs hold them: 2 `3g.20gb` are 2 GPUs under all-balanced, 1 under all-3g.20gb. So each offer's
    physical is null (the node's is `nvidia.com/gpu.count`, 2)."""
    gpus = {g["node"]: g for g in doc["gpus"]["nodes"]}
    got = {(r, o["resource"]): o["physical"] for r in range(ROUNDS) for o in gpus[node_of(r, "mig-mixed")]["offers"]}
    assert set(got.values()) == {None}, got


def test_b_amd_partitions_are_not_gpus(doc: dict) -> None:
    """8 MI300X in CPX-NPS4 advertise 64 `amd.com/cpx_nps4` and the labeller counts 64 in family AI
    (it counts the partitions too); the physical GPUs are 8, or unknown, never 64."""
    gpus = {g["node"]: g for g in doc["gpus"]["nodes"]}
    got = {(r, what): value for r in range(ROUNDS) for what, value in
           [("node", gpus[node_of(r, "amd-cpx")]["physical"])] + [(o["resource"], o["physical"])
                                                                   for o in gpus[node_of(r, "amd-cpx")]["offers"]]}
    assert set(got.values()) <= {None, 8}, got


def test_b_intel_shared_two_units_warned(doc: dict) -> None:
    """-shared-dev-num=4: 8 units of 2 GPUs; a pod holding 2 units may hold one GPU twice, as a
    time-sliced pod with 2 replicas may."""
    gpus = {g["node"]: g for g in doc["gpus"]["nodes"]}
    for r in range(ROUNDS):
        warnings = gpus[node_of(r, "intel-shared")]["warnings"]
        assert len(warnings) == 1 and f"{ns_of(r)}/intel-two" in warnings[0], warnings


def _manifest(tmp: Path, name: str, obj: dict) -> str:
    (tmp / name).write_text(yaml.safe_dump(obj))
    return str(tmp / name)


def _job(ns: str, pods: int) -> dict:
    res = {"cpu": "100m", "memory": "64Mi", "nvidia.com/gpu": "1"}
    affinity = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
        {"matchExpressions": [{"key": CLIQUE, "operator": "Exists"}]}]}}}
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "nvl-job", "namespace": ns},
            "spec": {"parallelism": pods, "completions": pods, "template": {"spec": {
                "restartPolicy": "Never", "affinity": affinity, "nodeSelector": {"type": "kwok"},
                "containers": [{"name": "c", "image": "x", "resources": {"requests": res, "limits": res}}]}}}}


def _placed(out: subprocess.CompletedProcess) -> list[str]:
    return [p["node"] for u in json.loads(out.stdout)["units"] for p in u["placement"]]


@pytest.fixture(scope="module")
def slice_fits(plane: Plane, gs, doc: dict, tmp_path_factory: pytest.TempPathFactory) -> dict:  # noqa: ARG001
    """`kubeview fit` of a pod asking 1 `1g.5gb` slice (--json) and of one asking 2 (text)."""
    tmp = tmp_path_factory.mktemp("fit")
    slice_pod = round_pods(0, [("fit-slice", "nvidia.com/mig-1g.5gb", 1, "mig-mixed")])[0]
    del slice_pod["spec"]["nodeSelector"]["kubernetes.io/hostname"]
    one = _kubeview(plane, "fit", _manifest(tmp, "one.yaml", slice_pod), "--json")
    slice_pod["spec"]["containers"][0]["resources"] = {k: {"nvidia.com/mig-1g.5gb": "2"} for k in ("requests", "limits")}
    return {"one": one, "two": _kubeview(plane, "fit", _manifest(tmp, "two.yaml", slice_pod))}


def test_c_fit_mig_slices(slice_fits: dict) -> None:
    one, two = slice_fits["one"], slice_fits["two"]
    assert one.returncode == 0, one.stdout + one.stderr
    assert [n.endswith("-mig-mixed") for n in _placed(one)] == [True], one.stdout  # each has 1 of 4 free
    assert two.returncode == 1 and "nvidia.com/mig-1g.5gb" in two.stdout, two.stdout + two.stderr


def test_c_fit_summary_names_the_slices(slice_fits: dict) -> None:
    summary = slice_fits["two"].stdout.splitlines()[2]  # policy line, unit line, then the pods' summary
    assert "no requests" not in summary and "1g.5gb" in summary, slice_fits["two"].stdout


def test_c_fit_within_one_clique(plane: Plane, gs: client.CoreV1Api, slice_fits: dict, tmp_path: Path) -> None:  # noqa: ARG001
    """Last: it fills the cliques."""
    job = _manifest(tmp_path, "job.yaml", _job(ns_of(0), 4))
    within = _kubeview(plane, "fit", job, "--within", CLIQUE, "--json")
    assert within.returncode == 0, within.stdout + within.stderr
    cliques = {_clique(gs, n) for n in _placed(within)}
    assert len(_placed(within)) == 4 and len(cliques) == 1 and None not in cliques, (_placed(within), cliques)

    spaces = [ns_of(r) for r in range(ROUNDS)]
    fill = [p for r in range(ROUNDS) for p in fill_cliques_to_three(r)]
    total = sum(len(_pods(gs, ns)) for ns in spaces) + len(fill)
    _create_and_bind(gs, fill, spaces, total)
    refused = _kubeview(plane, "fit", job, "--within", CLIQUE)
    assert refused.returncode == 1 and CLIQUE in refused.stdout, refused.stdout + refused.stderr
    anywhere = _kubeview(plane, "fit", job, "--json")  # 3 + 3 free across two cliques: fits without --within
    assert anywhere.returncode == 0 and len({_clique(gs, n) for n in _placed(anywhere)}) > 1, \
        anywhere.stdout
