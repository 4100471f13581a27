"""The snapshot's documents kept as text per view (snapshot/kept.py): each made once while its view lives,
and `snapshot_json` equal to the document built afresh over a seeded stream of Workload and pod events
(put, update, delete, relist) on the bench's Kueue mix at a small size, with and without `-n`, with
and without gang fits."""

from __future__ import annotations

import copy
import json
import random
from dataclasses import dataclass

import pytest

from kubeview.bench.model_kueue import kueue_cluster
from kubeview.model.cluster import ClusterModel
from kubeview.model.events import Listed, WatchEvent
from kubeview.model.gangs.messages import KIND_KUEUE
from kubeview.scheduling.gang_fit import fit_of
from kubeview.snapshot.document import build_snapshot, snapshot_json
from kubeview.snapshot.kept import CHUNK, KeptTexts, compact


@dataclass(frozen=True)
class _View:
    name: str


def test_a_document_is_made_once_while_its_view_and_extra_stay() -> None:
    made: list[tuple[str, int]] = []

    def make(v: _View, extra: int) -> dict:
        made.append((v.name, extra))
        return {"name": v.name, "extra": extra}

    kept: KeptTexts[_View, int] = KeptTexts(make)
    assert "".join(kept.array([], [])) == "[]"
    views = [_View(f"v{i}") for i in range(2 * CHUNK + 3)]  # three pieces
    first = "".join(kept.array(views, list(range(len(views)))))
    assert json.loads(first) == [{"name": v.name, "extra": i} for i, v in enumerate(views)]
    assert len(made) == len(views)
    made.clear()
    assert "".join(kept.array(list(views), list(range(len(views))))) == first and made == []
    moved = list(views)
    moved[CHUNK + 1] = _View("new")  # another view in the second piece, and an extra moved in the third
    extras = list(range(len(views)))
    extras[-1] = -1
    text = "".join(kept.array(moved, extras))
    assert made == [("new", CHUNK + 1), (views[-1].name, -1)]
    assert json.loads(text) == [{"name": v.name, "extra": e} for v, e in zip(moved, extras, strict=True)]
    made.clear()
    kept.array(views[1:], extras[1:])  # one gone: every piece shifts, each document is still kept
    assert made == []
    kept.array([_View("v0")] + views[1:], extras)  # an equal view that is another object: made again
    assert made == [("v0", 0)]


def _cluster() -> tuple[ClusterModel, list[dict], list[dict]]:
    """A model of the bench's cluster at a small size, Kueue's four lists applied; its Workloads and the
    pods of the admitted ones."""
    cluster, kueue, pods, replicasets = kueue_cluster(40, 4, 1500, 20)
    model = ClusterModel("kept")
    for kind, objects in [
        ("Node", cluster.nodes()),
        ("Pod", pods),
        ("ReplicaSet", replicasets),
        *kueue.lists(),
    ]:
        model.apply(Listed(kind, objects, "1"))
    _QUEUES[:] = [(kind, obj) for kind, objects in kueue.lists()[1:3] for obj in objects]
    return model, kueue.workloads, [p for p in pods if "annotations" in p["metadata"]]


_QUEUES: list[tuple[str, dict]] = []  # the ClusterQueues and LocalQueues of the last `_cluster()`


def _queue_event(rng: random.Random, step: int) -> list:
    """A ClusterQueue's status moves, or a LocalQueue feeds another ClusterQueue."""
    kind, obj = rng.choice(_QUEUES)
    obj = copy.deepcopy(obj)
    obj["metadata"]["resourceVersion"] = str(3000 + step)
    if kind == "kueue.LocalQueue":
        others = sorted({o["metadata"]["name"] for k, o in _QUEUES if k == "kueue.ClusterQueue"})
        obj["spec"]["clusterQueue"] = rng.choice(others)
    else:
        obj.setdefault("status", {})["pendingWorkloads"] = step
    return [WatchEvent(kind, "MODIFIED", obj)]


def _event(rng: random.Random, step: int, workloads: list[dict], pods: list[dict]) -> list:
    r = rng.random()
    if r < 0.3:  # a member pod moves, goes or comes back
        pod = copy.deepcopy(rng.choice(pods))
        pod["metadata"]["resourceVersion"] = str(5000 + step)
        pod["status"]["phase"] = rng.choice(["Running", "Pending", "Succeeded"])
        return [WatchEvent("Pod", rng.choice(["MODIFIED", "DELETED", "ADDED"]), pod)]
    if r < 0.35:
        return [Listed(KIND_KUEUE, rng.sample(workloads, len(workloads) * 3 // 4), str(step))]
    if r < 0.45:
        return _queue_event(rng, step)
    obj = copy.deepcopy(rng.choice(workloads))
    obj["metadata"]["resourceVersion"] = str(1000 + step)
    conds = obj["status"]["conditions"]
    if rng.random() < 0.5:  # its state moves (admitted, finished, evicted, pending again)
        conds.append(
            {
                "type": rng.choice(["Finished", "Admitted", "QuotaReserved", "Evicted"]),
                "status": rng.choice(["True", "False"]),
                "reason": "R",
                "message": f"m{step}",
            }
        )
    else:
        conds[-1]["message"] = f"said again at step {step}"
    return [WatchEvent(KIND_KUEUE, rng.choice(["ADDED", "MODIFIED", "MODIFIED", "DELETED"]), obj)]


@pytest.mark.parametrize("seed", range(3))
def test_snapshot_json_equals_the_document_built_afresh(seed: int) -> None:
    rng = random.Random(seed)
    model, workloads, pods = _cluster()
    assert json.loads(snapshot_json(model, now=0)) == json.loads(json.dumps(build_snapshot(model, now=0)))
    for step in range(40):
        for e in _event(rng, step, workloads, pods):
            model.apply(e)
        model.display_namespace = rng.choice([None, None, None, "team-3"])
        fits = (
            {g.key: (fit_of(model, g), "spread") for g in rng.sample(model.gangs.gangs(), 3)}
            if rng.random() < 0.2
            else None
        )
        text = snapshot_json(model, now=0, gang_fits=fits)
        fresh = json.loads(json.dumps(build_snapshot(model, now=0, gang_fits=fits)))
        assert json.loads(text) == fresh, step
    assert fresh["queues"]["workloads"] and fresh["gangs"]


def test_compact_text_is_the_standard_librarys() -> None:
    docs = [
        {"a": 1, "b": None, "c": [True, False], "d": {"e": 'x"y\n\t\u0001\\'}, "f": []},
        {"summary": "4 \u00d7 8 GPUs: room for 3", "n": -7},
        {},
    ]
    for doc in docs:
        assert compact(doc) == json.dumps(doc, separators=(",", ":"))
