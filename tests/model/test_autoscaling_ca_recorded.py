"""What kubeview's model derives from what the real Cluster Autoscaler wrote (a recording, not a stand-in).

tests/fixtures/autoscaling/ca-recorded/ is CA 1.36.1 (kwok provider) on the realk8s plane, recorded by
scripts/record-cluster-autoscaler.py (its README says how). The story, by construction
(tests/realk8s/ca_story.py): gpu-pool (max 6, 8 GPUs a node) got 10 pods of 8 GPUs and one of 16;
quota-pool's nodes were refused by the "cloud"; slow-pool's node never finished starting; cpu-pool
grew to its max 3 for 3 pods; batch-pool was held at 2 nodes by CA's --cores-total. Each assertion is
read from the recording's own objects (which pods are pending, which nodes exist), then checked against
what the model says: the groups, their sizes against their max, scale-ups in progress, backoffs with
the words CA (and the cloud) wrote, and each pending pod's wait.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kubeview.model.autoscaling.ca_status import go_time
from kubeview.model.autoscaling.groups import CLUSTER_AUTOSCALER, NODES, WAIT_NEVER, Limit, NodeGroup
from kubeview.model.autoscaling.store import CA_STATUS
from kubeview.model.cluster import ClusterModel
from kubeview.model.events import Listed

RECORDED = Path(__file__).resolve().parents[1] / "fixtures" / "autoscaling" / "ca-recorded"
GROUP_LABEL = "cloud.google.com/gke-nodepool"
QUOTA_WORDS = "QUOTA_EXCEEDED: Quota 'NVIDIA_H100_GPUS' exceeded. Limit: 48.0 in region us-central1."


def load(name: str) -> dict:
    return json.loads((RECORDED / name).read_text())


def status_time(name: str) -> float:
    """The moment CA wrote this status (its `time`, Go's time.String())."""
    doc = load(name)["data"]["status"]
    line = next(x for x in doc.splitlines() if x.startswith("time: "))
    stamp = go_time(line[len("time: "):])
    assert stamp is not None
    return stamp


def model_of(status: str = "status-final.json") -> ClusterModel:
    """The model fed the recording's nodes, pods, events and one status ConfigMap, as a list of each."""
    model = ClusterModel()
    model.apply(Listed("Node", load("nodes.json")["items"]))
    model.apply(Listed("Pod", load("pods.json")["items"]))
    model.apply(Listed("Event", load("events-pods.json")["items"]))
    model.apply(Listed(CA_STATUS, [load(status)]))
    return model


def groups_of(model: ClusterModel) -> dict[str, NodeGroup]:
    return {g.name: g for g in model.autoscaling.groups()}


def recorded_nodes(group: str) -> list[dict]:
    return [n for n in load("nodes.json")["items"] if n["metadata"]["labels"].get(GROUP_LABEL) == group]


def pods_of(group: str, phase: str) -> list[str]:
    return sorted(p["metadata"]["name"] for p in load("pods.json")["items"]
                  if p["metadata"]["labels"].get("group") == group and p["status"]["phase"] == phase)


def test_the_recording_is_the_story() -> None:
    """The premises, from the recorded objects themselves."""
    assert len(recorded_nodes("gpu-pool")) == 6 and len(pods_of("gpu-pool", "Running")) == 6
    assert len(pods_of("gpu-pool", "Pending")) == 5  # 10 + `huge` - 6
    assert len(recorded_nodes("cpu-pool")) == 3 and len(pods_of("cpu-pool", "Pending")) == 0
    assert len(recorded_nodes("batch-pool")) == 2 and len(pods_of("batch-pool", "Pending")) == 2
    assert len(recorded_nodes("slow-pool")) == 1 and len(pods_of("slow-pool", "Pending")) == 2
    assert recorded_nodes("quota-pool") == [] and len(pods_of("quota-pool", "Pending")) == 2
    assert "Cluster Autoscaler 1.36.1" in (RECORDED / "capture.log").read_text()


def test_groups_sizes_and_limits() -> None:
    groups = groups_of(model_of())
    assert set(groups) == {"gpu-pool", "cpu-pool", "slow-pool", "quota-pool", "batch-pool"}
    assert {g.autoscaler for g in groups.values()} == {CLUSTER_AUTOSCALER}
    gpu = groups["gpu-pool"]
    assert (gpu.size, gpu.min_size, gpu.max_size, gpu.target) == (6, 0, 6, 6)
    assert gpu.at_limit == Limit(NODES, 6, 6) and gpu.can_add == 0
    assert gpu.gpus == 48 and gpu.health == "Healthy"
    assert gpu.scale_up is None and gpu.backoff is None and gpu.error is None
    assert gpu.node_labels.get(GROUP_LABEL) == "gpu-pool"
    assert groups["cpu-pool"].at_limit == Limit(NODES, 3, 3)
    batch = groups["batch-pool"]
    assert (batch.size, batch.max_size, batch.at_limit, batch.can_add) == (2, 10, None, 8)


def test_backoffs_carry_the_words_ca_and_the_cloud_wrote() -> None:
    groups = groups_of(model_of())
    quota = groups["quota-pool"]
    assert quota.size == 0 and quota.backoff is not None and quota.error is not None
    assert QUOTA_WORDS in quota.error and quota.error.startswith("failed to increase node group size: ")
    slow = groups["slow-pool"]
    assert slow.size == 1 and slow.error is not None
    assert slow.error.startswith("Scale-up timed out for node group slow-pool after ")
    assert all(groups[n].backoff is None for n in ("gpu-pool", "cpu-pool", "batch-pool"))


@pytest.mark.parametrize(("status", "group", "to"), [("status-slow-in-progress.json", "slow-pool", 1),
                                                      ("status-gpu-in-progress.json", "gpu-pool", 6)])
def test_a_scale_up_in_progress(status: str, group: str, to: int) -> None:
    doc = load(status)["data"]["status"]
    assert "status: InProgress" in doc
    g = groups_of(model_of(status))[group]
    assert g.scale_up is not None and g.scale_up.to_size == to
    assert 0 <= g.scale_up.from_size < to
    assert g.backoff is None


def test_states_before_any_pod() -> None:
    groups = groups_of(model_of("status-idle.json"))
    assert all(g.scale_up is None and g.backoff is None for g in groups.values())
    assert groups["gpu-pool"].max_size == 6 and groups["batch-pool"].max_size == 10


def waits() -> dict[str, tuple[str, str, tuple[str, str] | None]]:
    model = model_of()
    now = status_time("status-final.json")
    return {k[1]: (w.state, w.words, w.group) for k, w in model.pod_waits(now).items()}


def test_running_pods_wait_for_nothing() -> None:
    model = model_of()
    for name in pods_of("gpu-pool", "Running") + pods_of("cpu-pool", "Running"):
        assert model.pod_wait(("batch", name)) is None


def test_pods_over_the_max_will_not_get_a_node() -> None:
    got = waits()
    for name in pods_of("gpu-pool", "Pending"):
        assert got[name] == (WAIT_NEVER, "will not get a node: gpu-pool is at its maximum 6",
                             (CLUSTER_AUTOSCALER, "gpu-pool")), name


def test_pods_of_a_refused_group_say_the_clouds_words() -> None:
    got = waits()
    for name in pods_of("quota-pool", "Pending"):
        state, words, group = got[name]
        assert state == WAIT_NEVER and words.startswith("scale-up failed: ") and QUOTA_WORDS in words, name
        assert group == (CLUSTER_AUTOSCALER, "quota-pool")


def test_pods_of_a_timed_out_group_say_so() -> None:
    got = waits()
    for name in pods_of("slow-pool", "Pending"):
        state, words, group = got[name]
        assert state == WAIT_NEVER and group == (CLUSTER_AUTOSCALER, "slow-pool"), name
        assert words.startswith("scale-up failed: Scale-up timed out for node group slow-pool after ")


def test_pods_held_by_the_cores_limit_say_that_limit_not_another_groups_backoff() -> None:
    """Their NotTriggerScaleUp counts every group's reason: "1 exceeded quota: "cluster-wide",
    resources: cpu, 2 max node group size reached, 2 in backoff after failed scale-up" — the backoffs
    and maxes are quota-pool's, slow-pool's, gpu-pool's and cpu-pool's, not batch-pool's."""
    got = waits()
    for name in pods_of("batch-pool", "Pending"):
        state, words, group = got[name]
        assert state == WAIT_NEVER, name
        assert words == 'will not get a node: CA\'s limit "cluster-wide" on cpu is reached', words
        assert group == (CLUSTER_AUTOSCALER, "batch-pool")
        assert QUOTA_WORDS not in words and "timed out" not in words


@pytest.mark.parametrize(("message", "words"), [
    ('pod didn\'t trigger scale-up: 1 exceeded quota: "cluster-wide", resources: cpu, memory, 2 max node group size reached',
     'CA\'s limit "cluster-wide" on cpu, memory is reached'),
    ("pod didn't trigger scale-up: 1 max cluster cpu, memory limit reached", "CA's cluster-wide cpu, memory limit is reached")])
def test_ca_limit_words_of_1_36_and_before(message: str, words: str) -> None:
    """1.36 says its --cores-total/--memory-total limit as a quota (the recording above); older CAs
    said "max cluster cpu, memory limit reached" (the same file's history)."""
    from kubeview.model.autoscaling.waits import _quota_words, not_triggered_reasons
    assert _quota_words(not_triggered_reasons(message)) == words


def test_snapshot_json_of_the_recording() -> None:
    """`snapshot --json`'s autoscaling section over the recorded objects: every group's state in one
    word, and every pending pod counted as waiting for nothing that will come."""
    from kubeview.snapshot.autoscaling import autoscaling_doc
    doc = autoscaling_doc(model_of(), status_time("status-final.json"))
    states = {g["name"]: (g["state"], g["size"], g["maxSize"]) for g in doc["groups"]}
    assert states == {"gpu-pool": ("at-max", 6, 6), "cpu-pool": ("at-max", 3, 3), "batch-pool": ("steady", 2, 10),
                      "slow-pool": ("failed", 1, 4), "quota-pool": ("failed", 0, 4)}
    pending = sum(len(pods_of(g, "Pending")) for g in ("gpu-pool", "quota-pool", "slow-pool", "batch-pool"))
    assert doc["pending"] == {"room": 0, "nodes": 0, "never": pending}
    assert {w["name"] for w in doc["waits"]} == {n for g in ("gpu-pool", "quota-pool", "slow-pool", "batch-pool")
                                                  for n in pods_of(g, "Pending")}
