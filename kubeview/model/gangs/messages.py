"""kube-scheduler's gang words, in one place: condition types, reasons and messages of Kubernetes 1.37's
GangScheduling plugin and pod-group scheduling cycle (and 1.36's where they differ).

The model reads conditions by these names, `scheduling/gang_fit.py` writes members' messages with
them, and the embedded cluster records them on its objects, so all three say exactly what the real
kube-scheduler says. Sources (k8s.io/kubernetes v1.37.2, pkg/scheduler):
`framework/plugins/gangscheduling/gangscheduling.go` (PreEnqueue, Permit, PlacementFeasible),
`schedule_one_podgroup.go` (the group cycle and the PodGroup condition), `pkg/apis/scheduling/types.go`.
Pure constants and a few formatters; imports nothing.
"""

from __future__ import annotations

# -- the PodGroup's condition ------------------------------------------------------------------------
CONDITION = "PodGroupInitiallyScheduled"  # 1.37 (scheduling.k8s.io/v1beta1), "till first success"
CONDITION_V1ALPHA2 = "PodGroupScheduled"  # 1.36 (v1alpha2), the recordings in tests/fixtures/k8s/gang/
CONDITIONS = (CONDITION, CONDITION_V1ALPHA2)
DISRUPTION_TARGET = "DisruptionTarget"
REASON_SCHEDULED = "Scheduled"  # condition True (the message is the group status's, usually "")
REASON_UNSCHEDULABLE = "Unschedulable"  # PodGroupReasonUnschedulable
REASON_SCHEDULER_ERROR = "SchedulerError"  # PodGroupReasonSchedulerError
REASON_PREEMPTED = "PreemptionByScheduler"  # DisruptionTarget's reason

# -- the pods' PodScheduled=False ----------------------------------------------------------------------
POD_REASON_UNSCHEDULABLE = "Unschedulable"  # v1.PodReasonUnschedulable: every rejection, gang or not
POD_REASON_SCHEDULER_ERROR = "SchedulerError"
# Not in v1.37.2: issue #27 names a pod reason "NotReadyForScheduling" for pods held at the gang
# barrier; no file of k8s.io/kubernetes@v1.37.2 or k8s.io/api@v0.37.2 contains it. A pod the plugin's
# PreEnqueue holds back (too few members exist yet) gets no PodScheduled condition from the
# scheduler at all, and its PodGroup no status (recorded: tests/fixtures/k8s/gang137, gang-c).

# -- messages ------------------------------------------------------------------------------------------
# Permit (pod-by-pod path): a member that fits waits here for the rest; 1.36 recorded it on the
# members that would have fit: "pod group is unschedulable, waiting for minCount pods from a gang to be
# scheduled, one or more plugins asked to wait and no plugin rejected pod" (tests/fixtures/k8s/gang/).
# 1.37 places a group in one cycle: the members it placed carry `member_held(...)` of the group's
# status instead, those it never tried (it stops once minCount is out of reach) the group's status
# itself, and the PodGroup condition the group status; the placed members' and the condition's go on
# with ", pod group preemption: ..." (PodGroupPostFilter's result). All recorded in
# tests/fixtures/k8s/gang137 (pods-gang-a-pending.json, watch-pods-gangs.jsonl).
WAITING_SCHEDULED = "waiting for minCount pods from a gang to be scheduled"
# PreEnqueue: fewer members exist than minCount (the pods stay out of the active queue)
WAITING_APPEAR = "waiting for minCount pods from a gang to appear in scheduling queue"
GROUP_UNSCHEDULABLE = "pod group is unschedulable"  # errPodGroupUnschedulable


def waiting_for_group(pod_group: str) -> str:
    """PreEnqueue while the pod's PodGroup object does not exist (sic: "pods's")."""
    return f'waiting for pods\'s pod group "{pod_group}" to appear in scheduling queue'


def min_count_unsatisfiable(min_count: int, scheduled: int, remaining: int) -> str:
    """PlacementFeasible's Unschedulable: the group cycle stops, and the members that did fit carry this."""
    return f"minCount ({min_count}) cannot be satisfied: {scheduled} scheduled, {remaining} remaining"


def member_held(group_message: str) -> str:
    """A member the cycle placed, when the group as a whole did not fit (errPodGroupUnschedulable's
    status with the group's message)."""
    return f"{GROUP_UNSCHEDULABLE}, {group_message}"


def min_count_not_yet(min_count: int, scheduled: int, remaining: int) -> str:
    """PlacementFeasible's Wait (turned into Unschedulable when no member is left to try)."""
    return f"minCount ({min_count}) is not yet satisfied: {scheduled} scheduled, {remaining} remaining"


# TopologyAwareWorkloadScheduling (1.37 alpha, off by default): with the gate on every PodGroup is placed
# by `podGroupSchedulingPlacementAlgorithm`: TopologyPlacementGenerator makes one placement per value of
# the group's `schedulingConstraints.topology[0].key` (nodes without the label are in none; no key: one
# placement of all nodes), the group is tried in each, and when none holds it the status of the first
# one tried (in Go map order) is wrapped as below, behind errPodGroupUnschedulable.
NO_PLACEMENTS = "no feasible placements found"  # no node carries the key (framework.go, the generator)


def placements_unavailable(placements: int, first: str) -> str:
    """The group's status when no placement holds it (schedule_one_podgroup.go:1041)."""
    return f"{GROUP_UNSCHEDULABLE}, 0/{placements} placements are available, first placement status: {first}"


def group_point(message: str) -> str:
    """A group's status with its point first, for a cell: errPodGroupUnschedulable's prefix dropped and the
    placement wrapper turned round ("minCount (4) cannot be satisfied: …, pod group preemption: … (0/2
    placements)"); any other message as it is."""
    text = message
    while text.startswith(f"{GROUP_UNSCHEDULABLE}, "):
        text = text[len(GROUP_UNSCHEDULABLE) + 2:]
    head, sep, first = text.partition(" placements are available, first placement status: ")
    if sep and head.startswith("0/") and head[2:].isdigit():
        return f"{group_point(first)} ({head} placements)"
    return text


# Kinds of watch events the model's GangStore takes (the contract's strings, shared by the sources)
KIND_WORKLOAD = "Workload"  # scheduling.k8s.io v1beta1 / v1alpha2
KIND_POD_GROUP = "PodGroup"  # scheduling.k8s.io v1beta1 / v1alpha2
KIND_KAI = "kai.PodGroup"  # scheduling.run.ai
KIND_KUEUE = "kueue.Workload"  # kueue.x-k8s.io
KIND_VOLCANO = "volcano.PodGroup"  # scheduling.volcano.sh
GANG_KINDS = (KIND_WORKLOAD, KIND_POD_GROUP, KIND_KAI, KIND_KUEUE, KIND_VOLCANO)
