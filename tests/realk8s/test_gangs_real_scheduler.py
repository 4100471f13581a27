"""Gangs with the real kube-scheduler v1.37.2 (issue #27, item 7), seen through kubeview's own view.

On the gated plane (GenericWorkload, WorkloadWithJob on; scheduling.k8s.io/v1beta1 served), two kwok
nodes with 2 GPUs each. Each claim runs ROUNDS times, everything deleted and gone between rounds:
- 3 pods × 2 GPUs, minCount 3: two would fit, three cannot. No member may ever be bound (the API
  is polled the whole time), and kubeview's model (`model.gangs`, its real kube source) shows the gang
  waiting with the scheduler's reasons, and its gang fit (`fit_of`) says why: room for 2 of 3.
- 3 pods × 1 GPU, minCount 3: all three bound, and never fewer once the group settled.
- a Job with `spec.scheduling`: the Job controller's group shows in kubeview under the Job.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from kubernetes import client

from kubeview.model.gangs.store import Gang
from kubeview.scheduling.gang_fit import fit_of

from .gang_objects import (
    GROUP,
    VERSION,
    create_gang,
    gang_job,
    group_condition,
    raw_pods,
    scheduled_condition,
)
from .live_view import LiveView
from .objects import add_node, api, ensure_namespace, wait_nodes_ready
from .plane import Plane
from .procs import wait_until

ROUNDS = 5
NS = "gangs-real"
POOL = "gangs-real"
NODES = ("gang-real-1", "gang-real-2")
TIMEOUT = 60
POLLS_AFTER = 20  # more reads once settled: a late bind would show


@pytest.fixture(scope="module")
def api_client(gated_plane: Plane) -> client.ApiClient:
    return api(gated_plane.kubeconfig)


@pytest.fixture(scope="module")
def core(api_client) -> Iterator[client.CoreV1Api]:
    core = client.CoreV1Api(api_client)
    ensure_namespace(core, NS)
    for n in NODES:
        add_node(core, n, {"cpu": "8", "memory": "32Gi", "pods": "110", "nvidia.com/gpu": "2"}, {"pool": POOL})
    wait_nodes_ready(core, list(NODES))
    yield core
    for n in NODES:
        core.delete_node(n)


@pytest.fixture(scope="module")
def view(gated_plane: Plane, core) -> Iterator[LiveView]:  # noqa: ARG001 (nodes first)
    v = LiveView(gated_plane.kubeconfig).start()
    yield v
    v.stop()


def gang_in_view(view: LiveView, name: str) -> Gang | None:
    return view.read(lambda m: m.gangs.get("PodGroup", NS, name))


def delete_gang(api_client: client.ApiClient, core: client.CoreV1Api, view: LiveView, name: str) -> None:
    custom = client.CustomObjectsApi(api_client)
    core.delete_collection_namespaced_pod(NS, label_selector=f"gang={name}", grace_period_seconds=0)
    custom.delete_namespaced_custom_object(GROUP, VERSION, NS, "podgroups", f"{name}-workers")
    custom.delete_namespaced_custom_object(GROUP, VERSION, NS, "workloads", name)
    wait_until(lambda: not raw_pods(core, NS) and gang_in_view(view, f"{name}-workers") is None, TIMEOUT,
               f"{name}'s pods and group gone (API and kubeview)")


def bound_counts(core: client.CoreV1Api, gang: str, seen: list[int]) -> list[dict]:
    pods = raw_pods(core, NS, f"gang={gang}")
    seen.append(sum(1 for p in pods if p["spec"].get("nodeName")))
    return pods


def test_gang_too_big_binds_nothing_and_kubeview_says_why(api_client, core, view: LiveView,
                                                        realk8s_counts: dict[str, str]) -> None:
    custom = client.CustomObjectsApi(api_client)
    polls = 0
    for r in range(ROUNDS):
        name = f"big-r{r}"
        seen: list[int] = []
        create_gang(api_client, NS, name, 3, 3, 2, POOL)

        def settled(name=name, seen=seen) -> bool:
            pods = bound_counts(core, name, seen)
            group = custom.get_namespaced_custom_object(GROUP, VERSION, NS, "podgroups", f"{name}-workers")
            return len(pods) == 3 and all((scheduled_condition(p) or {}).get("status") == "False" for p in pods) \
                and (group_condition(group) or {}).get("status") == "False"

        wait_until(settled, TIMEOUT, f"{name}: every member PodScheduled=False, the group Unschedulable", interval=0.02)

        def explained(name=name, seen=seen) -> Gang | None:
            bound_counts(core, name, seen)
            g = gang_in_view(view, f"{name}-workers")
            return g if g is not None and len(g.members) == 3 and g.condition_status == "False" and \
                all(m.message for m in g.members) else None

        g = wait_until(explained, TIMEOUT, f"{name} in kubeview with the scheduler's reasons")
        for _ in range(POLLS_AFTER):
            bound_counts(core, name, seen)
        polls += len(seen)
        assert set(seen) == {0}, f"{name}: a member was bound: {seen}"
        assert (g.state, g.bound, g.pending, g.min_count) == ("waiting", 0, 3, 3)
        assert (g.condition_type, g.condition_reason) == ("PodGroupInitiallyScheduled", "Unschedulable")
        assert "minCount (3) cannot be satisfied" in g.condition_message
        # per member: the two the scheduler had placed carry the group's words, the third its own
        reasons = g.waiting_reasons()
        waited = sum(n for text, n in reasons.items() if "minCount (3) cannot be satisfied: 2 scheduled" in text)
        refused = sum(n for text, n in reasons.items() if "Insufficient nvidia.com/gpu" in text)
        assert (waited, refused) == (2, 1), reasons
        fit = view.read(lambda m, g=g: fit_of(m, g))
        assert (fit.fits, fit.room, fit.placement) == (False, 2, [])
        assert "room for 2" in fit.summary and fit.message, fit.summary
        delete_gang(api_client, core, view, name)
    realk8s_counts["gang 3 x 2 GPUs on 2 x 2 GPUs"] = f"{ROUNDS} rounds, {polls} polls, never a member bound"


def test_gang_that_fits_binds_all_three(api_client, core, view: LiveView, realk8s_counts: dict[str, str]) -> None:
    polls = 0
    for r in range(ROUNDS):
        name = f"fits-r{r}"
        seen: list[int] = []
        create_gang(api_client, NS, name, 3, 3, 1, POOL)
        wait_until(lambda name=name, seen=seen: len(bound_counts(core, name, seen)) == 3 and seen[-1] == 3,
                   TIMEOUT, f"{name}'s three members bound", interval=0.02)

        def together(name=name) -> Gang | None:
            g = gang_in_view(view, f"{name}-workers")
            return g if g is not None and g.bound == 3 and g.condition_status == "True" else None

        g = wait_until(together, TIMEOUT, f"{name} bound and Scheduled in kubeview")
        for _ in range(POLLS_AFTER):
            bound_counts(core, name, seen)
        polls += len(seen)
        first = seen.index(3)
        assert all(c == 3 for c in seen[first:]), f"{name}: fewer than 3 bound after all were: {seen}"
        assert seen == sorted(seen), f"{name}: a member came off its node: {seen}"
        assert (g.condition_type, g.condition_reason, g.pending) == ("PodGroupInitiallyScheduled", "Scheduled", 0)
        assert g.state in ("scheduled", "running")
        fit = view.read(lambda m, g=g: fit_of(m, g))
        assert fit.fits and fit.room == 3
        delete_gang(api_client, core, view, name)
    realk8s_counts["gang 3 x 1 GPU"] = f"{ROUNDS} rounds, {polls} polls, all three bound every round"


def test_job_with_scheduling_shows_its_group(api_client, core, view: LiveView,
                                            realk8s_counts: dict[str, str]) -> None:
    batch = client.BatchV1Api(api_client)
    for r in range(ROUNDS):
        name = f"train-r{r}"
        batch.create_namespaced_job(NS, gang_job(name, 2, 2, 1, POOL))

        def shown(name=name) -> Gang | None:
            gangs = view.read(lambda m: [g for g in m.gangs.gangs() if g.owner == f"Job/{name}"])
            return gangs[0] if len(gangs) == 1 and len(gangs[0].members) == 2 else None

        g = wait_until(shown, TIMEOUT, f"Job {name}'s group in kubeview with both pods")
        pods = raw_pods(core, NS, f"job={name}")
        assert {p["spec"]["schedulingGroup"]["podGroupName"] for p in pods} == {g.name}
        assert g.min_count == 2 and g.workload and g.workload.startswith(name)
        wait_until(lambda g=g: (gang_in_view(view, g.name) or g).condition_status == "True", TIMEOUT,
                   f"{g.name} Scheduled in kubeview")
        batch.delete_namespaced_job(name, NS, propagation_policy="Foreground", grace_period_seconds=0)
        wait_until(lambda name=name: not raw_pods(core, NS) and not view.read(
            lambda m: [x for x in m.gangs.gangs() if x.owner == f"Job/{name}"]), TIMEOUT,
            f"Job {name}, its pods and its group gone (garbage collector)")
    realk8s_counts["Job with spec.scheduling"] = f"{ROUNDS} rounds, its group shown under the Job every round"

