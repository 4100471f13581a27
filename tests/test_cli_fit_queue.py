"""`kubeview fit` and Kueue (commands/fit_queue.py): a Job naming a LocalQueue whose ClusterQueue has its
nominal GPUs reserved fits on the nodes and still waits, in the ClusterQueue's figures; one that fits the
queue, or names none, is unchanged. Pure: the manifest's units (workload_fit.units_from) placed on a
model holding one 8-GPU node and the Kueue objects of tests/model/test_queues.py, as `run` does."""

from __future__ import annotations

import sys
from pathlib import Path

from kubeview.commands.fit import text
from kubeview.commands.fit_queue import queue_answer, queue_doc, queues_of, unit_requests
from kubeview.model.events import Listed
from kubeview.scheduling.config import PackingConfig
from kubeview.scheduling.workload_fit import fit_units, flatten, units_from

sys.path.insert(0, str(Path(__file__).resolve().parent / "model"))
from test_queues import team  # noqa: E402

NODE = {"metadata": {"name": "gpu-node-3"}, "status": {
    "allocatable": {"cpu": "64", "memory": "256Gi", "pods": "110", "nvidia.com/gpu": "8"},
    "conditions": [{"type": "Ready", "status": "True"}]}}


def job(name: str, gpus: int, parallelism: int = 1, queue: str | None = "team-q") -> dict:
    labels = {"kueue.x-k8s.io/queue-name": queue} if queue else {}
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": name, "namespace": "team-a", "labels": labels},
            "spec": {"parallelism": parallelism, "suspend": True, "template": {"spec": {
                "restartPolicy": "Never", "containers": [{"name": "c", "image": "x", "resources": {
                    "requests": {"cpu": "1", "nvidia.com/gpu": str(gpus)}, "limits": {"nvidia.com/gpu": str(gpus)}}}]}}}}


def answer(*docs: dict) -> tuple[list, list, str]:
    model = team()
    model.apply(Listed("Node", [NODE]))
    units, skipped = units_from(list(docs), "default")
    config = PackingConfig(policy="spread")
    fits = fit_units(model.allocation(), units, config)
    named = queues_of(flatten(list(docs)), "default")
    queued = [queue_answer(model, f.unit, named) for f in fits]
    return fits, queued, text(fits, "spread", "test", skipped, queued=queued)


def test_fits_on_the_node_but_the_clusterqueue_is_used_up() -> None:
    fits, queued, out = answer(job("train", gpus=1, parallelism=2))
    assert fits[0].fits and unit_requests(fits[0].unit) == {"cpu": 2000, "nvidia.com/gpu": 2}
    assert "Job team-a/train (2 pods): does not fit" in out
    assert "  queue: fits on gpu-node-3, but ClusterQueue team-cq's nominal nvidia.com/gpu 4 is used 4/4" in out
    assert queue_doc(queued[0]) == {"localQueue": "team-q", "clusterQueue": "team-cq", "resource": "nvidia.com/gpu",
                                    "reserved": 4, "nominal": 4, "borrow": False,
                                    "words": "ClusterQueue team-cq's nominal nvidia.com/gpu 4 is used 4/4"}


def test_no_queue_named_or_room_in_it_changes_nothing() -> None:
    _, queued, out = answer(job("plain", gpus=1, queue=None))
    assert queued == [None] and "Job team-a/plain (1 pod): fits" in out and "queue:" not in out
    _, queued, out = answer(job("cpu-only", gpus=0))
    assert queued == [None] and "fits" in out


def test_a_missing_local_queue_is_said() -> None:
    _, queued, out = answer(job("lost", gpus=1, queue="nope"))
    assert queued[0] is not None and "queue: fits on gpu-node-3, but LocalQueue nope doesn't exist in namespace team-a" in out
