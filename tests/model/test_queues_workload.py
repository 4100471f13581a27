"""A Kueue Workload read once for the gang store and the queue store (model/queues/workload.py) gives
exactly what the two readers give apart: on every Workload the real Kueue wrote (tests/fixtures/kueue/,
tests/fixtures/k8s/batch-schedulers/), on the bench's 20,000-Workload mix at a small size, and on seeded
random damage to them (a field removed, or of another type), where both must agree or fail alike."""

from __future__ import annotations

import copy
import json
import random
from pathlib import Path

import pytest

from kubeview.bench.model_cluster import Cluster
from kubeview.bench.model_kueue import KueueObjects
from kubeview.model.cluster import ClusterModel
from kubeview.model.events import Listed, WatchEvent
from kubeview.model.gangs.messages import KIND_KUEUE
from kubeview.model.gangs.objects import header_from
from kubeview.model.queues.holds import UNSURE as _UNSURE
from kubeview.model.queues.holds import hold_of as _hold_of
from kubeview.model.queues.objects import QueuedWorkload
from kubeview.model.queues.workload import _fast, read_workload

FIXTURES = Path(__file__).parent.parent / "fixtures"


def _recorded() -> list[dict]:
    out: list[dict] = []
    for path in sorted((FIXTURES / "kueue").glob("*workloads.json")) + sorted(
            (FIXTURES / "k8s" / "batch-schedulers").glob("kueue-workload*.json")):
        data = json.loads(path.read_text())
        items = data if isinstance(data, list) else data.get("items", [data])
        out += [o for o in items if isinstance(o, dict) and o.get("kind", "Workload") == "Workload" and "spec" in o]
    return out


def _bench_cluster() -> tuple[list[dict], list[dict]]:
    """The bench's Workloads and the pods of the admitted ones (Kueue's annotation on them)."""
    cluster = Cluster(40, 4, 1500, namespaces=20)
    kueue = KueueObjects(cluster, 20, 1500)
    pods = cluster.pods()
    kueue.adopt(pods, cluster.replicasets())
    kueue.make_rest()
    return kueue.workloads, [p for p in pods if "annotations" in p["metadata"]]


def _bench() -> list[dict]:
    return _bench_cluster()[0]


def _apart(obj: dict) -> tuple:
    return header_from(KIND_KUEUE, obj), QueuedWorkload.from_api(obj)


def test_recorded_and_bench_workloads_read_alike_and_fast() -> None:
    recorded, bench = _recorded(), _bench()
    assert len(recorded) >= 20 and len(bench) == 200
    for obj in recorded + bench:
        assert read_workload(obj) == _apart(obj), obj["metadata"]["name"]
    assert all(_fast(o) is not None for o in bench)  # the shape Kueue writes takes the one pass
    assert sum(_fast(o) is not None for o in recorded) >= len(recorded) // 2


_ODD = (None, 0, 1, True, "", "x", [], [{}], {}, {"a": 1}, 2.5)


def _paths(obj: object, path: tuple = ()) -> list[tuple]:
    out = [path] if path else []
    if isinstance(obj, dict):
        for k, v in obj.items():
            out += _paths(v, path + (k,))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            out += _paths(v, path + (i,))
    return out


def _outcome(read: object, obj: dict) -> object:
    try:
        return read(obj)  # type: ignore[operator]
    except Exception as e:  # noqa: BLE001 (fail alike: the same exception type)
        return type(e)


@pytest.mark.parametrize("seed", range(6))
def test_damaged_workloads_read_alike(seed: int) -> None:
    rng = random.Random(seed)
    bases = _recorded() + _bench()[::20]
    for _ in range(400):
        obj = copy.deepcopy(rng.choice(bases))
        for _ in range(rng.randint(1, 3)):
            path = rng.choice(_paths(obj))
            parent = obj
            for k in path[:-1]:
                parent = parent[k]
            if rng.random() < 0.3 and isinstance(parent, dict):
                del parent[path[-1]]
            else:
                parent[path[-1]] = copy.deepcopy(rng.choice(_ODD))
            if not _paths(obj):
                break
        assert _outcome(read_workload, obj) == _outcome(_apart, obj), json.dumps(obj)[:400]


def test_the_model_reads_a_workload_once_for_both_stores() -> None:
    model = ClusterModel()
    objs = _bench()[:30]
    model.apply(Listed(KIND_KUEUE, objs, "1"))
    assert len(model.queues.workloads()) == 30 and len(model.gangs.headers) == 30
    version = (model.queues.version, model.gangs.version)
    assert not model.apply(WatchEvent(KIND_KUEUE, "MODIFIED", objs[0]))  # the same resourceVersion
    assert (model.queues.version, model.gangs.version) == version
    moved = copy.deepcopy(objs[0])
    moved["metadata"]["resourceVersion"] = "99"
    moved["status"]["conditions"][-1]["message"] = "new"
    assert model.apply(WatchEvent(KIND_KUEUE, "MODIFIED", moved))
    w = model.queues.workload(objs[0]["metadata"]["namespace"], objs[0]["metadata"]["name"])
    header = model.gangs.headers[(KIND_KUEUE, w.namespace, w.name)] if w else None
    assert w is not None and header is not None and (w.resource_version, header.resource_version) == ("99", "99")
    assert model.apply(WatchEvent(KIND_KUEUE, "DELETED", moved))
    assert len(model.queues.workloads()) == 29 and len(model.gangs.headers) == 29


def _eager() -> ClusterModel:
    """The model as it was: each store reads every Workload itself, at once."""
    from kubeview.model.kinds import rows_of

    model = ClusterModel()
    model.kinds[KIND_KUEUE] = rows_of(model.gangs, (KIND_KUEUE,))[KIND_KUEUE] + rows_of(model.queues, (KIND_KUEUE,))[KIND_KUEUE]
    return model


def _reads(model: ClusterModel, rng: random.Random, keys: list[tuple[str, str]]) -> list:
    out: list = []
    for _ in range(rng.randint(0, 3)):
        pick = rng.randrange(8)
        ns, name = rng.choice(keys)
        if pick == 0:
            out.append(("held", model.queues.held()))
        elif pick == 1:
            out.append(("workload", model.queues.workload(ns, name)))
        elif pick == 2:
            out.append(("gang", model.gangs.get(KIND_KUEUE, ns, name)))
        elif pick == 3:
            out.append(("len", len(model.queues), len(model.queues.held_owners())))
        elif pick == 4:
            _groups_as_made_again(model)
            out.append(("waiting", [model.queues.waiting(cq.name) for cq in model.queues.cluster_queues()],
                        model.queues.pending_count(), model.queues.placed()))
        elif pick == 5:
            out.append(("orphans", model.gangs.orphans()))
        elif pick == 6:  # the header's and the Workloads rows' reads, which read no Workload
            out.append(("held pods", model.queues.held_pods(), model.queues.held_owners()))
        else:  # built again only where touched: as built from scratch
            fresh = sorted((model.gangs._gang(h) for h in model.gangs.headers.values()),
                           key=lambda g: (g.namespace, g.name, g.kind))
            assert model.gangs.gangs() == fresh
            out.append(("gangs", fresh))
    return out


def _groups_as_made_again(model: ClusterModel) -> None:
    """The lists and groups patched per watch event (model/queues/placed.py) equal those made from scratch."""
    store = model.queues
    placed = store.placed()
    assert [w for w, _ in placed] == store.workloads() and [cq for _, cq in placed] == store.places()
    assert placed == [(w, store.cluster_queue_of(w)) for w in store.workloads()]
    names = {cq for _, cq in placed if cq is not None} | {cq.name for cq in store.cluster_queues()}
    for name in names:
        mine = [w for w, cq in placed if cq == name and w.state != "finished"]
        assert store.workloads_of(name) == mine, name
        pending = [w for w in mine if w.waiting]
        assert sorted(store.waiting(name), key=lambda w: w.key) == pending, name
        assert store.local_queues_of(name) == [q for q in store.local_queues() if q.cluster_queue == name]


@pytest.mark.parametrize("seed", range(4))
def test_read_when_asked_answers_as_read_at_once(seed: int) -> None:
    rng = random.Random(seed)
    workloads, pods = _bench_cluster()
    objs = workloads[::4] + _recorded()
    keys = [(o["metadata"]["namespace"], o["metadata"]["name"]) for o in objs]
    lazy, eager = ClusterModel(), _eager()
    for step in range(160):
        r = rng.random()
        if r < 0.2:  # a member pod moves, goes, comes back, or the pods are listed again
            pod = copy.deepcopy(rng.choice(pods))
            pod["metadata"]["resourceVersion"] = str(5000 + step)
            pod["status"]["phase"] = rng.choice(["Running", "Pending", "Succeeded"])
            events: list = [Listed("Pod", rng.sample(pods, len(pods) // 2), str(step))] if r < 0.02 else [
                WatchEvent("Pod", rng.choice(["MODIFIED", "DELETED", "ADDED"]), pod)]
        elif r < 0.28:
            batch = rng.sample(objs, rng.randint(0, len(objs)))
            events = [Listed(KIND_KUEUE, batch, str(step))]
        else:
            obj = copy.deepcopy(rng.choice(objs))
            if rng.random() < 0.6:  # a new version, its state moved
                obj["metadata"]["resourceVersion"] = str(1000 + step)
                conds = obj.setdefault("status", {}).setdefault("conditions", [])
                if rng.random() < 0.15:  # admitted to another ClusterQueue, or its admission gone
                    status = obj["status"]
                    if status.get("admission") and rng.random() < 0.5:
                        status["admission"] = {**status["admission"], "clusterQueue": f"cq-{rng.randrange(3)}"}
                    else:
                        status.pop("admission", None)
                if conds and rng.random() < 0.5:
                    conds[-1]["status"] = rng.choice(["True", "False"])
                else:
                    conds.append({"type": rng.choice(["Finished", "Admitted", "QuotaReserved", "Evicted"]),
                                  "status": rng.choice(["True", "False"]), "reason": "R", "message": f"m{step}"})
            events = [WatchEvent(KIND_KUEUE, rng.choice(["ADDED", "MODIFIED", "MODIFIED", "DELETED"]), obj)]
        for e in events:
            assert lazy.apply(e) == eager.apply(e), step
        state = rng.getstate()
        got = _reads(lazy, rng, keys)
        rng.setstate(state)
        assert got == _reads(eager, rng, keys), step
    assert lazy.queues.held() == eager.queues.held() and lazy.queues.workloads() == eager.queues.workloads()
    pods: dict[str, int] = {}
    for w in eager.queues.held():
        pods[w.namespace] = pods.get(w.namespace, 0) + w.pods
    owners = {(w.owner.partition("/")[0], w.namespace, w.owner.partition("/")[2]): w.key
              for w in eager.queues.held() if w.owner}
    assert lazy.queues.held_pods() == pods and lazy.queues.held_owners() == owners and pods
    assert lazy.queues.pending_count() == len(eager.queues.held())
    assert lazy.gangs.gangs() == eager.gangs.gangs() and lazy.gangs.headers == eager.gangs.headers


@pytest.mark.parametrize("seed", range(3))
def test_a_hold_read_from_the_object_is_what_the_view_says(seed: int) -> None:
    """`hold_of` (the header's count of held pods, without reading the Workload) says what the view says,
    or that it cannot (the view is read then): on the recorded and the bench's Workloads and on damaged ones.
    A damaged object the reader refuses (the CRD's schema refuses it too) may still be counted."""
    rng = random.Random(seed)
    bases = _recorded() + _bench()[::10]
    for obj in bases:
        w = QueuedWorkload.from_api(obj)
        assert _hold_of(obj) == ((w.pods, w.owner) if w.waiting else None), obj["metadata"]["name"]
    sure = 0
    for _ in range(600):
        obj = copy.deepcopy(rng.choice(bases))
        path = rng.choice(_paths(obj))
        parent = obj
        for k in path[:-1]:
            parent = parent[k]
        parent[path[-1]] = copy.deepcopy(rng.choice(_ODD))
        hold, view = _hold_of(obj), _outcome(QueuedWorkload.from_api, obj)
        if hold is not _UNSURE and isinstance(view, QueuedWorkload):
            sure += 1
            assert hold == ((view.pods, view.owner) if view.waiting else None), json.dumps(obj)[:400]
    assert sure > 300
