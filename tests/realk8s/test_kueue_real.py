"""The real Kueue v0.17.0 on the real plane (issue #40, "Must show"): a ClusterQueue with 4 GPUs nominal,
two LocalQueues in two namespaces, Jobs admitted and a Job held by the quota, then the held one admitted
once an admitted one finishes.

ROUNDS stories side by side, each its own ClusterQueue (so none borrows from another): two 2-GPU Jobs in
team A's namespace, waited for until Kueue admitted both and their pods run, then a 2-GPU Job in team
B's namespace, which Kueue holds (its Workload's QuotaReserved False, reason Pending, "couldn't assign
flavors ... insufficient unused quota ..."). kubeview, live (KubeSource -> ClusterModel: its queue store)
and `kubeview snapshot --json` as a separate process, shows the conditions' reasons and messages exactly
as Kueue wrote them, and each ClusterQueue's and LocalQueue's usage and counts equal to their status.
Then one of team A's pods finishes (kwok: its fate label), the Job completes, Kueue releases its quota
and admits team B's Job; kubeview shows that too. Every wait is on observed state, none a sleep.
kueue.py says how Kueue runs here (without its webhooks: the Jobs are created suspended).

With KUBEVIEW_RECORD_KUEUE naming a folder, the objects Kueue wrote are saved there
(tests/fixtures/kueue/README.md).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from kubernetes import client

from .kueue import FATE, POOL, Kueue, cluster_queue, dump, flavor, job, local_queue, missing
from .kueue_view import differences, snapshot_differences
from .live_view import LiveView
from .objects import add_node, ensure_namespace, wait_nodes_ready
from .plane import Plane
from .procs import wait_until

ROUNDS = 3
GPUS, EACH = 4, 2  # the ClusterQueue's nominal nvidia.com/gpu; each Job's
FLAVOR = "gpu"
NODES = ("kueue-gpu-a", "kueue-gpu-b")  # 8 GPUs each: room for every admitted pod of every round
SETTLE_TIMEOUT = 60.0
VIEW_TIMEOUT = 30.0


def team(i: int, t: str) -> str:
    return f"kueue-{t}-{i}"


def cq_name(i: int) -> str:
    return f"gpus-{i}"


SPACES = tuple(team(i, t) for i in range(ROUNDS) for t in "ab")


@pytest.fixture(scope="module")
def kueue(request: pytest.FixtureRequest) -> Iterator[Kueue]:
    gone = missing()
    if gone:  # before the plane: no plane is started for a test that cannot run
        pytest.skip(f"realk8s: no {gone}; build it with `bash scripts/build-kueue.sh`")
    plane: Plane = request.getfixturevalue("plane")
    k = Kueue(plane, SPACES)
    for ns in SPACES:
        ensure_namespace(k.core, ns)
    for name in NODES:
        add_node(k.core, name, {"cpu": "64", "memory": "256Gi", "pods": "110", "nvidia.com/gpu": "8"}, {POOL: "kueue"})
    try:
        wait_nodes_ready(k.core, list(NODES))
        yield k.start()
    finally:
        k.stop()
        for ns in SPACES:
            k.core.delete_namespace(ns)
        for name in NODES:
            try:
                k.core.delete_node(name)
            except client.ApiException as exc:
                if exc.status != 404:
                    raise


@pytest.fixture(scope="module")
def view(kueue: Kueue) -> Iterator[LiveView]:
    """kubeview's KubeSource on the plane, started once Kueue's CRDs are served (discovery finds them)."""
    v = LiveView(kueue.plane.kubeconfig, kinds=("Node", "Pod", "Job"))
    yield v.start()
    v.stop()


def _cond(obj: dict | None, kind: str) -> dict | None:
    return next((c for c in ((obj or {}).get("status") or {}).get("conditions") or () if c["type"] == kind), None)


def _true(obj: dict | None, kind: str) -> bool:
    c = _cond(obj, kind)
    return c is not None and c["status"] == "True"


def _running(k: Kueue, ns: str, name: str) -> bool:
    pods = k.core.list_namespaced_pod(ns, label_selector=f"batch.kubernetes.io/job-name={name}").items
    return len(pods) == 1 and pods[0].status.phase == "Running"


def _admitted_and_running(k: Kueue, ns: str, name: str) -> bool:
    return _true(k.workload_of(ns, name), "Admitted") and _running(k, ns, name)


def _held(k: Kueue, ns: str, name: str) -> dict | None:
    """The Workload once Kueue said why it holds it (QuotaReserved False, reason Pending)."""
    wl = k.workload_of(ns, name)
    c = _cond(wl, "QuotaReserved")
    return wl if c is not None and c["status"] == "False" and c["reason"] == "Pending" else None


def _gpu_usage(cq: dict, field: str) -> str | None:
    for f in (cq.get("status") or {}).get(field) or ():
        for r in f.get("resources") or ():
            if f["name"] == FLAVOR and r["name"] == "nvidia.com/gpu":
                return r.get("total")
    return None


def _cq_settled(k: Kueue, i: int, pending: int, admitted: int) -> bool:
    cq = k.get("clusterqueues", cq_name(i))
    s = cq.get("status") or {}
    return (s.get("pendingWorkloads"), s.get("admittedWorkloads"), _gpu_usage(cq, "flavorsUsage"),
            _gpu_usage(cq, "flavorsReservation")) == (pending, admitted, str(GPUS), str(GPUS))


def _written(k: Kueue) -> dict[str, list[dict]]:
    """What Kueue wrote now, read fresh: the premises kubeview's views are compared with."""
    return {"clusterqueues": [k.get("clusterqueues", cq_name(i)) for i in range(ROUNDS)],
            "localqueues": [q for ns in SPACES for q in k.items("localqueues", ns)],
            "workloads": [w for ns in SPACES for w in k.items("workloads", ns)]}


def _check_view(view: LiveView, k: Kueue, what: str) -> dict[str, list[dict]]:
    """kubeview's model agrees with a fresh read of Kueue's objects (waited for: the watch lags, and
    Kueue may still be writing, so both are read again until one comparison agrees)."""
    last: list[str] = []
    written: list[dict[str, list[dict]]] = []

    def agrees() -> bool:
        written[:] = [_written(k)]
        last[:] = view.read(lambda m: differences(m, written[0]))
        return not last

    try:
        wait_until(agrees, VIEW_TIMEOUT, f"kubeview's model to show {what} as Kueue wrote it", 0.2)
    except AssertionError as exc:
        raise AssertionError(f"{exc}:\n" + "\n".join(last)) from None
    return written[0]


def _check_snapshot(plane: Plane, k: Kueue) -> None:
    """`kubeview snapshot --json`, a process of its own reading the plane once, agrees with a read made
    after it (nothing changes in between: every round is settled)."""
    out = subprocess.run([sys.executable, "-m", "kubeview", "snapshot", "--json", "--kubeconfig", str(plane.kubeconfig)],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    found = snapshot_differences(json.loads(out.stdout), _written(k))
    assert not found, "\n".join(found)


def _record(written: dict[str, list[dict]], stage: str) -> None:
    folder = os.environ.get("KUBEVIEW_RECORD_KUEUE")
    if not folder:
        return
    for plural, objects in written.items():
        for obj in objects:
            obj["metadata"].pop("managedFields", None)
        Path(folder, f"{stage}-{plural}.json").write_text(dump(objects))


def test_kueue_admits_holds_and_releases(kueue: Kueue, view: LiveView, realk8s_counts: dict[str, str]) -> None:
    k = kueue
    start = time.monotonic()
    k.create(flavor(FLAVOR))
    for i in range(ROUNDS):
        k.create(cluster_queue(cq_name(i), FLAVOR, GPUS))
        for t in "ab":
            k.create(local_queue(team(i, t), f"team-{t}", cq_name(i)))
    k.wait(lambda: all(_true(k.get("clusterqueues", cq_name(i)), "Active") for i in range(ROUNDS))
           and all(_true(q, "Active") for ns in SPACES for q in k.items("localqueues", ns)), SETTLE_TIMEOUT,
           "every ClusterQueue and LocalQueue Active")

    # --- team A's two Jobs fill the 4 GPUs: admitted, unsuspended, their pods running ------------------
    for i in range(ROUNDS):
        for name in ("a1", "a2"):
            k.batch.create_namespaced_job(team(i, "a"), job(team(i, "a"), name, "team-a", EACH))
    k.wait(lambda: all(_admitted_and_running(k, team(i, "a"), n) for i in range(ROUNDS) for n in ("a1", "a2")),
           SETTLE_TIMEOUT, "team A's Jobs admitted by Kueue and their pods Running")
    # --- team B's Job finds no room: Kueue holds it ----------------------------------------------------
    for i in range(ROUNDS):
        k.batch.create_namespaced_job(team(i, "b"), job(team(i, "b"), "b1", "team-b", EACH))
    k.wait(lambda: all(_held(k, team(i, "b"), "b1") and _cq_settled(k, i, 1, 2) for i in range(ROUNDS)),
           SETTLE_TIMEOUT, "team B's Job held by Kueue, each ClusterQueue at 4/4 with 1 pending")
    held_at = time.monotonic() - start
    for i in range(ROUNDS):
        wl = _held(k, team(i, "b"), "b1")
        said = _cond(wl, "QuotaReserved")["message"]
        assert said.startswith("couldn't assign flavors to pod set main: ") and (
            f"insufficient unused quota for nvidia.com/gpu in flavor {FLAVOR}, {EACH} more needed") in said, said
        assert k.batch.read_namespaced_job("b1", team(i, "b")).spec.suspend is True
    written = _check_view(view, k, "two Jobs admitted and one held per ClusterQueue")
    _record(written, "held")
    realk8s_counts["Kueue's words on a held Job"] = _cond(_held(k, team(0, "b"), "b1"), "QuotaReserved")["message"]
    _check_snapshot(k.plane, k)

    # --- one of team A's pods finishes: Kueue releases its quota and admits team B's Job ---------------
    for i in range(ROUNDS):
        [pod] = k.core.list_namespaced_pod(team(i, "a"), label_selector="batch.kubernetes.io/job-name=a1").items
        k.core.patch_namespaced_pod(pod.metadata.name, team(i, "a"), {"metadata": {"labels": {FATE: "succeed"}}})
    k.wait(lambda: all(_true(k.workload_of(team(i, "a"), "a1"), "Finished")
                       and _admitted_and_running(k, team(i, "b"), "b1") and _cq_settled(k, i, 0, 2)
                       for i in range(ROUNDS)), SETTLE_TIMEOUT,
           "team A's first Job finished and team B's admitted in its place")
    written = _check_view(view, k, "team B's Job admitted once team A's first finished")
    _record(written, "released")
    _check_snapshot(k.plane, k)
    realk8s_counts["Kueue rounds"] = (
        f"{ROUNDS} ClusterQueues side by side ({GPUS} GPUs, 2 LocalQueues each): held after {held_at:.1f} s, "
        f"released and seen after {time.monotonic() - start:.1f} s")
