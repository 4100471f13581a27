"""Kueue's queue positions on the real plane (issue #40): the real Kueue v0.17.0 with its visibility API served
through the real kube-apiserver's aggregator (kueue_visibility.py says how), and kubeview reading it.

One ClusterQueue of 4 GPUs, two LocalQueues in two namespaces. Two 2-GPU Jobs fill it (admitted, pods
Running), then three 2-GPU Jobs wait (held by Kueue, each waited for before the next is made). kubeview's
live model (KubeSource -> ClusterModel, positions wanted) holds for each waiting Workload exactly the
positionInClusterQueue and positionInLocalQueue that `kubectl get --raw /apis/visibility.kueue.x-k8s.io/
v1beta2/clusterqueues/<cq>/pendingworkloads` answers, and so does `kubeview snapshot --json`. Then one of
the admitted pods finishes: Kueue admits the first waiting Workload in its place, and the two left each
move up one place in kubeview's model as in Kueue's answer. Then the APIService is taken away (404: not
served) and registered at a port nobody listens on (503): kubeview shows no position and says why; once
Kueue's is back, so are its positions. Every wait is on observed state, none a sleep.

With KUBEVIEW_RECORD_KUEUE naming a folder, Kueue's answers are saved there (tests/fixtures/kueue/README.md).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from kubeview.cluster.kube.queue_positions import PositionSettings
from kubeview.model.queues.positions import NOT_SERVED

from . import kueue_visibility
from .kueue import FATE, NAMESPACE, POOL, Kueue, cluster_queue, flavor, job, local_queue, missing
from .live_view import LiveView
from .objects import add_node, ensure_namespace, ignoring, wait_nodes_ready
from .plane import Plane
from .procs import free_port, wait_until

CQ, FLAVOR = "positions", "gpu-pos"
SPACES = {"a": "kpos-a", "b": "kpos-b"}  # team -> namespace; each a LocalQueue team-<t>
NODE = "kpos-gpu"
FILL = (("a", "fill-1"), ("b", "fill-2"))  # admitted: the ClusterQueue's 4 GPUs
WAIT = (("a", "w1"), ("b", "w2"), ("a", "w3"))  # held, made in this order
TIMEOUT = 60.0
RAW = f"/apis/{kueue_visibility.GROUP}/{kueue_visibility.VERSION}/clusterqueues/{CQ}/pendingworkloads"

Places = dict[tuple[str, str], tuple[int, int]]  # (namespace, Workload) -> (in ClusterQueue, in LocalQueue)


@pytest.fixture(scope="module")
def kueue(request: pytest.FixtureRequest) -> Iterator[Kueue]:
    gone = missing()
    if gone:
        pytest.skip(f"realk8s: no {gone}; build it with `bash scripts/build-kueue.sh`")
    tools = kueue_visibility.missing()
    if tools:
        pytest.skip(f"realk8s: no {tools}: Kueue's visibility server needs its own /visibility (kueue_visibility.py)")
    plane: Plane = request.getfixturevalue("plane")
    k = Kueue(plane, tuple(SPACES.values()), visibility=True)
    for ns in SPACES.values():
        ensure_namespace(k.core, ns)
    add_node(k.core, NODE, {"cpu": "64", "memory": "256Gi", "pods": "110", "nvidia.com/gpu": "8"}, {POOL: "kueue"})
    try:
        wait_nodes_ready(k.core, [NODE])
        yield k.start()
    finally:
        k.stop()
        for ns in SPACES.values():
            k.core.delete_namespace(ns)
        ignoring(404, lambda: k.core.delete_node(NODE))


@pytest.fixture(scope="module")
def view(kueue: Kueue) -> Iterator[LiveView]:
    v = LiveView(kueue.plane.kubeconfig, kinds=("Node", "Pod", "Job"))
    v.source.position_settings = PositionSettings(interval=0.3)  # the poll loop as shipped, rounds closer together
    v.source.want_positions.set()
    yield v.start()
    v.stop()


def _condition(obj: dict | None, kind: str) -> dict | None:
    return next((c for c in ((obj or {}).get("status") or {}).get("conditions") or () if c["type"] == kind), None)


def _admitted_and_running(k: Kueue, ns: str, name: str) -> bool:
    admitted = _condition(k.workload_of(ns, name), "Admitted")
    pods = k.core.list_namespaced_pod(ns, label_selector=f"batch.kubernetes.io/job-name={name}").items
    return admitted is not None and admitted["status"] == "True" and len(pods) == 1 and pods[0].status.phase == "Running"


def _held(k: Kueue, ns: str, name: str) -> bool:
    c = _condition(k.workload_of(ns, name), "QuotaReserved")
    return c is not None and c["status"] == "False" and c.get("reason") == "Pending"


def _kueue_says(k: Kueue) -> tuple[Places, dict]:
    """Kueue's answer through the API server, as `kubectl get --raw` reads it."""
    doc = json.loads(k.plane.kubectl("get", "--raw", RAW).stdout)
    return {(i["metadata"]["namespace"], i["metadata"]["name"]): (i["positionInClusterQueue"], i["positionInLocalQueue"])
            for i in doc["items"]}, doc


def _kubeview_says(view: LiveView) -> Places:
    def read(m) -> Places:  # noqa: ANN001
        out: Places = {}
        for w in m.queues.waiting(CQ):
            p = m.queues.position(w)
            if p is not None and p.in_local_queue is not None:
                out[w.key] = (p.in_cluster_queue, p.in_local_queue)
        return out
    return view.read(read)


def _agree(view: LiveView, k: Kueue, what: str, count: int) -> tuple[Places, dict]:
    """kubeview's positions equal Kueue's answer with `count` waiting (both read again until one agrees:
    the poll and the watch lag)."""
    last: list = []

    def agrees() -> bool:
        kueue, doc = _kueue_says(k)
        mine = _kubeview_says(view)
        last[:] = [kueue, mine, doc]
        return len(kueue) == count and mine == kueue

    try:
        wait_until(agrees, TIMEOUT, f"kubeview's positions to equal Kueue's {what}", 0.2)
    except AssertionError as exc:
        raise AssertionError(f"{exc}: Kueue {last[0] if last else None}, kubeview {last[1] if last else None}") from None
    return last[0], last[2]


def _record(doc: dict, stage: str) -> None:
    folder = os.environ.get("KUBEVIEW_RECORD_KUEUE")
    if folder:
        Path(folder, f"visibility-{stage}.json").write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n")


def test_kubeview_shows_kueues_positions_and_follows_them(kueue: Kueue, view: LiveView) -> None:
    k = kueue
    k.create(flavor(FLAVOR))
    k.create(cluster_queue(CQ, FLAVOR, 4))
    for t, ns in SPACES.items():
        k.create(local_queue(ns, f"team-{t}", CQ))
    for t, name in FILL:
        k.batch.create_namespaced_job(SPACES[t], job(SPACES[t], name, f"team-{t}", 2))
    k.wait(lambda: all(_admitted_and_running(k, SPACES[t], n) for t, n in FILL), TIMEOUT, "the filling Jobs running")
    for t, name in WAIT:
        k.batch.create_namespaced_job(SPACES[t], job(SPACES[t], name, f"team-{t}", 2))
        k.wait(lambda t=t, name=name: _held(k, SPACES[t], name), TIMEOUT, f"{name} held by Kueue")

    before, doc = _agree(view, k, "three waiting", 3)
    _record(doc, "held")
    assert sorted(p[0] for p in before.values()) == [0, 1, 2]  # one ClusterQueue: three distinct places
    assert sorted(p[1] for (ns, _), p in before.items() if ns == SPACES["a"]) == [0, 1]  # w1, w3 in team-a
    out = subprocess.run([sys.executable, "-m", "kubeview", "snapshot", "--json", "--kubeconfig", str(k.plane.kubeconfig)],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    queues = json.loads(out.stdout)["queues"]
    assert queues["positionsUnavailable"] is None
    snap = {(w["namespace"], w["name"]): (w["positionInClusterQueue"], w["positionInLocalQueue"])
            for w in queues["workloads"] if w["clusterQueue"] == CQ and w["state"] == "pending"}
    assert snap == _kueue_says(k)[0]  # nothing changed since: every Job is settled

    # --- a filling pod finishes: Kueue admits the first waiting Workload, the other two move up ----------
    [first] = [key for key, p in before.items() if p[0] == 0]
    ns, name = SPACES[FILL[0][0]], FILL[0][1]
    [pod] = k.core.list_namespaced_pod(ns, label_selector=f"batch.kubernetes.io/job-name={name}").items
    k.core.patch_namespaced_pod(pod.metadata.name, ns, {"metadata": {"labels": {FATE: "succeed"}}})
    after, doc = _agree(view, k, "two waiting once the first was admitted", 2)
    _record(doc, "moved")
    assert first not in after
    assert {key: p[0] for key, p in after.items()} == {key: before[key][0] - 1 for key in after}


def test_without_kueues_visibility_api_there_is_no_position_and_kubeview_says_why(kueue: Kueue, view: LiveView) -> None:
    """After the story (two Workloads still waiting): the APIService gone (404: not served), then one whose
    server does not answer (503 from the aggregator); then Kueue's again, and its positions come back."""
    k = kueue

    def said() -> tuple[str | None, Places]:
        return view.read(lambda m: m.queues.positions.unavailable), _kubeview_says(view)

    try:
        kueue_visibility.unregister(k.api, NAMESPACE)
        wait_until(lambda: said() == (NOT_SERVED, {}), TIMEOUT, "kubeview to say the visibility API is not served")
        kueue_visibility.register(k.api, NAMESPACE, free_port())  # nobody listens there
        wait_until(lambda: (said()[0] or "").startswith("positions: Kueue's visibility API is unavailable (503")
                   and said()[1] == {}, TIMEOUT, f"kubeview to say the APIService is unavailable (said {said()[0]!r})")
    finally:
        kueue_visibility.unregister(k.api, NAMESPACE)
        kueue_visibility.register(k.api, NAMESPACE, k.visibility_port)
        k.wait(lambda: kueue_visibility.available(k.api), TIMEOUT, "the visibility APIService Available again")
    _agree(view, k, "two waiting, served again", 2)
