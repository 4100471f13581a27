#!/usr/bin/env python3
"""Record KAI-Scheduler, Kueue and Volcano gang objects from a gated plane into
tests/fixtures/k8s/batch-schedulers/.

    python scripts/record-batch-schedulers.py --crds DIR [OUTDIR]     # ~40 s

DIR holds the KAI-Scheduler and Volcano CRDs named in tests/fixtures/k8s/batch-schedulers/README.md
(scheduling.run.ai_podgroups.yaml, scheduling.run.ai_queues.yaml, scheduling.volcano.sh_podgroups.yaml,
scheduling.volcano.sh_queues.yaml); Kueue's come from its Go module (`go mod download`, Go module
proxy). The CRDs are installed on the realk8s gated plane, objects created through the API, their
statuses written through it (the status subresource where the CRD has one), and the answers saved.
None of the three schedulers runs: see the README for what is real and what we wrote.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from kubernetes import client  # noqa: E402

from tests.realk8s import batch_objects as b  # noqa: E402
from tests.realk8s.objects import add_node, api, ensure_namespace, wait_nodes_ready  # noqa: E402
from tests.realk8s.plane import Plane  # noqa: E402
from tests.realk8s.procs import wait_until  # noqa: E402
from tests.realk8s.recorder import Recorder, on_gated_plane  # noqa: E402

KUEUE_MODULE = "sigs.k8s.io/kueue@v0.17.0"
KUEUE_CRDS = ("workloads", "clusterqueues", "localqueues", "resourceflavors", "topologies")
OWN_CRDS = ("scheduling.run.ai_podgroups", "scheduling.run.ai_queues", "scheduling.volcano.sh_podgroups",
            "scheduling.volcano.sh_queues")
NODES = ("batch-node-1", "batch-node-2")
POOL = "batch"
MERGE = "application/merge-patch+json"


def kueue_crds() -> list[Path]:
    env = dict(os.environ, GOFLAGS="-mod=mod")
    out = subprocess.run(["go", "mod", "download", "-json", KUEUE_MODULE], capture_output=True, text=True,
                         env=env, check=True, cwd=tempfile.gettempdir())
    base = Path(json.loads(out.stdout)["Dir"]) / "config" / "components" / "crd" / "bases"
    return [base / f"kueue.x-k8s.io_{name}.yaml" for name in KUEUE_CRDS]


def install(plane: Plane, rec: Recorder, files: list[Path]) -> None:
    for f in files:
        plane.kubectl("apply", "--server-side", "-f", str(f))
    names = [f"crd/{p.stem.split('_', 1)[1]}.{p.stem.split('_', 1)[0]}" for p in files]
    plane.kubectl("wait", "--for=condition=Established", "--timeout=60s", *names)
    rec.say(f"installed {len(files)} CRDs: {', '.join(n[4:] for n in names)}")


def path(group_version: tuple[str, str], plural: str, ns: str | None = None, name: str = "") -> str:
    g, v = group_version
    where = f"/namespaces/{ns}" if ns else ""
    return f"/apis/{g}/{v}{where}/{plural}" + (f"/{name}" if name else "")


def create(rec: Recorder, gv, plural: str, ns: str | None, body: dict, save: str | None = None) -> dict:
    if save:
        return rec.save(save, "POST", path(gv, plural, ns), body, expect=201).body
    ans = rec.call("POST", path(gv, plural, ns), body)
    if ans.status != 201:
        raise SystemExit(f"create {plural} {body['metadata']['name']} -> {ans.status}: {ans.raw[:400]!r}")
    return ans.body


def write_status(rec: Recorder, gv, plural: str, ns: str | None, name: str, status: dict, save: str | None = None,
                 subresource: bool = True) -> None:
    """A merge patch of `status`, on /status where the CRD has that subresource (Volcano's PodGroup has
    none: its controller updates the object itself)."""
    p = path(gv, plural, ns, name) + ("/status" if subresource else "")
    if save:
        rec.save(save, "PATCH", p, {"status": status}, content_type=MERGE, expect=200)
    else:
        ans = rec.call("PATCH", p, {"status": status}, content_type=MERGE)
        if ans.status != 200:
            raise SystemExit(f"status of {plural}/{name} -> {ans.status}: {ans.raw[:400]!r}")


def bind(core: client.CoreV1Api, ns: str, name: str, node: str) -> None:
    """What KAI's binder and Volcano's scheduler do: a Binding through the pods/binding subresource."""
    target = client.V1ObjectReference(kind="Node", name=node)
    core.create_namespaced_binding(ns, client.V1Binding(metadata=client.V1ObjectMeta(name=name), target=target),
                                   _preload_content=False)


def running(core: client.CoreV1Api, ns: str, names: list[str]) -> bool:
    return all(core.read_namespaced_pod(n, ns).status.phase == "Running" for n in names)


def record_kai(rec: Recorder, core: client.CoreV1Api) -> None:
    ns = "kai"
    ensure_namespace(core, ns)
    rec.say("== KAI-Scheduler: queues research > team-a; pg-train-a 3 x 2 GPUs minMember 3 (waits),"
            " pg-infer-b 4 x 1 GPU minMember 2 (2 placed), pg-serve-c over quota")
    create(rec, ("scheduling.run.ai", "v2"), "queues", None, b.kai_queue("research", None, 8, 8), "kai-queue-create-research.json")
    create(rec, ("scheduling.run.ai", "v2"), "queues", None, b.kai_queue("team-a", "research", 4, 8))
    write_status(rec, ("scheduling.run.ai", "v2"), "queues", None, "research", {"childQueues": ["team-a"]})
    write_status(rec, ("scheduling.run.ai", "v2"), "queues", None, "team-a",
                 {"allocated": {"nvidia.com/gpu": "2", "cpu": "200m"}, "requested": {"nvidia.com/gpu": "10"},
                  "conditions": [{"type": "Ready", "status": "True", "lastTransitionTime": b.NOW}]})
    create(rec, b.KAI, "podgroups", ns, b.kai_pod_group("pg-train-a", "team-a", 3), "kai-podgroup-create-train-a.json")
    for i in range(3):
        core.create_namespaced_pod(ns, b.kai_member(f"train-a-{i}", "pg-train-a", "team-a", 2, POOL))
    write_status(rec, b.KAI, "podgroups", ns, "pg-train-a", b.kai_unschedulable(3, 2, 3), "kai-podgroup-status-train-a.json")
    subs = [{"name": "prefill", "minMember": 1}, {"name": "decode", "minMember": 1}]
    create(rec, b.KAI, "podgroups", ns, b.kai_pod_group("pg-infer-b", "team-a", 2, subs))
    names = [f"infer-b-{i}" for i in range(4)]
    for i, n in enumerate(names):
        core.create_namespaced_pod(ns, b.kai_member(n, "pg-infer-b", "team-a", 1, POOL, subs[i % 2]["name"]))
    bind(core, ns, names[0], NODES[0])
    bind(core, ns, names[1], NODES[0])
    wait_until(lambda: running(core, ns, names[:2]), 60, "infer-b-0/1 Running (kwok)")
    write_status(rec, b.KAI, "podgroups", ns, "pg-infer-b", {
        "phase": "Running", "running": 2, "pending": 2,
        "resourcesStatus": {"allocated": {"nvidia.com/gpu": "2", "cpu": "200m"},
                            "requested": {"nvidia.com/gpu": "4", "cpu": "400m"}}})
    create(rec, b.KAI, "podgroups", ns, dict(b.kai_pod_group("pg-serve-c", "team-a", 2), spec={
        **b.kai_pod_group("pg-serve-c", "team-a", 2)["spec"], "preemptibility": "non-preemptible"}))
    for i in range(2):
        core.create_namespaced_pod(ns, b.kai_member(f"serve-c-{i}", "pg-serve-c", "team-a", 1, POOL))
    write_status(rec, b.KAI, "podgroups", ns, "pg-serve-c", b.kai_over_limit("team-a"))
    bad = b.kai_pod_group("pg-bad", "team-a", 0)
    rec.save("kai-podgroup-create-422-minmember.json", "POST", path(b.KAI, "podgroups", ns), bad,
             note="minMember 0: the CRD's schema (minimum 1) rejects it", expect=422)
    rec.save("kai-podgroups.json", "GET", path(b.KAI, "podgroups", ns))
    rec.save("kai-queues.json", "GET", path(("scheduling.run.ai", "v2"), "queues"))
    rec.save("kai-pods.json", "GET", f"/api/v1/namespaces/{ns}/pods")


def record_kueue(rec: Recorder, core: client.CoreV1Api, batch: client.BatchV1Api) -> None:
    ns = "kueue"
    ensure_namespace(core, ns)
    rec.say("== Kueue: ClusterQueue gpu-cq (8 GPUs, TAS flavor gpu-a), LocalQueue team-a; Job train-a 4 x 2 GPUs"
            " needing one host (QuotaReserved=False), Job infer-b 2 x 1 GPU admitted and run")
    for plural, obj in b.kueue_setup(POOL):
        create(rec, b.KUEUE, plural, None, obj, f"kueue-{plural[:-1] if plural != 'topologies' else 'topology'}-create.json")
    create(rec, b.KUEUE, "localqueues", ns, b.local_queue("team-a"), "kueue-localqueue-create.json")
    jobs = {}
    for name, par, gpus in (("train-a", 4, 2), ("infer-b", 2, 1)):
        job = b.kueue_job(name, par, gpus, POOL, "team-a")
        made = rec.save(f"kueue-job-create-{name}.json", "POST", f"/apis/batch/v1/namespaces/{ns}/jobs", job, expect=201).body
        jobs[name] = (job, made["metadata"]["uid"])
    job, uid = jobs["train-a"]
    train = create(rec, b.KUEUE, "workloads", ns, b.kueue_workload(job, uid, "team-a", "kubernetes.io/hostname"),
                   "kueue-workload-create-train-a.json")
    write_status(rec, b.KUEUE, "workloads", ns, train["metadata"]["name"], b.kueue_pending(4, 2, 2),
                 "kueue-workload-status-train-a-pending.json")
    job, uid = jobs["infer-b"]
    infer = create(rec, b.KUEUE, "workloads", ns, b.kueue_workload(job, uid, "team-a"))
    write_status(rec, b.KUEUE, "workloads", ns, infer["metadata"]["name"], b.kueue_admitted(2, 1, NODES[1]),
                 "kueue-workload-status-infer-b-admitted.json")
    # what Kueue's job reconciler does on admission (jobframework getPodSetsInfoFromStatus): the podset
    # label, the workload annotation (TAS), the flavor's and the topology's node selector; then unsuspend
    batch.patch_namespaced_job("infer-b", ns, {"spec": {"suspend": False, "template": {
        "metadata": {"labels": {"kueue.x-k8s.io/podset": "main"},
                     "annotations": {"kueue.x-k8s.io/workload": infer["metadata"]["name"]}},
        "spec": {"nodeSelector": {"pool": POOL, "kubernetes.io/hostname": NODES[1]}}}}})
    try:
        wait_until(lambda: len(core.list_namespaced_pod(ns, label_selector="job=infer-b").items) == 2 and all(
            p.status.phase == "Running" for p in core.list_namespaced_pod(ns, label_selector="job=infer-b").items),
            60, "infer-b's pods created by the Job controller, bound by kube-scheduler, Running (kwok)")
    except AssertionError:
        print(rec.call("GET", f"/apis/batch/v1/namespaces/{ns}/jobs/infer-b").raw.decode()[-3000:])
        print([(p.metadata.name, p.status.phase, p.spec.node_name, p.status.conditions)
               for p in core.list_namespaced_pod(ns).items])
        raise
    conds = b.kueue_admitted(2, 1, NODES[1])["conditions"] + [
        {"type": "PodsReady", "status": "True", "reason": "PodsReady", "observedGeneration": 1,
         "message": "All pods reached readiness and the workload is running", "lastTransitionTime": b.NOW}]
    write_status(rec, b.KUEUE, "workloads", ns, infer["metadata"]["name"], {"conditions": conds})
    usage = [{"name": "gpu-a", "resources": [{"name": "cpu", "total": "200m"}, {"name": "nvidia.com/gpu", "total": "2"}]}]
    write_status(rec, b.KUEUE, "clusterqueues", None, "gpu-cq", {
        "pendingWorkloads": 1, "reservingWorkloads": 1, "admittedWorkloads": 1, "flavorsReservation": usage,
        "flavorsUsage": usage, "conditions": [{"type": "Active", "status": "True", "reason": "Ready",
                                               "message": "Can admit new workloads", "lastTransitionTime": b.NOW}]})
    write_status(rec, b.KUEUE, "localqueues", ns, "team-a", {
        "pendingWorkloads": 1, "reservingWorkloads": 1, "admittedWorkloads": 1, "flavorsReservation": usage,
        "flavorsUsage": usage, "conditions": [{"type": "Active", "status": "True", "reason": "Ready",
                                               "message": "Can submit new workloads to localQueue",
                                               "lastTransitionTime": b.NOW}]})
    bad = b.kueue_workload(*jobs["train-a"], "team-a")
    bad["metadata"]["name"] = "bad-count"
    bad["spec"]["podSets"][0]["count"] = -1
    rec.save("kueue-workload-create-422-count.json", "POST", path(b.KUEUE, "workloads", ns), bad,
             note="podSets[0].count -1: the CRD's schema (minimum 0) rejects it", expect=422)
    for plural in ("workloads", "localqueues"):
        rec.save(f"kueue-{plural}.json", "GET", path(b.KUEUE, plural, ns))
    for plural in ("clusterqueues", "resourceflavors", "topologies"):
        rec.save(f"kueue-{plural}.json", "GET", path(b.KUEUE, plural))
    rec.save("kueue-workloads-v1beta1.json", "GET", path(("kueue.x-k8s.io", "v1beta1"), "workloads", ns),
             note="the same objects through v1beta1 (conversion None: only apiVersion changes)")
    rec.save("kueue-jobs.json", "GET", f"/apis/batch/v1/namespaces/{ns}/jobs")
    rec.save("kueue-pods.json", "GET", f"/api/v1/namespaces/{ns}/pods")


def record_volcano(rec: Recorder, core: client.CoreV1Api) -> None:
    ns = "volcano"
    ensure_namespace(core, ns)
    rec.say("== Volcano: queue research; vc-train-a 3 x 2 GPUs Pending, vc-infer-b 2 x 1 GPU Inqueue,"
            " vc-eval-c 2 x 1 GPU Running")
    create(rec, b.VOLCANO, "queues", None, b.volcano_queue("research", 8), "volcano-queue-create.json")
    write_status(rec, b.VOLCANO, "queues", None, "research", {
        "state": "Open", "allocated": {"nvidia.com/gpu": "2", "cpu": "200m"}, "pending": 1, "inqueue": 1, "running": 1})
    for name, size, gpus, phase in (("vc-train-a", 3, 2, "Pending"), ("vc-infer-b", 2, 1, "Inqueue"),
                                    ("vc-eval-c", 2, 1, "Running")):
        create(rec, b.VOLCANO, "podgroups", ns, b.volcano_pod_group(name, "research", size, gpus),
               f"volcano-podgroup-create-{name}.json" if name == "vc-train-a" else None)
        names = [f"{name[3:]}-{i}" for i in range(size)]
        for n in names:
            core.create_namespaced_pod(ns, b.volcano_member(n, name, gpus, POOL))
        if phase == "Running":
            for n in names:
                bind(core, ns, n, NODES[0])
            wait_until(lambda names=names: running(core, ns, names), 60, f"{name}'s pods Running (kwok)")
        write_status(rec, b.VOLCANO, "podgroups", ns, name, b.volcano_status(phase, size, size if phase == "Running" else 0),
                     f"volcano-podgroup-status-{name}.json", subresource=False)
    bad = b.volcano_pod_group("vc-bad", "research", 1, 1)
    bad["spec"]["networkTopology"] = {"mode": "strict"}
    rec.save("volcano-podgroup-create-422-mode.json", "POST", path(b.VOLCANO, "podgroups", ns), bad,
             note="networkTopology.mode strict: the CRD's enum (hard, soft) rejects it", expect=422)
    rec.save("volcano-podgroups.json", "GET", path(b.VOLCANO, "podgroups", ns))
    rec.save("volcano-queues.json", "GET", path(b.VOLCANO, "queues"))
    rec.save("volcano-pods.json", "GET", f"/api/v1/namespaces/{ns}/pods")


def record(plane: Plane, out: Path, crds: Path) -> None:
    rec = Recorder(plane, out)
    core = client.CoreV1Api(api(plane.kubeconfig))
    batch = client.BatchV1Api(api(plane.kubeconfig))
    install(plane, rec, [crds / f"{name}.yaml" for name in OWN_CRDS] + kueue_crds())
    for n in NODES:
        add_node(core, n, {"cpu": "16", "memory": "64Gi", "pods": "110", "nvidia.com/gpu": "4"}, {"pool": POOL})
    wait_nodes_ready(core, list(NODES))
    rec.save("discovery-apis.json", "GET", "/apis", note="every group the plane serves, the three CRD groups among them")
    for name, gv in (("kai-v2alpha2", "scheduling.run.ai/v2alpha2"), ("kai-v2", "scheduling.run.ai/v2"),
                     ("kueue-v1beta2", "kueue.x-k8s.io/v1beta2"), ("kueue-v1beta1", "kueue.x-k8s.io/v1beta1"),
                     ("volcano-v1beta1", "scheduling.volcano.sh/v1beta1")):
        rec.save(f"discovery-{name}.json", "GET", f"/apis/{gv}")
    record_kai(rec, core)
    record_kueue(rec, core, batch)
    record_volcano(rec, core)
    rec.save("nodes.json", "GET", "/api/v1/nodes")
    rec.finish()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--crds", type=Path, required=True, help="directory with the KAI and Volcano CRD files")
    parser.add_argument("out", type=Path, nargs="?", default=REPO / "tests" / "fixtures" / "k8s" / "batch-schedulers")
    args = parser.parse_args()
    missing = [n for n in OWN_CRDS if not (args.crds / f"{n}.yaml").is_file()]
    if missing:
        parser.error(f"--crds {args.crds} lacks {', '.join(m + '.yaml' for m in missing)}")
    return on_gated_plane(lambda plane: record(plane, args.out, args.crds))

if __name__ == "__main__":
    sys.exit(main())
