"""A small, realistic Kueue story on the plane, for the screenshots of the Quota screen's queues
(scripts/screenshots.py `--only kueue`): two teams' ClusterQueues in one cohort, one borrowing, both with
a Job Kueue holds.

- ResourceFlavor `a100`; ClusterQueues `vision` and `language` in cohort `research`, 4 GPUs nominal each
  (kueue.cluster_queue: cpu and memory ample), borrowing unlimited (Kueue's default when no limit is set).
- Namespaces `vision-team` and `language-team`, each a LocalQueue `training` feeding its team's queue.
- Two kwok nodes of 8 GPUs: every admitted pod runs.
- vision's three 2-GPU Jobs are admitted, the third borrowing 2 GPUs of language's unused quota; then
  language's `llama-finetune` (2 GPUs) is admitted (the cohort's 8: 6 then in use); then language's
  `bert-pretrain` (2) and vision's `vit-huge` (4) and `sam-finetune` (2) find no room in the cohort and
  Kueue holds them (no preemption: Kueue's default `reclaimWithinCohort: Never`), in an order of its own.
Each step waits on what Kueue wrote (admitted and the pod Running; held with its reason), never a sleep.
"""

from __future__ import annotations

from dataclasses import dataclass

from .kueue import POOL, Kueue, cluster_queue, flavor, job, local_queue
from .objects import add_node, ensure_namespace, wait_nodes_ready

FLAVOR, COHORT, QUEUE = "a100", "research", "training"
TEAMS = {"vision": "vision-team", "language": "language-team"}  # ClusterQueue -> its team's namespace
NODES = ("gpu-a100-1", "gpu-a100-2")
GPUS = 4  # each ClusterQueue's nominal
TIMEOUT = 90.0


@dataclass(frozen=True)
class Submit:
    """One Job of the story and what Kueue should do with it."""

    cq: str
    name: str
    gpus: int
    admitted: bool


STEPS = (
    (Submit("vision", "resnet-sweep", 2, True), Submit("vision", "detr-train", 2, True),
     Submit("vision", "vit-large", 2, True)),
    (Submit("language", "llama-finetune", 2, True),),
    (Submit("language", "bert-pretrain", 2, False), Submit("vision", "vit-huge", 4, False),
     Submit("vision", "sam-finetune", 2, False)),
)


def _condition(obj: dict | None, kind: str) -> dict | None:
    return next((c for c in ((obj or {}).get("status") or {}).get("conditions") or () if c["type"] == kind), None)


def _done(k: Kueue, s: Submit) -> bool:
    """Admitted with its pod Running, or held with Kueue's reason (QuotaReserved False, Pending)."""
    ns = TEAMS[s.cq]
    wl = k.workload_of(ns, s.name)
    if not s.admitted:
        c = _condition(wl, "QuotaReserved")
        return c is not None and c["status"] == "False" and c.get("reason") == "Pending"
    admitted = _condition(wl, "Admitted")
    pods = k.core.list_namespaced_pod(ns, label_selector=f"batch.kubernetes.io/job-name={s.name}").items
    return admitted is not None and admitted["status"] == "True" and len(pods) == 1 and pods[0].status.phase == "Running"


def setup(k: Kueue) -> None:
    """Namespaces and nodes (before Kueue starts: its Jobs' pods need both)."""
    for ns in TEAMS.values():
        ensure_namespace(k.core, ns)
    for name in NODES:
        add_node(k.core, name, {"cpu": "64", "memory": "512Gi", "pods": "110", "nvidia.com/gpu": "8"}, {POOL: "kueue"})
    wait_nodes_ready(k.core, list(NODES))


def play(k: Kueue) -> None:
    """The queues, then the Jobs step by step, each step waited for as Kueue settles it."""
    k.create(flavor(FLAVOR))
    for cq, ns in TEAMS.items():
        k.create(cluster_queue(cq, FLAVOR, GPUS, cohort=COHORT))
        k.create(local_queue(ns, QUEUE, cq))
    for step in STEPS:
        for s in step:
            k.batch.create_namespaced_job(TEAMS[s.cq], job(TEAMS[s.cq], s.name, QUEUE, s.gpus))
        k.wait(lambda step=step: all(_done(k, s) for s in step), TIMEOUT,
               ", ".join(f"{s.name} {'admitted and running' if s.admitted else 'held'}" for s in step))
    k.wait(lambda: _settled(k), TIMEOUT, "both ClusterQueues' status counting every Workload")


def _settled(k: Kueue) -> bool:
    """Each ClusterQueue's status counts the story's Workloads (Kueue writes it after admitting)."""
    for cq in TEAMS:
        status = k.get("clusterqueues", cq).get("status") or {}
        want = [(s.admitted, s) for step in STEPS for s in step if s.cq == cq]
        if (status.get("admittedWorkloads"), status.get("pendingWorkloads")) != (
                sum(a for a, _ in want), sum(not a for a, _ in want)):
            return False
    return True
