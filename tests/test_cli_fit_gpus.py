"""`kubeview fit` in the units GPUs come in (#35), as a subprocess on an embedded cluster with two NVLink
cliques, a MIG node and a time-sliced node (tests/data/fit/gpu-cluster.yaml): a Job of 4 × 1 GPU
inside one clique (`--within nvidia.com/gpu.clique`, or Kueue's podset-required-topology annotation),
5 that fit the cluster but no one clique, a `mig-1g.10gb` request answered in slices, and two
time-sliced replicas flagged as possibly one physical GPU."""

from __future__ import annotations

import json
from pathlib import Path

from test_cli_options import kubeview

CLUSTER = str(Path(__file__).resolve().parent / "data" / "fit" / "gpu-cluster.yaml")
CLIQUE = "nvidia.com/gpu.clique"
A, B = "6e1f0f6c-0b3c-4b8a-9d3e-1c2a3b4c5d6e.1", "6e1f0f6c-0b3c-4b8a-9d3e-1c2a3b4c5d6e.2"


def job(n: int, annotation: str | None = None) -> str:
    notes = f"\n    metadata:\n      annotations: {{kueue.x-k8s.io/podset-required-topology: {annotation}}}" if annotation else ""
    return (f"apiVersion: batch/v1\nkind: Job\nmetadata: {{name: train}}\nspec:\n  parallelism: {n}\n  completions: {n}\n"
            f"  template:{notes}\n    spec:\n      restartPolicy: Never\n      containers:\n      - name: c\n        image: x\n"
            f"        resources: {{limits: {{nvidia.com/gpu: 1}}}}\n")


def pod(requests: str, extra: str = "") -> str:
    return (f"apiVersion: v1\nkind: Pod\nmetadata: {{name: one}}\nspec:\n{extra}  containers:\n  - name: c\n    image: x\n"
            f"    resources: {{limits: {{{requests}}}}}\n")


def fit(tmp_path: Path, manifest: str, *args: str):
    (tmp_path / "m.yaml").write_text(manifest)
    return kubeview(tmp_path, "fit", "m.yaml", "--cluster", CLUSTER, *args)


def test_four_gpus_inside_one_nvlink_domain(tmp_path: Path) -> None:
    out = fit(tmp_path, job(4), "--within", CLIQUE, "--json")
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    w = doc["within"]
    assert (w["key"], w["domain"], w["fits"], w["outside"]) == (CLIQUE, A, True, 3)  # cpu-1, mig-1, ts-1
    assert {d["name"]: (d["placed"], d["freeGpus"]) for d in w["domains"]} == {A: (4, 4), B: (3, 3)}
    (unit,) = doc["units"]
    assert sorted({p["node"] for p in unit["placement"]}) == ["nvl-a-1", "nvl-a-2"]
    text = fit(tmp_path, job(4), "--within", CLIQUE)
    assert text.returncode == 0 and f"within: inside {CLIQUE}={A} (2 domains, 1 holds it;" in text.stdout


def test_five_fit_the_cluster_but_no_one_domain(tmp_path: Path) -> None:
    assert fit(tmp_path, job(5)).returncode == 0  # 7 GPUs across the cliques
    out = fit(tmp_path, job(5), "--within", CLIQUE)
    assert out.returncode == 1, out.stdout
    assert (f"within: no one {CLIQUE} domain holds all 5 pods: the closest is {A} with room for 4 "
            "(4 GPUs free there, 2 domains tried)") in out.stdout


def test_kueues_required_topology_annotation_asks_for_the_same(tmp_path: Path) -> None:
    out = fit(tmp_path, job(5, CLIQUE))
    assert out.returncode == 1
    assert "(Kueue's podset-required-topology on Job train)" in out.stdout
    assert fit(tmp_path, job(3, CLIQUE), "--json").returncode == 0
    doc = json.loads(fit(tmp_path, job(3, CLIQUE), "--json").stdout)
    assert doc["within"]["domain"] == B and doc["within"]["askedBy"] == "Job train"  # best fit: the smaller one


def test_a_mig_slice_request_is_answered_in_slices(tmp_path: Path) -> None:
    out = fit(tmp_path, pod("nvidia.com/mig-1g.10gb: 1"))
    assert out.returncode == 0, out.stdout + out.stderr
    assert "  one -> mig-1" in out.stdout
    assert ("note: nvidia.com/mig-1g.10gb counts MIG 1g.10gb slices, not GPUs: 7 free on 1 node, at most 7 on one "
            "(mig-1)") in out.stdout
    more = fit(tmp_path, pod("nvidia.com/mig-1g.10gb: 8"), "--json")
    assert more.returncode == 1
    (unit,) = json.loads(more.stdout)["units"]
    assert "Insufficient nvidia.com/mig-1g.10gb" in unit["members"][0]["message"]


def test_two_time_sliced_replicas_may_be_one_gpu(tmp_path: Path) -> None:
    tolerate = ("  nodeSelector: {nvidia.com/gpu.sharing-strategy: time-slicing}\n"
                "  tolerations: [{key: kubeview.test/shared, operator: Exists}]\n")
    out = fit(tmp_path, pod("nvidia.com/gpu: 2", tolerate))
    assert out.returncode == 0, out.stdout + out.stderr
    assert ("note: ts-1 is shared (8 advertised = 2 physical × 4 (time-slicing)): 2 replicas of nvidia.com/gpu "
            "may be one physical GPU") in out.stdout


def test_a_label_no_node_has_is_no_domain(tmp_path: Path) -> None:
    out = fit(tmp_path, job(1), "--within", "example.com/rack")
    assert out.returncode == 1
    assert out.stdout.splitlines()[1] == "within: no node has the label example.com/rack: there is no domain to fit inside"
    assert "Job default/train" not in out.stdout  # nothing placed outside a domain


def test_gpu_resource_names_are_configurable(tmp_path: Path) -> None:
    import subprocess
    import sys

    from test_cli_options import _env

    def snap(spec: str) -> subprocess.CompletedProcess[str]:
        env = {**_env(tmp_path), "KUBEVIEW_GPU_RESOURCES": spec}
        return subprocess.run([sys.executable, "-m", "kubeview", "snapshot", "--json", "--cluster", CLUSTER],
                              capture_output=True, text=True, timeout=60, env=env, cwd=tmp_path)

    bad = snap("gpu")
    assert bad.returncode == 2 and bad.stderr == (
        "kubeview: KUBEVIEW_GPU_RESOURCES: 'gpu' is not an extended resource name (domain/name, e.g. amd.com/gpu)\n")
    only_mig = json.loads(snap("nvidia.com/mig-*").stdout)["gpus"]
    assert [n["node"] for n in only_mig["nodes"]] == ["mig-1"]  # nvidia.com/gpu is no GPU now
    default = json.loads(snap("").stdout)["gpus"]
    assert [n["node"] for n in default["nodes"]] == ["mig-1", "nvl-a-1", "nvl-a-2", "nvl-b-1", "nvl-b-2", "ts-1"]


def gang_job(n: int, key: str = CLIQUE) -> str:
    """A Job asking for a gang of its parallelism inside one domain of `key` (1.37 WorkloadWithJob +
    TopologyAwareWorkloadScheduling: the Job controller copies the constraint into its PodGroup)."""
    return job(n).replace("spec:\n  parallelism", f"spec:\n  scheduling: {{schedulingPolicy: {{gang: {{minCount: {n}}}}}, "
                          f"schedulingConstraints: {{topology: [{{key: {key}}}]}}}}\n  parallelism", 1)


def test_a_gangs_topology_constraint_applies_by_itself_and_within_must_agree(tmp_path: Path) -> None:
    out = fit(tmp_path, gang_job(5))
    assert out.returncode == 1, out.stdout + out.stderr
    assert f"within: no one {CLIQUE} domain holds all 5 pods" in out.stdout
    assert "(the topology constraint of Job train)" in out.stdout
    doc = json.loads(fit(tmp_path, gang_job(4), "--json", "--within", CLIQUE).stdout)  # the same label: fine
    assert doc["within"]["domain"] == A and doc["within"]["askedBy"] == "Job train"
    other = fit(tmp_path, gang_job(4), "--within", "kubernetes.io/hostname")
    assert other.returncode == 2 and f"disagrees with Job train's topology key {CLIQUE}" in other.stderr
    refused = json.loads(fit(tmp_path, gang_job(5), "--json").stdout)
    assert refused["units"][0]["message"] == ("pod group is unschedulable, 0/2 placements are available, first placement "
                                             "status: minCount (5) cannot be satisfied: 4 scheduled, 0 remaining")
