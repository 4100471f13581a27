"""A gang's TopologyConstraint (PodGroup `spec.schedulingConstraints.topology[0].key`) under the real
kube-scheduler v1.37.2 with TopologyAwareWorkloadScheduling on (issue #36 item 2), seen through kubeview.

On the gated plane, ROUNDS rounds side by side, each in its own namespace with its own key
`kubeview.test/rack-rN` (so each gang's placements are its own domains only) and its own kwok nodes:
- two domains of one node with 2 free GPUs each; a gang of 4 pods × 1 nvidia.com/gpu, minCount 4, the
  key on its PodGroup (and the Workload's template). It must wait: no member ever bound, the PodGroup
  `PodGroupInitiallyScheduled=False/Unschedulable`, and kubeview says the same and why, live
  (`fit_of` on `LiveView`), in `kubeview snapshot --json` and `kubeview fit` (subprocesses);
- then a third domain of two nodes with 2 GPUs each: kubeview's fit of the cluster with those nodes
  added (the prediction, made before they exist) places the gang there, and once they are created the
  real scheduler binds it on the same nodes (as a multiset: which member goes to which of two equal
  nodes is a score tie each breaks its own way; how many on each is not).

What the real scheduler wrote (v1.37.2, every round alike; the first run, 2026-11-29), the PodGroup's
PodGroupInitiallyScheduled=False, reason Unschedulable, message:
  "pod group is unschedulable, 0/2 placements are available, first placement status: minCount (4)
  cannot be satisfied: 2 scheduled, 1 remaining, pod group preemption: No preemption victims found for
  incoming preemptor"
and the members' PodScheduled=False (reason Unschedulable) messages:
  2 × "pod group is unschedulable, " + the PodGroup's message (the two the first placement took: the
      prefix twice, errPodGroupUnschedulable on the wrapped status);
  1 × "0/1 nodes are available: 1 Insufficient nvidia.com/gpu." (the one it refused: the domain's node
      count, not the cluster's);
  1 × "pod group is unschedulable, 0/2 placements are available, first placement status: minCount (4)
      cannot be satisfied: 2 scheduled, 1 remaining" (never tried: the group's status before preemption).
kubeview's `fit_of` predicted each of them up to the preemption suffix, and the nodes of the bind.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from kubernetes import client

from kubeview.model.cluster import ClusterModel
from kubeview.model.events import Listed
from kubeview.model.gangs.store import Gang
from kubeview.scheduling.gang_fit import fit_of

from .gang_objects import GROUP, VERSION, group_condition, member, raw_pods, scheduled_condition
from .live_view import LiveView
from .objects import add_node, api, ensure_namespace, wait_nodes_ready
from .plane import REPO, Plane
from .procs import wait_until

ROUNDS = 3
TIMEOUT = 60
POLLS_AFTER = 10
GPUS = {"cpu": "8", "memory": "32Gi", "pods": "110", "nvidia.com/gpu": "2"}


def ns_of(r: int) -> str:
    return f"gang-topo-r{r}"


def key_of(r: int) -> str:
    return f"kubeview.test/rack-r{r}"


def node_of(r: int, name: str) -> str:
    return f"topo-r{r}-{name}"


def gang_objects(r: int, name: str = "g") -> list[dict]:
    """Workload `name`, PodGroup `name` with the round's key, pods `name-0..3` on the round's pool."""
    constraints = {"topology": [{"key": key_of(r)}]}
    policy = {"gang": {"minCount": 4}}
    wl = {"apiVersion": f"{GROUP}/{VERSION}", "kind": "Workload", "metadata": {"name": name, "namespace": ns_of(r)},
          "spec": {"podGroupTemplates": [{"name": "workers", "schedulingPolicy": policy,
                                          "schedulingConstraints": constraints}]}}
    pg = {"apiVersion": f"{GROUP}/{VERSION}", "kind": "PodGroup", "metadata": {"name": name, "namespace": ns_of(r)},
          "spec": {"workloadRef": {"workloadName": name, "templateName": "workers"}, "schedulingPolicy": policy,
                   "schedulingConstraints": constraints}}
    pods = [member(f"{name}-{i}", name, 1, ns_of(r), {"gang": name}) for i in range(4)]
    for p in pods:
        p["metadata"]["namespace"] = ns_of(r)
    return [wl, pg, *pods]


@pytest.fixture(scope="module")
def api_client(gated_plane: Plane) -> client.ApiClient:
    return api(gated_plane.kubeconfig)


@pytest.fixture(scope="module")
def core(api_client) -> Iterator[client.CoreV1Api]:
    core = client.CoreV1Api(api_client)
    made = []
    for r in range(ROUNDS):
        ensure_namespace(core, ns_of(r))
        for rack in "ab":
            made.append(node_of(r, rack))
            add_node(core, made[-1], GPUS, {"pool": ns_of(r), key_of(r): f"rack-{rack}"})
    wait_nodes_ready(core, made)
    yield core
    custom = client.CustomObjectsApi(api_client)
    for r in range(ROUNDS):
        core.delete_collection_namespaced_pod(ns_of(r), grace_period_seconds=0)
        for plural in ("podgroups", "workloads"):
            custom.delete_collection_namespaced_custom_object(GROUP, VERSION, ns_of(r), plural)
    for n in core.list_node(label_selector="type=kwok").items:
        if n.metadata.name.startswith("topo-r"):
            core.delete_node(n.metadata.name)


@pytest.fixture(scope="module")
def view(gated_plane: Plane, core) -> Iterator[LiveView]:  # noqa: ARG001 (nodes first)
    v = LiveView(gated_plane.kubeconfig).start()
    yield v
    v.stop()


def create(api_client: client.ApiClient, objects: list[dict]) -> None:
    custom, core = client.CustomObjectsApi(api_client), client.CoreV1Api(api_client)
    for obj in objects:
        ns = obj["metadata"]["namespace"]
        if obj["kind"] == "Pod":
            core.create_namespaced_pod(ns, obj)
        else:
            custom.create_namespaced_custom_object(GROUP, VERSION, ns, obj["kind"].lower() + "s", obj)


def pod_group(api_client: client.ApiClient, r: int) -> dict:
    return client.CustomObjectsApi(api_client).get_namespaced_custom_object(GROUP, VERSION, ns_of(r), "podgroups", "g")


def kubeview(plane: Plane, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "kubeview", *args, "--kubeconfig", str(plane.kubeconfig)],
                          capture_output=True, text=True, timeout=120, cwd=REPO)


def matches(real: list[str], predicted: list[str | None]) -> bool:
    """Each real message begins with a predicted one (the preemption suffix is kube-scheduler's), one to one."""
    left = [p for p in predicted if p]
    for text in real:
        hit = next((p for p in sorted(left, key=len, reverse=True) if text.startswith(p)), None)
        if hit is None:
            return False
        left.remove(hit)
    return not left


@pytest.fixture(scope="module")
def waiting(api_client, core, view: LiveView, realk8s_counts: dict[str, str]) -> dict[int, dict]:
    """Every round's gang created and settled unschedulable (no member ever bound while polled)."""
    for r in range(ROUNDS):
        create(api_client, gang_objects(r))
    seen: list[int] = []

    def settled() -> bool:
        out = True
        for r in range(ROUNDS):
            pods = raw_pods(core, ns_of(r), "gang=g")
            seen.append(sum(1 for p in pods if p["spec"].get("nodeName")))
            out = out and len(pods) == 4 and all((scheduled_condition(p) or {}).get("status") == "False" for p in pods) \
                and (group_condition(pod_group(api_client, r)) or {}).get("status") == "False"
        return out

    wait_until(settled, TIMEOUT, "every round's members PodScheduled=False and the group Unschedulable", interval=0.05)
    for _ in range(POLLS_AFTER):  # more reads once settled: a late bind would show
        settled()
    assert set(seen) == {0}, f"a member was bound: {seen}"
    realk8s_counts["gang topology 4 x 1 GPU on 2 domains of 2"] = f"{ROUNDS} rounds, {len(seen) // ROUNDS} polls, never bound"
    got = {r: {"group": pod_group(api_client, r), "pods": raw_pods(core, ns_of(r), "gang=g")} for r in range(ROUNDS)}
    realk8s_counts["gang topology, the PodGroup's words"] = repr(group_condition(got[0]["group"])["message"])
    said = Counter(scheduled_condition(p)["message"] for p in got[0]["pods"])
    realk8s_counts["gang topology, the members' words"] = "; ".join(f"{n} × {m!r}" for m, n in said.items())
    return got


def in_view(view: LiveView, r: int) -> Gang | None:
    g = view.read(lambda m: m.gangs.get("PodGroup", ns_of(r), "g"))
    return g if g is not None and len(g.members) == 4 and g.condition_status == "False" and \
        all(m.message for m in g.members) else None


def test_the_gang_waits_and_kubeview_says_why(waiting: dict[int, dict], view: LiveView) -> None:
    for r, got in waiting.items():
        cond = group_condition(got["group"])
        assert (cond["reason"], cond["status"]) == ("Unschedulable", "False")
        g = wait_until(lambda r=r: in_view(view, r), TIMEOUT, f"round {r}'s gang in kubeview with the scheduler's words")
        assert g.topology_key == key_of(r) and g.condition_message == cond["message"]
        fit = view.read(lambda m, g=g: fit_of(m, g))
        assert (fit.fits, fit.domain, fit.placement) == (False, None, [])
        assert fit.domains == {"rack-a": (2, 4, 2), "rack-b": (2, 4, 2)}
        assert fit.summary == (f"4 × 1 GPU: topology {key_of(r)}: no one domain holds 4 pods: "
                               "rack-a allows 2 of 4, rack-b 2 of 4")
        assert fit.message and cond["message"].startswith(fit.message), (cond["message"], fit.message)
        real = [scheduled_condition(p)["message"] for p in got["pods"]]
        assert matches(real, [m.message for m in fit.members]), (real, [m.message for m in fit.members])


def test_snapshot_and_fit_say_it_does_not_fit(waiting: dict[int, dict], gated_plane: Plane, tmp_path: Path) -> None:
    snap = kubeview(gated_plane, "snapshot", "--json")
    assert snap.returncode == 0, snap.stderr
    gangs = {(g["namespace"], g["name"]): g for g in json.loads(snap.stdout)["gangs"]}
    for r, got in waiting.items():
        g = gangs[(ns_of(r), "g")]
        assert g["topologyKey"] == key_of(r) and g["fit"]["fits"] is False and g["fit"]["domain"] is None
        assert {d["name"]: d["room"] for d in g["fit"]["domains"]} == {"rack-a": 2, "rack-b": 2}
        assert group_condition(got["group"])["message"].startswith(g["fit"]["message"])
    probe = tmp_path / "probe.yaml"
    probe.write_text(yaml.safe_dump_all(gang_objects(0, "probe")[1:]))  # PodGroup and pods: the key applies by itself
    out = kubeview(gated_plane, "fit", str(probe))
    assert out.returncode == 1, out.stdout + out.stderr
    assert f"no one {key_of(0)} domain holds all 4 pods" in out.stdout, out.stdout


def test_a_third_domain_binds_it_where_kubeview_said(waiting: dict[int, dict], api_client, core,
                                                     view: LiveView, realk8s_counts: dict[str, str]) -> None:
    third = {r: [(node_of(r, c), {"pool": ns_of(r), key_of(r): "rack-c"}) for c in ("c1", "c2")] for r in waiting}
    predicted = {r: prediction(api_client, r, third[r]) for r in waiting}  # before the nodes exist
    for nodes in third.values():
        for name, labels in nodes:
            add_node(core, name, GPUS, labels)

    def bound(r: int) -> list[dict] | None:
        pods = raw_pods(core, ns_of(r), "gang=g")
        return pods if all(p["spec"].get("nodeName") for p in pods) else None

    for r in waiting:
        pods = wait_until(lambda r=r: bound(r), TIMEOUT, f"round {r}'s gang bound")
        assert Counter(p["spec"]["nodeName"] for p in pods) == predicted[r], predicted[r]
        wait_until(lambda r=r: (group_condition(pod_group(api_client, r)) or {}).get("status") == "True", TIMEOUT,
                   f"round {r}'s group Scheduled")
        g = wait_until(lambda r=r: settled_in_view(view, r), TIMEOUT, f"kubeview sees round {r}'s gang bound")
        assert g.condition_reason == "Scheduled" and {x.node for x in g.members} == set(predicted[r])
    realk8s_counts["gang topology, a third domain of 4"] = f"{ROUNDS} rounds, bound where kubeview predicted"


def settled_in_view(view: LiveView, r: int) -> Gang | None:
    g = view.read(lambda m: m.gangs.get("PodGroup", ns_of(r), "g"))
    return g if g is not None and g.bound == 4 and g.condition_status == "True" else None


def prediction(api_client: client.ApiClient, r: int, extra: list[tuple[str, dict[str, str]]]) -> Counter[str]:
    """kubeview's fit of round r's gang on the cluster as it is plus the `extra` nodes (as `add_node`
    makes them, once kwok has them Ready): where it says the gang goes before any of it binds."""
    core = client.CoreV1Api(api_client)
    nodes = json.loads(core.list_node(_preload_content=False).data)["items"]
    nodes += [{"metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, "type": "kwok", **labels}},
               "spec": {}, "status": {"capacity": GPUS, "allocatable": GPUS,
                                      "conditions": [{"type": "Ready", "status": "True"}]}} for name, labels in extra]
    groups = client.CustomObjectsApi(api_client).list_namespaced_custom_object(GROUP, VERSION, ns_of(r), "podgroups")
    m = ClusterModel()
    m.apply(Listed("Node", nodes))
    m.apply(Listed("Pod", raw_pods(core, ns_of(r))))
    m.apply(Listed("PodGroup", groups["items"]))
    gang = m.gangs.get("PodGroup", ns_of(r), "g")
    assert gang is not None and gang.pending == 4
    fit = fit_of(m, gang)
    assert fit.fits and fit.domain == "rack-c", fit.summary
    return Counter(node for _, node in fit.placement)
