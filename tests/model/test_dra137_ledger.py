"""The GPU ledger on the real v1.37.2 objects (tests/fixtures/k8s/dra137, recorded from the plane):
tainted devices are not free, a shared device lists its shares and consumed capacity, admin access
uses nothing up, a prioritized list's alternative is read from the results, and upstream's pool
status is compared with kubeview's figures."""

from __future__ import annotations

import json
from pathlib import Path

from kubeview.model.cluster import ClusterModel
from kubeview.model.events import Listed, WatchEvent
from kubeview.model.gpus.pools import compare

REC = Path(__file__).resolve().parents[1] / "fixtures" / "k8s" / "dra137"
KINDS = (("DeviceClass", "deviceclasses.json"), ("ResourceSlice", "resourceslices.json"),
         ("DeviceTaintRule", "devicetaintrules.json"), ("ResourceClaim", "resourceclaims.json"))


def model(sub: str, *, rules: bool = True, claims: list[dict] | None = None) -> ClusterModel:
    m = ClusterModel()
    for kind, name in KINDS:
        items = json.loads((REC / sub / name).read_text())["items"]
        if kind == "DeviceTaintRule" and not rules:
            items = []
        if kind == "ResourceClaim" and claims is not None:
            items = claims
        m.apply(Listed(kind, items))
    return m


def states(m: ClusterModel, node: str) -> dict:
    return {s.device.name: s for s in m.gpus.node(node).devices}


def test_tainted_devices_are_shown_and_not_free() -> None:
    m = model("placed")
    s = states(m, "dra137-node")
    assert {n: x.state for n, x in s.items()} == {"gpu-0": "allocated", "gpu-1": "tainted", "gpu-2": "tainted",
                                                   "gpu-s": "allocated"}
    assert [t.label() for t in s["gpu-1"].taints] == ["kubeview.test/ecc=double-bit:NoSchedule"]
    assert [t.label() for t in s["gpu-2"].taints] == ["kubeview.test/drain:NoSchedule (rule dra137-node-drain)"]
    ng = m.gpus.node("dra137-node")
    assert (ng.gpu_total, ng.gpu_allocated) == (2, 2)


def test_without_the_rule_its_device_is_free_again() -> None:
    s = states(model("placed", rules=False), "dra137-node")
    assert s["gpu-2"].state == "free" and s["gpu-2"].taints == ()


def test_rule_deleted_by_watch_frees_the_device() -> None:
    m = model("placed")
    rule = json.loads((REC / "placed" / "devicetaintrules.json").read_text())["items"][0]
    assert m.apply(WatchEvent("DeviceTaintRule", "DELETED", rule))
    assert states(m, "dra137-node")["gpu-2"].state == "free"


def test_shared_device_lists_every_share() -> None:
    s = states(model("placed"), "dra137-node")["gpu-s"]
    assert [(h.claim[1], h.consumed["memory"] // 2**30, h.pods) for h in s.shares] == [
        ("prio-a", 10, ("prio-a",)), ("share-a", 30, ("share-a",)), ("share-b", 30, ("share-b",))]
    assert all(h.share_id for h in s.shares) and len({h.share_id for h in s.shares}) == 3
    assert s.consumed == {"memory": 70 * 2**30} and s.device.capacity == {"memory": 80 * 2**30}
    assert s.claim == ("dra137", "prio-a") and s.pods == ("prio-a", "share-a", "share-b")


def test_admin_access_is_not_use() -> None:
    m = model("placed")
    s = states(m, "dra137-node")["gpu-0"]
    assert s.claim == ("dra137", "whole-a") and s.admin == (("dra137-admin", "admin-a"),)
    assert m.gpus.node("dra137-node").gpu_allocated == 2
    # the admin claim alone: the device stays free
    claims = json.loads((REC / "placed" / "resourceclaims.json").read_text())["items"]
    only_admin = [c for c in claims if c["metadata"]["name"] == "admin-a"]
    alone = states(model("placed", claims=only_admin), "dra137-node")["gpu-0"]
    assert alone.state == "free" and alone.claim is None and alone.admin == (("dra137-admin", "admin-a"),)


def test_prioritized_list_alternative() -> None:
    c = model("placed").gpus.claims[("dra137", "prio-a")]
    assert c.chosen() == {"gpu": "shared"}
    assert c.requests[0].alternatives == ("two-whole", "shared")
    assert model("placed").gpus.claims[("dra137", "whole-a")].chosen() == {}


def test_pool_status_compared_with_upstream() -> None:
    rpsr = json.loads((REC / "pool-status" / "resourcepoolstatusrequest.json").read_text())
    claims = json.loads((REC / "pool-status" / "resourceclaims.json").read_text())["items"]
    at_answer = [c for c in claims if c["metadata"]["name"] == "pool-a"]
    m = model("pool-status", claims=at_answer)
    m.apply(Listed("ResourcePoolStatusRequest", [rpsr]))
    assert compare(m.gpus.pool_counts(), m.gpus.upstream.answers) == []
    m = model("pool-status")  # pool-b's share came after upstream answered
    m.apply(Listed("ResourcePoolStatusRequest", [rpsr]))
    diffs = compare(m.gpus.pool_counts(), m.gpus.upstream.answers)
    assert {(d.what, d.ours, d.upstream) for d in diffs} == {("allocated", 2, 1), ("available", 0, 1)}
    answered_at = rpsr["status"]["conditions"][0]["lastTransitionTime"]
    assert {d.as_of for d in diffs} == {answered_at}
    unanswered = {**rpsr, "status": None}
    m.apply(Listed("ResourcePoolStatusRequest", [unanswered]))
    assert compare(m.gpus.pool_counts(), m.gpus.upstream.answers) == []


def test_counters_used_up_are_a_difference_with_its_cause() -> None:
    """Upstream's available ignores shared counters; kubeview's free does not: shown, with why."""
    from kubeview.model.gpus.pools import PoolAnswer, PoolCount, UpstreamPool

    ours = {("d", "p"): PoolCount("n", devices=4, allocated=1, free=1, blocked=2)}
    answer = PoolAnswer("r", "d", None, True, "t", None, 1, {("d", "p"): UpstreamPool("n", 4, 1, 3, 0, None)})
    [diff] = compare(ours, {"r": answer})
    assert (diff.what, diff.ours, diff.upstream) == ("available", 1, 3) and "shared counters" in diff.why


def test_snapshot_carries_taints_shares_admin_alternatives_and_pool_status() -> None:
    from kubeview.snapshot.document import SNAPSHOT_SCHEMA, build_snapshot
    from kubeview.snapshot.schema import validate

    m = model("pool-status")
    m.apply(Listed("ResourcePoolStatusRequest", [json.loads((REC / "pool-status" / "resourcepoolstatusrequest.json")
                                                            .read_text())]))
    doc = json.loads(json.dumps(build_snapshot(m)))
    assert validate(doc, SNAPSHOT_SCHEMA) == []
    dra = doc["dra"]
    devices = {d["name"]: d for d in dra["devices"]}
    assert devices["gpu-1"]["state"] == "tainted"
    assert devices["gpu-2"]["taints"] == [{"key": "kubeview.test/drain", "value": "", "effect": "NoSchedule",
                                           "rule": "dra137-pool-drain"}]
    assert devices["gpu-s"]["shared"] and devices["gpu-s"]["consumed"] == {"memory": 10 * 2**30}
    assert [s["claim"]["name"] for s in devices["gpu-s"]["shares"]] == ["pool-b"]
    assert {(d["field"], d["kubeview"], d["upstream"]) for d in dra["poolStatus"]["differences"]} == {
        ("allocated", 2, 1), ("available", 0, 1)}
    assert dra["poolStatus"]["requests"][0]["answered"] is True

    placed = json.loads(json.dumps(build_snapshot(model("placed"))))
    assert validate(placed, SNAPSHOT_SCHEMA) == []
    claims = {c["name"]: c for c in placed["dra"]["claims"]}
    assert claims["prio-a"]["requests"][0]["chosen"] == "shared"
    assert claims["prio-a"]["requests"][0]["firstAvailable"] == ["two-whole", "shared"]
    assert claims["admin-a"]["devices"][0]["adminAccess"] is True
    assert {d["name"]: d["adminClaims"] for d in placed["dra"]["devices"]}["gpu-0"] == [
        {"namespace": "dra137-admin", "name": "admin-a"}]
    assert placed["dra"]["poolStatus"] == {"requests": [], "differences": []}
