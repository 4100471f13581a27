"""The quota tally (model/quota/tally.py) kept pod by pod equals `count_usage`'s pass over the pods, after
every kind of pod event and relist, read at random moments (seeded clusters)."""

from __future__ import annotations

import random

import pytest

from kubeview.model.cluster import ClusterModel
from kubeview.model.events import Listed, WatchEvent
from kubeview.model.quota.counting import count_usage, pods_by_namespace
from kubeview.model.quota.tally import count_from_totals

NAMESPACES = ("a", "b", "c")
HARD = {"pods": "50", "cpu": "10", "requests.cpu": "10", "requests.memory": "10Gi", "limits.memory": "20Gi",
        "requests.nvidia.com/gpu": "8", "limits.cpu": "10", "count/pods": "50"}


def pod(rng: random.Random, ns: str, name: str, rv: int) -> dict:
    kind = rng.randrange(4)
    resources: dict = {}
    if kind == 1:
        resources = {"requests": {"cpu": rng.choice(["100m", "1", "2"]), "memory": "1Gi"}}
    elif kind == 2:
        resources = {"requests": {"cpu": "500m", "nvidia.com/gpu": str(rng.randrange(1, 3))},
                     "limits": {"memory": "2Gi", "cpu": "1", "nvidia.com/gpu": "1"}}
    elif kind == 3:
        resources = {"limits": {"cpu": "250m"}, "requests": {"cpu": "250m"}}
    return {"metadata": {"name": name, "namespace": ns, "uid": f"{ns}-{name}-{rv}", "resourceVersion": str(rv)},
            "spec": {"containers": [{"name": "c", "resources": resources}]},
            "status": {"phase": rng.choice(["Pending", "Running", "Running", "Succeeded", "Failed"])}}


def quotas() -> list[dict]:
    out = []
    for i, ns in enumerate(NAMESPACES):
        for name, scopes in (("all", []), ("best", ["BestEffort"]), ("not-best", ["NotBestEffort"])):
            out.append({"metadata": {"name": name, "namespace": ns, "uid": f"q{i}{name}", "resourceVersion": "1"},
                        "spec": {"hard": HARD if name != "best" else {"pods": "5"}, "scopes": scopes},
                        "status": {}})
    return out


def seeded_pods(rng: random.Random, n: int) -> dict[tuple[str, str], dict]:
    """n pods spread over the namespaces at resourceVersion 1, by (namespace, name)."""
    live: dict[tuple[str, str], dict] = {}
    for i in range(n):
        ns = rng.choice(NAMESPACES)
        live[(ns, f"p{i}")] = pod(rng, ns, f"p{i}", 1)
    return live


def check(model: ClusterModel) -> None:
    totals = model.quota_tally.current()
    walked = pods_by_namespace(model.pods, set(NAMESPACES))
    for q in model.quotas.quotas():
        assert count_from_totals(q, totals.get(q.namespace)) == count_usage(q, walked[q.namespace]), q.key


@pytest.mark.parametrize("seed", range(6))
def test_the_tally_is_the_walk_after_every_kind_of_pod_event(seed: int) -> None:
    rng = random.Random(seed)
    model = ClusterModel("test")
    rv = 1
    live = seeded_pods(rng, 40)
    model.apply(Listed("Pod", list(live.values()), "1"))
    model.apply(Listed("ResourceQuota", quotas(), "1"))
    check(model)
    for step in range(400):
        rv += 1
        r = rng.random()
        if r < 0.02:  # a relist: the tally starts again at the next read
            model.apply(Listed("Pod", list(live.values()), str(rv)))
        elif r < 0.3 or not live:
            ns = rng.choice(NAMESPACES)
            name = f"n{step}"
            live[(ns, name)] = pod(rng, ns, name, rv)
            model.apply(WatchEvent("Pod", "ADDED", live[(ns, name)]))
        elif r < 0.5:
            key = rng.choice(sorted(live))
            model.apply(WatchEvent("Pod", "DELETED", live.pop(key)))
        else:  # modified: new resources or phase, same pod (sometimes twice before a read)
            key = rng.choice(sorted(live))
            live[key] = pod(rng, key[0], key[1], rv)
            model.apply(WatchEvent("Pod", "MODIFIED", live[key]))
        if rng.random() < 0.3:
            check(model)
    check(model)
    assert model.quota_uses()[("a", "all")]  # the model's read goes through the tally


def test_a_tally_nobody_reads_stops_instead_of_growing(monkeypatch: pytest.MonkeyPatch) -> None:
    """Pods come and go by name (Jobs); a tally not read for long would keep every name it noted."""
    monkeypatch.setattr("kubeview.model.quota.tally.NOTED_MOST", 5)
    rng = random.Random(1)
    model = ClusterModel("test")
    model.apply(Listed("Pod", [pod(rng, "a", "p0", 1)], "1"))
    model.apply(Listed("ResourceQuota", quotas(), "1"))
    check(model)
    for i in range(20):
        model.apply(WatchEvent("Pod", "ADDED", pod(rng, "a", f"job-{i}", 2 + i)))
        model.apply(WatchEvent("Pod", "DELETED", pod(rng, "a", f"job-{i}", 2 + i)))
    assert not model.quota_tally.active and len(model.quota_tally._noted) <= 5
    check(model)  # recounted at the read


def fresh_uses(live: dict[tuple[str, str], dict], quota_objs: dict[tuple[str, str], dict]) -> dict:
    model = ClusterModel("fresh")
    model.apply(Listed("Pod", list(live.values()), "1"))
    model.apply(Listed("ResourceQuota", list(quota_objs.values()), "1"))
    return model.quota_uses()


@pytest.mark.parametrize("seed", range(4))
def test_kept_quota_uses_equal_a_fresh_read_and_move_only_where_pods_or_quotas_moved(seed: int) -> None:
    rng = random.Random(100 + seed)
    model = ClusterModel("test")
    rv = 1
    live = seeded_pods(rng, 30)
    quota_objs = {(q["metadata"]["namespace"], q["metadata"]["name"]): q for q in quotas()}
    model.apply(Listed("Pod", list(live.values()), "1"))
    model.apply(Listed("ResourceQuota", list(quota_objs.values()), "1"))
    before = model.quota_uses()
    reused = 0
    for step in range(300):
        rv += 1
        r = rng.random()
        touched: set[str] | None = set()
        if r < 0.02:
            model.apply(Listed("Pod", list(live.values()), str(rv)))
            touched = None
        elif r < 0.1:  # a quota changes, goes or comes back
            key = rng.choice(sorted(quota_objs))
            q = dict(quota_objs[key], metadata={**quota_objs[key]["metadata"], "resourceVersion": str(rv)})
            if rng.random() < 0.3:
                model.apply(WatchEvent("ResourceQuota", "DELETED", quota_objs.pop(key)))
            else:
                q["spec"] = {**q["spec"], "hard": {**q["spec"]["hard"], "pods": str(rng.randrange(1, 60))}}
                quota_objs[key] = q
                model.apply(WatchEvent("ResourceQuota", "MODIFIED", q))
            touched = None
        elif r < 0.4 or not live:
            ns = rng.choice(NAMESPACES)
            live[(ns, f"n{step}")] = pod(rng, ns, f"n{step}", rv)
            model.apply(WatchEvent("Pod", "ADDED", live[(ns, f"n{step}")]))
            touched.add(ns)
        elif r < 0.6:
            key = rng.choice(sorted(live))
            model.apply(WatchEvent("Pod", "DELETED", live.pop(key)))
            touched.add(key[0])
        else:
            key = rng.choice(sorted(live))
            live[key] = pod(rng, key[0], key[1], rv)
            model.apply(WatchEvent("Pod", "MODIFIED", live[key]))
            touched.add(key[0])
        if rng.random() < 0.4:
            continue  # unread: the next read takes every move since
        now = model.quota_uses()
        assert now == fresh_uses(live, quota_objs), f"step {step}"
        if touched is not None:
            for key, uses in now.items():
                if key[0] not in touched and key in before and before[key] == uses:
                    reused += uses is before[key]
        before = now
    assert reused > 50  # quotas of namespaces no pod moved in kept their figures (the same objects)
