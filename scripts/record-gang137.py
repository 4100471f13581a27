#!/usr/bin/env python3
"""Record Kubernetes 1.37's gang objects from a gated plane into tests/fixtures/k8s/gang137/.

    python scripts/record-gang137.py [OUTDIR]      # ~1 min; needs scripts/build-kubernetes.sh's binaries

The plane is the realk8s `gated_plane` (tests/realk8s/plane.py: GATED feature gates on in every
component, scheduling.k8s.io/v1beta1 and resource.k8s.io/v1alpha3 served). Sequence, in namespace
`gang` on two kwok nodes with `nvidia.com/gpu: 2` each (label pool=gpu):
  gang-a  3 pods x 2 GPUs, minCount 3: two would fit, three cannot -> nothing may bind
  gang-c  minCount 3 but 2 pods x 1 GPU -> held (the gang is incomplete); stays for the rest
  gang-b  3 pods x 1 GPU, minCount 3 -> all three bound together
  lists, events, then gang-b deleted and a Job `train` with spec.scheduling (gang, 2 x 1 GPU):
  the Job controller's Workload and PodGroup, its pods, and watches over the whole Job sequence.
Every wait is on a condition the server reports; the README says what each file is.
"""

from __future__ import annotations

import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from kubernetes import client  # noqa: E402

from tests.realk8s.gang_objects import (  # noqa: E402
    create_gang,
    gang_job,
    group_condition,
    member,
    pod_group,
    raw_pods,
    scheduled_condition,
    workload,
)
from tests.realk8s.objects import add_node, api, ensure_namespace, wait_nodes_ready  # noqa: E402
from tests.realk8s.plane import Plane  # noqa: E402
from tests.realk8s.procs import wait_until  # noqa: E402
from tests.realk8s.recorder import Recorder, on_gated_plane  # noqa: E402

NS = "gang"
SCHED = "/apis/scheduling.k8s.io/v1beta1"
NODES = ("gpu-node-1", "gpu-node-2")


def settled_unbound(core: client.CoreV1Api, gang: str) -> bool:
    """Every member has a PodScheduled=False condition and none has a node."""
    pods = raw_pods(core, NS, f"gang={gang}")
    return bool(pods) and all(scheduled_condition(p) and scheduled_condition(p)["status"] == "False"
                              and not p["spec"].get("nodeName") for p in pods)


def describe(rec: Recorder, core: client.CoreV1Api, selector: str) -> None:
    for p in raw_pods(core, NS, selector):
        c = scheduled_condition(p) or {}
        rec.say(f"  {p['metadata']['name']}: node={p['spec'].get('nodeName')} group="
                f"{(p['spec'].get('schedulingGroup') or {}).get('podGroupName')} PodScheduled={c.get('status')} "
                f"reason={c.get('reason')} message={c.get('message')}")


def group_status(rec: Recorder, name: str) -> dict:
    got = rec.call("GET", f"{SCHED}/namespaces/{NS}/podgroups/{name}").body
    rec.say(f"  podgroup {name} status: {got.get('status')}")
    return got


def record(plane: Plane, out: Path) -> None:
    rec = Recorder(plane, out)
    ac = api(plane.kubeconfig)
    core = client.CoreV1Api(ac)
    ensure_namespace(core, NS)
    for n in NODES:
        add_node(core, n, {"cpu": "8", "memory": "32Gi", "pods": "110", "nvidia.com/gpu": "2"}, {"pool": "gpu"})
    wait_nodes_ready(core, list(NODES))
    rec.save("version.json", "GET", "/version")
    rec.save("discovery-apis.json", "GET", "/apis", note="the aggregated group list: scheduling.k8s.io serves v1 and v1beta1")
    rec.save("discovery-scheduling.json", "GET", "/apis/scheduling.k8s.io")
    rec.save("discovery-scheduling-v1beta1.json", "GET", SCHED)
    rec.save("discovery-scheduling-v1alpha2.json", "GET", "/apis/scheduling.k8s.io/v1alpha2",
             note="1.36's alpha version is gone in 1.37")
    start_rv = rec.call("GET", f"/api/v1/namespaces/{NS}/pods").body["metadata"]["resourceVersion"]

    rec.say("== gang-c: minCount 3 but only 2 pods x nvidia.com/gpu 1 created (the gang is incomplete)")
    create_gang(ac, NS, "gang-c", 2, 3, 1, "gpu")

    rec.say("== gang-a: 3 pods x nvidia.com/gpu 2, minCount 3 on 2 x 2 GPUs (two would fit, three cannot)")
    rec.save("workload-create-gang-a.json", "POST", f"{SCHED}/namespaces/{NS}/workloads",
             workload("gang-a", 3), expect=201)
    rec.save("podgroup-create-gang-a.json", "POST", f"{SCHED}/namespaces/{NS}/podgroups",
             pod_group("gang-a-workers", "gang-a", 3), expect=201)
    rec.save("pod-create-gang-a-0.json", "POST", f"/api/v1/namespaces/{NS}/pods", _member("gang-a", 0, 2), expect=201)
    for i in (1, 2):
        core.create_namespaced_pod(NS, _member("gang-a", i, 2))
    wait_until(lambda: settled_unbound(core, "gang-a") and group_condition(group_status(rec, "gang-a-workers")),
               60, "gang-a's members all PodScheduled=False and its PodGroup's condition", interval=0.5)
    describe(rec, core, "gang=gang-a")
    rec.save("pods-gang-a-pending.json", "GET", f"/api/v1/namespaces/{NS}/pods?labelSelector=gang%3Dgang-a",
             note="gang-a after the scheduler gave up: no member bound")
    rec.save("podgroup-gang-a-unschedulable.json", "GET", f"{SCHED}/namespaces/{NS}/podgroups/gang-a-workers")

    # gang-c's pods were created before gang-a's: once the scheduler has written gang-a's conditions
    # it has had gang-c's pods in its queue too (one informer, events in resourceVersion order)
    rec.say("== gang-c as the scheduler left it")
    describe(rec, core, "gang=gang-c")
    group_status(rec, "gang-c-workers")
    rec.save("pods-gang-c-incomplete.json", "GET", f"/api/v1/namespaces/{NS}/pods?labelSelector=gang%3Dgang-c",
             note="2 of minCount 3 members exist: held before scheduling")
    rec.save("podgroup-gang-c-incomplete.json", "GET", f"{SCHED}/namespaces/{NS}/podgroups/gang-c-workers")

    rec.say("== gang-b: 3 pods x nvidia.com/gpu 1, minCount 3 (fits)")
    create_gang(ac, NS, "gang-b", 3, 3, 1, "gpu")
    wait_until(lambda: all(p["spec"].get("nodeName") for p in raw_pods(core, NS, "gang=gang-b")) and
               (group_condition(group_status(rec, "gang-b-workers")) or {}).get("status") == "True",
               60, "gang-b's three members bound and PodGroupInitiallyScheduled=True", interval=0.5)
    describe(rec, core, "gang=gang-b")
    for name, path, note in (
            ("workloads.json", f"{SCHED}/namespaces/{NS}/workloads", ""),
            ("podgroups.json", f"{SCHED}/namespaces/{NS}/podgroups", "gang-a unschedulable, gang-b scheduled"),
            ("pods.json", f"/api/v1/namespaces/{NS}/pods", ""),
            ("nodes.json", "/api/v1/nodes", ""),
            ("events.json", f"/api/v1/namespaces/{NS}/events", "every core/v1 event in namespace gang"),
            ("events-v1.json", f"/apis/events.k8s.io/v1/namespaces/{NS}/events", "the same through events.k8s.io/v1")):
        rec.save(name, "GET", path, note=note)
    rec.save_watch("watch-pods-gangs.jsonl", f"/api/v1/namespaces/{NS}/pods?resourceVersion={start_rv}", 2,
                   "gang-a and gang-b from before their creation")
    rec.save_watch("watch-podgroups-gangs.jsonl", f"{SCHED}/namespaces/{NS}/podgroups?resourceVersion={start_rv}", 2)

    rec.say("== gang-b deleted; Job train: spec.scheduling gang minCount 2, 2 pods x nvidia.com/gpu 1")
    core.delete_collection_namespaced_pod(NS, label_selector="gang=gang-b", grace_period_seconds=0)
    wait_until(lambda: not raw_pods(core, NS, "gang=gang-b"), 60, "gang-b's pods gone")
    job_rv = rec.call("GET", f"/api/v1/namespaces/{NS}/pods").body["metadata"]["resourceVersion"]
    rec.save("job-create-train.json", "POST", f"/apis/batch/v1/namespaces/{NS}/jobs",
             gang_job("train", 2, 2, 1, "gpu"), expect=201)
    wait_until(lambda: len(raw_pods(core, NS, "job=train")) == 2 and
               all(p["spec"].get("nodeName") for p in raw_pods(core, NS, "job=train")), 60,
               "the Job's two pods created and bound", interval=0.5)
    describe(rec, core, "job=train")
    rec.save("job-train.json", "GET", f"/apis/batch/v1/namespaces/{NS}/jobs/train")
    rec.save("pods-job-train.json", "GET", f"/api/v1/namespaces/{NS}/pods?labelSelector=job%3Dtrain",
             note="the Job controller's pods, each with spec.schedulingGroup")
    rec.save("workloads-with-job.json", "GET", f"{SCHED}/namespaces/{NS}/workloads",
             note="gang-a, gang-b (ours) and the Job controller's Workload")
    rec.save("podgroups-with-job.json", "GET", f"{SCHED}/namespaces/{NS}/podgroups")
    rec.save("events-after-job.json", "GET", f"/api/v1/namespaces/{NS}/events")
    rec.save_watch("watch-pods-job.jsonl", f"/api/v1/namespaces/{NS}/pods?resourceVersion={job_rv}", 2,
                   "from just before the Job's creation")
    rec.save_watch("watch-workloads-job.jsonl", f"{SCHED}/namespaces/{NS}/workloads?resourceVersion={job_rv}", 2)
    rec.save_watch("watch-podgroups-job.jsonl", f"{SCHED}/namespaces/{NS}/podgroups?resourceVersion={job_rv}", 2)
    rec.finish()


def _member(gang: str, i: int, gpus: int) -> dict:
    return member(f"{gang}-{i}", f"{gang}-workers", gpus, "gpu", {"gang": gang})


def main() -> int:
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else REPO / "tests" / "fixtures" / "k8s" / "gang137"
    return on_gated_plane(lambda plane: record(plane, out))

if __name__ == "__main__":
    sys.exit(main())
