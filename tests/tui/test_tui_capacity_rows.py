"""The Capacity screen's pure parts: its rows (rows/capacity.py) and the selected group's story and rough
time (rows/capacity_story.py), on NodeGroup and PodWait values built here."""

from __future__ import annotations

from kubeview.model.autoscaling.groups import (
    CLUSTER_AUTOSCALER,
    EMBEDDED,
    KARPENTER,
    NODES,
    WAIT_NEVER,
    WAIT_NODES,
    Limit,
    NodeGroup,
    PodWait,
    ScaleUp,
)
from kubeview.model.kube_events import EventView
from kubeview.tui.rows import capacity as rows
from kubeview.tui.rows import capacity_story as tale

NOW = 1_800_000_000.0
POOL = NodeGroup(EMBEDDED, "batch-pool", size=6, min_size=0, max_size=6, target=6,
                 limits=(Limit(NODES, 6, 6),), health="Healthy", template={"cpu": 8000, "memory": 32 * 2**30, "pods": 110})
GPU_POOL = NodeGroup(KARPENTER, "gpu", size=6, limits=(Limit("cpu", 96_000, 400_000), Limit("nvidia.com/gpu", 48, 48)),
                     gpus=48, error="InsufficientCapacityError: no capacity in zone a", error_at=NOW - 60)
SCALING = NodeGroup(CLUSTER_AUTOSCALER, "gpu-pool", size=6, min_size=0, max_size=38, target=38,
                    limits=(Limit(NODES, 38, 38),), scale_up=ScaleUp(6, 38, NOW - 120), gpus=48)


def waits(n: int, group: tuple[str, str], state: str = WAIT_NEVER, ns: str = "farm") -> dict:
    return {(ns, f"frames-{i}"): PodWait(state, "w", group) for i in range(n)}


def test_rows_put_the_groups_with_pods_waiting_first_and_each_figure_under_its_header() -> None:
    data = rows.build([GPU_POOL, POOL, SCALING], {**waits(224, POOL.key), **waits(3, SCALING.key, WAIT_NODES, "ml")}, NOW)
    assert rows.order(data) == [POOL.key, SCALING.key, GPU_POOL.key]
    assert rows.order(data, "karp") == [GPU_POOL.key]
    texts = {k: [str(c) for c in rows.cells(data, k)] for k in data.groups}
    assert texts[POOL.key] == ["embedded", "batch-pool", "6", "min 0 max 6", "0", "224", "at-max",
                                "batch-pool is at its maximum 6"]
    assert texts[SCALING.key][:7] == ["CA", "gpu-pool", "6→38", "min 0 max 38", "48", "3", "scaling"]
    assert texts[SCALING.key][7] == "node group gpu-pool scaling 6 → 38 (in progress, 2 min)"
    assert texts[GPU_POOL.key][:7] == ["Karpenter", "gpu", "6", "nvidia.com/gpu 48/48", "48", "0", "failed"]
    assert texts[GPU_POOL.key][7] == "scale-up failed: InsufficientCapacityError: no capacity in zone a"
    assert data.never[POOL.key] == 224 and data.never[SCALING.key] == 0
    assert rows.stamp(data, POOL.key) == rows.stamp(rows.build([POOL], waits(224, POOL.key), NOW), POOL.key)
    hash(rows.stamp(data, GPU_POOL.key))  # the table caches drawn rows by it


def test_pods_per_node_take_the_daemonsets_first() -> None:
    assert tale.per_node(POOL.template, {"cpu": 100}, {"cpu": 1000, "memory": 2 * 2**30}) == 7
    assert tale.per_node(POOL.template, {}, {"cpu": 1000}) == 8
    assert tale.per_node(POOL.template, {}, {"nvidia.com/gpu": 1}) == 0  # the node has none
    assert tale.per_node(None, {}, {"cpu": 1000}) is None


def test_the_rough_time_of_the_demo_batch() -> None:
    """224 frames wait on a group at its max 6, 7 a node, each frame 20 s: 6 rounds, 2 min; the Job's
    3,558 frames left take 85 rounds on 6 nodes, 14 on the 38 its pods asked for."""
    batch = tale.Batch(("Job", "farm", "frames"), 224, {"cpu": 1000}, durations=(19.0, 21.0, 20.0),
                       left=3558, parallelism=266)
    est = tale.estimate(POOL, batch, 7)
    assert (est.nodes, est.can_add, est.wanted, est.pod_seconds, est.lower_bound) == (6, 0, 38, 20.0, False)
    assert est.waiting_seconds == 6 * 20.0
    assert est.job_seconds == 85 * 20.0 and est.job_seconds_wanted == 14 * 20.0
    lines = tale.story(POOL, 224, 224, batch, est, [], NOW)
    assert lines[0] == ("[bold]node group batch-pool[/] (the embedded cluster's, in Cluster Autoscaler's formats): "
                        "6 nodes, min 0, max 6")
    assert "batch-pool is at its maximum 6" in lines[1]
    assert lines[3] == ("Job farm/frames: [bold]224[/] waiting; the group can still add [bold]0[/] nodes; its pods "
                        "would need 38 in all, 7 a node")
    assert lines[4] == ("rough time: 224 waiting ÷ (6 nodes × 7) = 6 rounds × ≈ 20s a pod (mean run of 3 finished "
                        "pods) = [bold]≈ 2m00s[/]")
    assert lines[5] == ("the Job's 3,558 left: [bold]≈ 28m20s[/] on 6 nodes; on the 38 nodes its pods asked for, "
                        "≈ 4m40s")


def test_before_any_pod_finished_the_time_is_a_lower_bound_and_says_so() -> None:
    batch = tale.Batch(("Job", "farm", "frames"), 224, {"cpu": 1000}, oldest_running=12.0, left=3600,
                       parallelism=266)
    est = tale.estimate(POOL, batch, 7)
    assert (est.pod_seconds, est.lower_bound, est.basis) == (12.0, True, "none finished yet: the oldest running "
                                                                          "pod's age so far")
    line = tale.story(POOL, 224, 224, batch, est, [], NOW)[4]
    assert "at least 12s a pod" in line and line.endswith("= [bold]at least 1m12s[/]")
    unknown = tale.estimate(POOL, tale.Batch(("ReplicaSet", "batch", "web"), 3, {"cpu": 1000}), 7)
    assert unknown.pod_seconds is None and unknown.waiting_seconds is None and unknown.job_seconds is None


def test_a_group_that_can_grow_counts_the_nodes_it_can_add() -> None:
    half = NodeGroup(CLUSTER_AUTOSCALER, "g", size=2, min_size=0, max_size=10, target=2, limits=(Limit(NODES, 2, 10),))
    est = tale.estimate(half, tale.Batch(("Job", "a", "b"), 100, {"cpu": 1000}, durations=(60.0,), left=100,
                                         parallelism=100), 10)
    assert (est.can_add, est.nodes, est.wanted) == (8, 10, 12)
    assert est.waiting_seconds == 60.0  # 100 pods, 100 slots on the 10 nodes it can reach: one round


def test_the_story_lists_the_recent_scale_ups_and_failures_newest_first() -> None:
    def event(reason: str, message: str, t: float, type_: str = "Normal") -> EventView:
        return EventView(("kube-system", f"e{t}"), ("ConfigMap", "kube-system", "cluster-autoscaler-status"), "u",
                         type_, reason, message, "cluster-autoscaler", 1, t, t)

    events = [event("FailedToScaleUpGroup", "Scale-up failed for group gpu-pool: quota", NOW - 30, "Warning"),
              event("ScaledUpGroup", "Scale-up: group gpu-pool size set to 38 instead of 6 (max: 38)", NOW - 120)]
    lines = tale.story(SCALING, 3, 0, None, None, events, NOW)
    assert lines[1] == "[cyan]node group gpu-pool scaling 6 → 38 (in progress, 2 min)[/]"
    assert lines[2] == "[bold]3[/] pods wait on it"
    assert lines[3:] == ["[bold]recent scale-ups and failures[/]",
                         "  [red] 30s ago FailedToScaleUpGroup[/] Scale-up failed for group gpu-pool: quota",
                         "  [dim]  2m ago ScaledUpGroup[/] Scale-up: group gpu-pool size set to 38 instead of 6 (max: 38)"]
    nodepool = tale.story(GPU_POOL, 0, 0, None, None, [], NOW)
    assert nodepool[0] == ("[bold]NodePool gpu[/] (Karpenter): 6 nodes, limits cpu 96/400, nvidia.com/gpu 48/48, "
                           "48 GPUs")
    assert nodepool[1].startswith("[bold red]scale-up failed: InsufficientCapacityError")
