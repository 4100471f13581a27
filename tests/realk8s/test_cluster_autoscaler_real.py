"""The real Cluster Autoscaler (1.36.1, kwok provider) on its own realk8s plane, and kubeview reading it.

Several rounds, each with a node-group max chosen for it: CA is (re)started with gpu-pool's max M, a
fresh namespace gets M + extra pods of 8 GPUs (one a node) and 2 pods on quota-pool, whose Nodes the
"cloud" refuses (a ValidatingAdmissionPolicy standing in for a cloud's quota error: ca_objects.py).
Premises by construction: M nodes can hold M pods, so exactly `extra` must stay Pending. CA waits 30 s
before it acts when every pending pod that asks for GPUs is younger than that (core/static_autoscaler.go
allPodsAreNew); a GPU pod no group can take, made in the first round (`anchor`), keeps the later rounds
from waiting.
Judged first on what CA itself wrote (its events on the pods, its status ConfigMap), then on what
kubeview shows: KubeSource feeding a ClusterModel live (nodes, pods, events and CA's status ConfigMap, as
the TUI does), and `kubeview snapshot --json` run once.

Skips, in one line, where the CA binary is not built: its source is not on the Go module proxy
(scripts/build-cluster-autoscaler.sh says why), so a machine without a source checkout cannot build
it; tests/model/test_autoscaling_ca_recorded.py covers the same story from a recording of this CA.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from collections.abc import Iterator

import pytest
from kubernetes import client

from kubeview.model.autoscaling.groups import (
    CLUSTER_AUTOSCALER,
    NODES,
    WAIT_NEVER,
    WAIT_NODES,
    Limit,
    PodWait,
)
from kubeview.model.autoscaling.store import CA_STATUS

from . import ca_objects as ca
from .ca_story import Story
from .conftest import _started
from .live_view import LiveView
from .objects import api, ensure_namespace
from .plane import Plane
from .procs import wait_until

ROUNDS = ((2, 3), (4, 1), (3, 2))  # (gpu-pool's max, pods more than that)
NOT_BUILT = ("no Cluster Autoscaler binary: CA's source is not served by the Go module proxy; built here "
             "from a source checkout (tests/fixtures/autoscaling/ca-recorded/README.md)")


@pytest.fixture(scope="module")
def ca_plane() -> Iterator[Plane]:
    """A plane of its own: CA acts on every pending pod it sees, so it must not see other tests' pods."""
    if ca.binary() is None:
        pytest.skip(NOT_BUILT)
    yield from _started("CA plane")


def restart_ca(plane: Plane, core: client.CoreV1Api, gpu_max: int) -> None:
    """Stop CA, remove the nodes it made and its status, rewrite the groups, start it again."""
    if "cluster-autoscaler" in plane.procs:
        plane.procs.pop("cluster-autoscaler").stop()
    for node in core.list_node(label_selector=ca.GROUP_LABEL).items:
        core.delete_node(node.metadata.name)
    wait_until(lambda: not core.list_node(label_selector=ca.GROUP_LABEL).items, 30, "CA's nodes gone")
    try:
        core.delete_namespaced_config_map(ca.STATUS, ca.NS)
    except client.ApiException as exc:
        if exc.status != 404:
            raise
    ca.setup_groups(plane, {"gpu-pool": gpu_max})
    ca.start(plane, ca.binary() or ca.BUILD)


def clear_rounds(core: client.CoreV1Api) -> None:
    """The tests before: their pods would still ask CA for nodes."""
    for old in core.list_namespace().items:
        if old.metadata.name.startswith("ca-round-"):
            core.delete_namespace(old.metadata.name, grace_period_seconds=0)
    wait_until(lambda: not [p for p in core.list_pod_for_all_namespaces().items
                            if p.metadata.namespace.startswith("ca-round-")], 60, "the earlier rounds' pods gone")


def anchor(core: client.CoreV1Api) -> None:
    """A pod asking for GPUs that no group takes (its nodeSelector names none), Pending for good."""
    ensure_namespace(core, "ca-anchor")
    if not core.list_namespaced_pod("ca-anchor").items:
        pod = ca.gpu_pod("anchor", "no-such-pool", gpus=16)
        core.create_namespaced_pod("ca-anchor", pod)


@pytest.mark.parametrize(("gpu_max", "extra"), ROUNDS, ids=[f"max{m}+{e}" for m, e in ROUNDS])
def test_a_group_at_its_max_and_a_refused_group(ca_plane: Plane, gpu_max: int, extra: int,
                                                realk8s_counts: dict[str, str]) -> None:
    plane = ca_plane
    core = client.CoreV1Api(api(plane.kubeconfig))
    ns = f"ca-round-max{gpu_max}"
    start = time.monotonic()
    clear_rounds(core)
    anchor(core)
    restart_ca(plane, core, gpu_max)
    ensure_namespace(core, ns)
    story = Story(core, ns=ns)
    story.idle()
    story.gpu_batch(gpu_max + extra, gpu_max, huge=False)
    story.quota()

    # --- what CA wrote ---------------------------------------------------------------------------------
    cm = story.status()
    gpu, quota = ca.group_status(cm, "gpu-pool"), ca.group_status(cm, "quota-pool")
    assert (gpu["health"]["maxSize"], gpu["health"]["cloudProviderTarget"]) == (gpu_max, gpu_max)
    assert quota["scaleUp"]["status"] == "Backoff"
    assert quota["scaleUp"]["backoffInfo"]["errorCode"] == "cloudProviderError"
    assert ca.QUOTA_WORDS in quota["scaleUp"]["backoffInfo"]["errorMessage"]
    pending = sorted(p.metadata.name for p in story.pods("gpu-pool") if p.status.phase == "Pending")
    assert len(pending) == extra
    triggered = [e.message for e in core.list_namespaced_event(ns, field_selector="reason=TriggeredScaleUp").items]
    # one step (0->M) or several (0->1, 1->2, ...) as the pods arrive, never past M; a pod says
    # TriggeredScaleUp once in 5 minutes (utils/kubernetes/factory.go), so a later step may have none:
    # the last step is in CA's events on its status ConfigMap, keyed by message and never dropped
    steps = {(int(a), int(b)) for m in triggered for a, b in re.findall(rf"{{gpu-pool (\d+)->(\d+) \(max: {gpu_max}\)}}", m)}
    assert steps and all(m.startswith("pod triggered scale-up: [{gpu-pool ") for m in triggered), triggered
    assert min(a for a, _ in steps) == 0 and max(b for _, b in steps) <= gpu_max, steps
    scaled = story.status_events("ScaledUpGroup")
    assert any(re.search(rf"group gpu-pool size set to {gpu_max} instead of \d+ \(max: {gpu_max}\)$", m) for m in scaled), scaled
    for name in pending:
        said = [e.message for e in core.list_namespaced_event(
            ns, field_selector=f"involvedObject.name={name},reason=NotTriggerScaleUp").items]
        assert said and all("1 max node group size reached" in m for m in said), said
    failed = story.status_events("FailedToScaleUpGroup")
    assert any(ca.QUOTA_WORDS in m and m.startswith("Scale-up failed for group quota-pool: ") for m in failed)

    # --- what kubeview shows: KubeSource live (it lists CA's status ConfigMap itself) ---------------
    view = LiveView(plane.kubeconfig, events=True).start()
    try:
        def shown() -> bool:
            waits = view.read(lambda m: {k[1]: w for k, w in m.pod_waits().items() if k[0] == ns})
            return all(n in waits and waits[n].state == WAIT_NEVER for n in pending)
        wait_until(shown, 30, "kubeview's waits for the pending pods", interval=0.5)
        assert CA_STATUS in view.read(lambda m: m.autoscaling.listed)
        groups = view.read(lambda m: {g.name: g for g in m.autoscaling.groups()})
        waits = view.read(lambda m: {k[1]: w for k, w in m.pod_waits().items() if k[0] == ns})
    finally:
        view.stop()
    g = groups["gpu-pool"]
    assert (g.autoscaler, g.size, g.max_size, g.gpus, g.can_add) == (CLUSTER_AUTOSCALER, gpu_max, gpu_max, 8 * gpu_max, 0)
    assert g.at_limit == Limit(NODES, gpu_max, gpu_max)
    at_max = f"will not get a node: gpu-pool is at its maximum {gpu_max}"
    for name in pending:
        assert (waits[name].words, waits[name].group) == (at_max, (CLUSTER_AUTOSCALER, "gpu-pool"))
    assert groups["quota-pool"].error is not None and ca.QUOTA_WORDS in groups["quota-pool"].error
    quota_pods = [p.metadata.name for p in story.pods("quota-pool")]
    for name in quota_pods:
        w = waits[name]
        assert w.state == WAIT_NEVER and w.words.startswith("scale-up failed: ") and ca.QUOTA_WORDS in w.words

    # --- and `kubeview snapshot --json`, a separate process reading the plane once ---------------------
    out = subprocess.run([sys.executable, "-m", "kubeview", "snapshot", "--json", "-n", ns,
                          "--kubeconfig", str(plane.kubeconfig)], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)["autoscaling"]
    snap = {g["name"]: g for g in doc["groups"]}
    assert (snap["gpu-pool"]["state"], snap["gpu-pool"]["size"], snap["gpu-pool"]["maxSize"]) == ("at-max", gpu_max, gpu_max)
    assert snap["gpu-pool"]["words"] == f"gpu-pool is at its maximum {gpu_max}"
    assert snap["quota-pool"]["state"] == "failed" and ca.QUOTA_WORDS in snap["quota-pool"]["error"]
    said = {w["name"]: w for w in doc["waits"]}
    assert {n: said[n]["words"] for n in pending} == dict.fromkeys(pending, at_max)
    assert all(ca.QUOTA_WORDS in said[n]["words"] for n in quota_pods)
    assert doc["pending"]["never"] == len(pending) + len(quota_pods)
    realk8s_counts[f"CA round max {gpu_max}"] = f"{time.monotonic() - start:.1f} s"


def test_a_scale_up_in_progress_then_timed_out(ca_plane: Plane, realk8s_counts: dict[str, str]) -> None:
    """slow-pool's node keeps CA's startup taint, so CA counts it as not started: InProgress for
    --max-node-provision-time (40 s), then ScaleUpTimedOut and a backoff. kubeview, live, says the pods
    wait for a node while it is in progress, then that the scale-up failed, in CA's words."""
    plane = ca_plane
    core = client.CoreV1Api(api(plane.kubeconfig))
    ns = "ca-round-slow"
    start = time.monotonic()
    clear_rounds(core)
    anchor(core)
    restart_ca(plane, core, ca.GPU_MAX)
    ensure_namespace(core, ns)
    story = Story(core, ns=ns)
    story.idle()
    view = LiveView(plane.kubeconfig, events=True).start()

    def waits() -> dict[str, PodWait]:
        return view.read(lambda m: {k[1]: w for k, w in m.pod_waits().items() if k[0] == ns})

    def scaling(cm: dict | None) -> None:  # called once CA's status says InProgress
        assert (ca.group_status(cm, "slow-pool").get("scaleUp") or {}).get("status") == "InProgress"
        # the pods CA said TriggeredScaleUp on: both, or one when CA acted between the two creations
        # (the other then fits the coming node and CA says nothing about it)
        triggered = {p.metadata.name for p in story.pods("slow-pool") if "TriggeredScaleUp" in story.reasons(p.metadata.name)}
        assert triggered
        try:
            wait_until(lambda: set(waits()) >= triggered and all(waits()[n].state == WAIT_NODES for n in triggered),
                       20, f"kubeview: {sorted(triggered)} wait for a node")
        except AssertionError as exc:
            raise AssertionError(f"{exc}; kubeview's waits: {waits()}") from None
        for w in (waits()[n] for n in triggered):
            assert w.words.startswith("waiting for a node: node group slow-pool scaling 0 → 1 (in progress"), w.words
            assert w.group == (CLUSTER_AUTOSCALER, "slow-pool")
            assert w.detail == "pod triggered scale-up: [{slow-pool 0->1 (max: 4)}]"

    try:
        story.slow(in_progress=scaling)
        timed_out = "scale-up failed: Scale-up timed out for node group slow-pool after "
        try:
            wait_until(lambda: len(waits()) == 2 and all(w.words.startswith(timed_out) for w in waits().values()),
                       20, "kubeview: the slow-pool pods' scale-up failed")
        except AssertionError as exc:
            raise AssertionError(f"{exc}; kubeview's waits: {waits()}") from None
        assert all(w.state == WAIT_NEVER for w in waits().values())
        slow = view.read(lambda m: m.autoscaling.group((CLUSTER_AUTOSCALER, "slow-pool")))
        assert slow is not None and slow.scale_up is None and slow.size == 1
        assert slow.error is not None and slow.error.startswith("Scale-up timed out for node group slow-pool after ")
    finally:
        view.stop()
    assert any(m.startswith("Nodes added to group slow-pool failed to register within ")
               for m in story.status_events("ScaleUpTimedOut"))
    realk8s_counts["CA in progress, then timed out"] = f"{time.monotonic() - start:.1f} s"
