"""`kubeview --demo`: the embedded cluster in the README screenshots' state, read through the same model
the TUI and `kubeview snapshot --json` read; and the snapshot tables' titles at 80 and 140 columns."""

from __future__ import annotations

import argparse
import io
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from rich.console import Console

from kubeview import cli
from kubeview.cluster.local.demo import DEMO_PENDING, DEMO_POLICY, open_demo
from kubeview.cluster.local.source import LocalSource
from kubeview.cluster.select import open_source, wants_kube
from kubeview.cluster.source import SourceError
from kubeview.commands.snapshot import print_tables, sync
from kubeview.model.allocation import GPU
from kubeview.model.cluster import ClusterModel
from kubeview.model.views import PodView
from kubeview.scheduling.config import PackingConfig
from kubeview.scheduling.gang_fit import fit_gang

# 9 nodes since the time-sliced gpu-ts-1 (full: its 8 replicas held) and the MIG node gpu-mig-1 (no
# nvidia.com/gpu: a mapped resource it lacks, so "cannot allocate all claims") joined the demo (#35)
NO_GPU = ("0/9 nodes are available: 1 Insufficient memory, 3 Insufficient cpu, 3 Insufficient nvidia.com/gpu, "
          "3 cannot allocate all claims.")
NO_CPU = "0/9 nodes are available: 3 Insufficient cpu, 6 node(s) had untolerated taint(s)."


def args(**kw: object) -> argparse.Namespace:
    base = {"local": False, "demo": False, "kubeconfig": None, "context": None, "namespace": None, "cluster": None}
    return argparse.Namespace(**{**base, **kw})


@pytest.fixture(scope="module")
def demo() -> Iterator[tuple[LocalSource, ClusterModel]]:
    """`--demo` opened as every command opens it, and the model a client builds from its first list."""
    source = open_source(args(demo=True))
    try:
        assert isinstance(source, LocalSource)
        yield source, sync(source)
    finally:
        source.close()


def test_demo_reaches_the_screenshots_state(demo: tuple[LocalSource, ClusterModel]) -> None:
    source, model = demo
    assert source.packing.policy == DEMO_POLICY == "spread"
    pending = {p.key[1] if p.key[0] == "training" else p.key[0]: p for p in model.pending()}
    # the third training pod fits nowhere although 4 GPUs are free: one on each GPU node, both kinds
    assert pending["train-c"].pending_reason == NO_GPU
    placed = {name: model.pods[("training", name)].node for name in ("train-a", "train-b")}
    assert sorted(placed.values()) == ["gpu-node-1", "gpu-node-2"]
    frag = model.fragmentation(GPU)
    assert (frag.free_total, frag.largest_fit) == (4, 1)
    # 24 consumers at 1000m: 21 Running on the three cpu nodes, 3 Pending for cpu
    consumers = [p for p in model.pods.values() if p.namespace == "batch"]
    assert len(consumers) == 24 and sum(p.phase == "Running" for p in consumers) == 21
    batch = [p for p in model.pending() if p.namespace == "batch"]
    assert len(batch) == 3 and {p.pending_reason for p in batch} == {NO_CPU}
    assert model.pending_count() == DEMO_PENDING == 4 + 5  # and the two gangs' members (test_demo_gang_*)
    assert (model.workloads[("ReplicaSet", "batch", "consumer")].ready,
            model.workloads[("ReplicaSet", "batch", "consumer")].desired) == (21, 24)
    assert model.workloads[("Deployment", "default", "web")].ready == 2  # something to scale
    items = model.jobs.jobs[("jobs", "work-items")]  # 3,600 work items, waiting for `z`
    assert (items.state, items.completions, items.parallelism, items.indexed, items.active) == (
        "Suspended", 3600, 24, True, 0)
    # settled: every bound pod runs a real process
    bound = [p for p in model.pods.values() if p.node]
    assert all(p.phase == "Running" for p in bound)
    demo_pods = [k for k in source.pids() if k[0] in ("training", "batch", "default")]
    assert len(demo_pods) == 2 + 21 + 2
    assert sorted(k for k in source.pids() if k[0] == "inference") == [
        ("inference", "embed"), ("inference", "llm-0"), ("inference", "rerank-0"), ("inference", "rerank-1")]


def test_demo_shows_dra_gpus_beside_device_plugin_ones(demo: tuple[LocalSource, ClusterModel]) -> None:
    """Two DRA nodes beside the device-plugin ones: a template-claim pod holds a full H100, a plain
    `nvidia.com/gpu: 1` pod a MIG slice through the scheduler's claim; one ledger counts both kinds."""
    source, model = demo
    a = model.allocation()
    col = a.column(GPU)
    gpus = {n: (int(a.allocatable[i, col]), int(a.requested[i, col])) for i, n in enumerate(a.nodes)}
    assert {n: g for n, g in gpus.items() if g[0]} == {"gpu-node-1": (2, 1), "gpu-node-2": (2, 1),
                                                        "dra-node-1": (2, 1), "dra-mig-node-1": (2, 1),
                                                        "gpu-ts-1": (8, 8)}  # time-sliced replicas, all held
    llm, embed = model.pods[("inference", "llm-0")], model.pods[("inference", "embed")]
    assert (llm.node, llm.phase, embed.node, embed.phase) == ("dra-node-1", "Running", "dra-mig-node-1", "Running")
    held = {(d.device.node, d.device.name): (d.claim, d.pods) for ng in model.gpus.nodes().values()
            for d in ng.devices if d.state == "allocated"}
    (llm_claim, llm_pods), = [v for k, v in held.items() if k[0] == "dra-node-1"]
    assert llm_claim[1].startswith("llm-0-gpu-") and llm_pods == ("llm-0",)
    ((node, device), (embed_claim, _)), = [(k, v) for k, v in held.items() if k[0] == "dra-mig-node-1"]
    assert device.startswith("gpu-0-mig-3g40gb-") and embed_claim[1].startswith("embed-extended-resources-")
    pod = source.get("Pod", "inference", "llm-0")
    assert pod["status"]["resourceClaimStatuses"] == [{"name": "gpu", "resourceClaimName": llm_claim[1]}]
    assert "nvidia.com/gpu" not in embed.requests  # served by the claim: counted once, as the device


def test_snapshot_json_demo_is_the_same_state(demo: tuple[LocalSource, ClusterModel],
                                              capsys: pytest.CaptureFixture[str]) -> None:
    """`kubeview snapshot --json --demo` in-process: same pending pods, same names (the seed is fixed)."""
    assert cli.main(["snapshot", "--json", "--demo"]) == 0
    doc = json.loads(capsys.readouterr().out)
    pending = {(p["namespace"], p["name"]): p["pendingReason"] for p in doc["pods"] if p["node"] is None}
    _, model = demo
    assert pending == {p.key: p.pending_reason for p in model.pending()}
    assert doc["fragmentation"]["freeTotal"] == 4 and doc["fragmentation"]["largestFit"] == 1
    assert sorted(c["name"].rsplit("-", 1)[0] for c in doc["dra"]["claims"]) == ["embed-extended-resources", "llm-0-gpu"]


def test_demo_is_a_local_cluster_option(tmp_path: Path) -> None:
    kubeconfig = str(tmp_path / "config")
    assert not wants_kube(args(demo=True, kubeconfig=kubeconfig))  # --demo means the embedded cluster
    for flag, extra in (("--context lab", {"context": "lab"}), ("-n render", {"namespace": "render"})):
        with pytest.raises(SourceError, match=f"{flag} is for a real cluster, but --demo asks for the embedded one"):
            wants_kube(args(demo=True, **extra))
    with pytest.raises(SourceError, match="--demo runs the bundled cluster, not --cluster x.yaml"):
        wants_kube(args(demo=True, cluster="x.yaml"))


def test_demo_refusal_is_one_line_and_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    """Conflicting options: a usage error, exit 2 (issue 42 item 9; it was 1)."""
    assert cli.main(["snapshot", "--demo", "--context", "lab"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--demo asks for the embedded one" in err


@pytest.mark.parametrize("width", [80, 140])
def test_snapshot_titles_stay_on_one_line(demo: tuple[LocalSource, ClusterModel], width: int) -> None:
    """The fragmentation title used to wrap to its narrow table's width ("largest fit" / "1")."""
    out = io.StringIO()
    print_tables(demo[1], Console(file=out, width=width, soft_wrap=False, highlight=False, color_system=None))
    lines = out.getvalue().splitlines()
    assert "GPU fragmentation  4 free on 5 nodes, largest fit 1" in lines  # gpu-ts-1: no replica free
    for title in ("Cluster totals", "Pending pods", "Workloads", "gpu-node-1  Ready  pods 4  largest GPU fit 1"):
        assert title in lines
    assert max(len(line) for line in lines) <= width


def test_snapshot_table_says_a_size_no_node_has_never_fits(demo: tuple[LocalSource, ClusterModel]) -> None:
    """2-GPU nodes: two 2-GPU pods are lost to fragmentation (1 free on each); a 4-GPU pod no longer
    "never fits": gpu-ts-1 advertises 8 (time-sliced replicas, all held), the scheduler's figure."""
    out = io.StringIO()
    print_tables(demo[1], Console(file=out, width=120, soft_wrap=False, highlight=False, color_system=None))
    rows = {line.split("│")[0].strip(): [c.strip() for c in line.split("│")[1:]]
            for line in out.getvalue().splitlines() if line.count("│") == 3}
    assert rows["2"] == ["0", "2", "2"]
    assert rows["4"] == ["0", "0", "0"]


def test_demo_gang_blocked_by_fragmentation(demo: tuple[LocalSource, ClusterModel]) -> None:
    """vision/allreduce, 2 x 2 GPUs: 4 GPUs free in total, one per node; neither worker is bound, and the
    group and its members say so in kube-scheduler 1.37's words."""
    source, model = demo
    workers = [model.pods[("vision", f"allreduce-{i}")] for i in range(2)]
    assert [w.node for w in workers] == [None, None]
    # the first fits nowhere; the cycle stops there, and the second, never tried, carries the group's words
    assert [w.pending_reason for w in workers] == [NO_GPU, "minCount (2) cannot be satisfied: 0 scheduled, 1 remaining"]
    (cond,) = source.get("PodGroup", "vision", "allreduce-workers")["status"]["conditions"]
    assert (cond["type"], cond["status"], cond["reason"]) == ("PodGroupInitiallyScheduled", "False", "Unschedulable")
    frag = model.fragmentation(GPU)
    assert (frag.free_total, frag.largest_fit) == (4, 1)  # enough in total, not on any one node
    fit = fit_gang(model.allocation(), [PodView.from_api(source.get("Pod", "vision", f"allreduce-{i}"))
                                        for i in range(2)], 2, source.packing)
    assert not fit.fits and fit.room == 0


def test_demo_gang_fits_under_pack() -> None:
    """vision/etl (two 1-cpu readers, a 5-cpu writer, minCount 3) on the GPU nodes' spare cpu: under the
    demo's `spread` the readers split and the writer fits nowhere, so none is bound; switched to `pack`,
    the readers share a node and the whole gang binds at once."""
    source = open_demo()
    try:
        names = ("etl-reader-0", "etl-reader-1", "etl-writer")
        assert [source.get("Pod", "vision", n)["spec"].get("nodeName") for n in names] == [None] * 3
        source.set_packing(PackingConfig(policy="pack"))
        nodes = [source.get("Pod", "vision", n)["spec"].get("nodeName") for n in names]
        assert nodes[0] == nodes[1] and nodes[2] not in (None, nodes[0]), nodes
        (cond,) = source.get("PodGroup", "vision", "etl-stages")["status"]["conditions"]
        assert (cond["status"], cond["reason"]) == ("True", "Scheduled")
        assert all(source.get("Pod", "vision", f"allreduce-{i}")["spec"].get("nodeName") is None for i in range(2))
    finally:
        source.close()


def test_snapshot_json_demo_says_why_each_gang_waits(capsys: pytest.CaptureFixture[str]) -> None:
    """`kubeview snapshot --json --demo`: both gangs waiting, with the fit that says why (fragmentation:
    4 GPUs free, one per node; etl: room for 2 of 3 under spread, the GPU nodes saturated by cpu)."""
    assert cli.main(["snapshot", "--json", "--demo"]) == 0
    gangs = {g["name"]: g for g in json.loads(capsys.readouterr().out)["gangs"]}
    allreduce, etl = gangs["allreduce-workers"], gangs["etl-stages"]
    assert (allreduce["state"], allreduce["fit"]["fits"], allreduce["fit"]["room"]) == ("waiting", False, 0)
    assert allreduce["fit"]["summary"] == ("2 × 2 GPUs: room for 0 (largest free block per node: dra-mig-node-1 1, "
                                           "dra-node-1 1, gpu-node-1 1, gpu-node-2 1)")
    assert (etl["state"], etl["fit"]["room"], etl["fit"]["policy"]) == ("waiting", 2, "spread")
    assert etl["fit"]["saturated"] == {"gpu-node-1": {"Insufficient cpu": 1}, "gpu-node-2": {"Insufficient cpu": 1}}


def test_text_snapshot_has_the_jobs_and_gangs_of_the_json(demo: tuple[LocalSource, ClusterModel]) -> None:
    """Issue 42 item 11: `snapshot --json` had the demo's Job and gangs, the text tables left them out.
    The same facts, read from the same documents, in 80 columns."""
    from kubeview.cluster.packing import current_packing
    from kubeview.scheduling.waiting_fits import waiting_fits
    from kubeview.snapshot.document import build_snapshot

    source, model = demo
    fits = waiting_fits(model, current_packing(source, None)[0])
    doc = build_snapshot(model, gang_fits=fits)
    out = io.StringIO()
    print_tables(model, Console(file=out, width=80, soft_wrap=False, highlight=False, color_system=None),
                 gang_fits=fits)
    text = out.getvalue()
    lines = text.splitlines()
    rows = {line.split("│")[0].strip(): [c.strip() for c in line.split("│")[1:]] for line in lines if "│" in line}
    jobs = {f"{j['namespace']}/{j['name']}": j for j in doc["jobs"]}
    # two suspended (`z` starts each) and one held by training's quota (#40): running, no pod created
    assert sorted(jobs) == ["farm/frames", "jobs/work-items", "training/finetune"]
    for name, job in jobs.items():
        assert "Jobs" in lines and rows[name] == [
            job["state"], f"{job['succeeded']}/{job['completions']}", str(job["parallelism"]), str(job["active"]),
            str(job["failed"]), str(len(job["disrupted"]))]
    assert rows["jobs/work-items"] == ["Suspended", "0/3600", "24", "0", "0", "0"]
    assert rows["farm/frames"] == ["Suspended", "0/3600", "266", "0", "0", "0"]
    assert rows["training/finetune"] == ["Running", "0/4", "2", "0", "0", "0"]
    assert "Gangs" in lines
    for gang in doc["gangs"]:
        assert rows[f"{gang['namespace']}/{gang['name']}"] == [
            gang["kind"], gang["state"], f"{gang['counts']['placed']}/{gang['minCount']}",
            str(gang["counts"]["pending"]), f"room for {gang['fit']['room']}"]
    assert rows["vision/etl-stages"][-1] == "room for 2"
    assert max(len(line) for line in lines) <= 80


def test_the_training_team_is_at_its_gpu_quota_and_its_job_is_held(demo: tuple[LocalSource, ClusterModel]) -> None:
    """#40: the quota admission refuses finetune's pods in the API server's words while 4 GPUs are free;
    the quota's used (train-c counts while Pending) is what the quota controller writes."""
    source, model = demo
    quota = source.get("ResourceQuota", "training", "gpus")
    assert quota is not None and quota["status"]["used"] == {
        "requests.cpu": "6", "requests.memory": "24Gi", "requests.nvidia.com/gpu": "4"}
    assert not [p for p in source.pods("training") if p["metadata"]["name"].startswith("finetune-")]
    [event] = [e for e in model.events.for_object("Job", "training", "finetune") if e.reason == "FailedCreate"]
    assert event.type == "Warning" and event.source == "job-controller"
    assert event.message.startswith('Error creating: pods "finetune-0-')
    assert event.message.endswith('" is forbidden: exceeded quota: gpus, requested: requests.nvidia.com/gpu=1, '
                                  "used: requests.nvidia.com/gpu=4, limited: requests.nvidia.com/gpu=4")
