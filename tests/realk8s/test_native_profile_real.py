"""Native packing (issue #37, item 1) on the real kube-scheduler v1.37: the generated profile runs
as a second scheduler, `kubeview-scheduler`, beside the plane's default one.

- kube-scheduler accepts the profile, both shapes (MostAllocated, RequestedToCapacityRatio): it
  validates its configuration at start, and /readyz waits for that.
- The 1-1-2 story packs every run, as it does with the extender.
- For >= 200 random GPU pods on mixed nodes, the node kube-scheduler chose is in kubeview's what-if
  best set (native_run.py says how the view is kept current, so the premise holds by construction).
"""

from __future__ import annotations

import random
import time
from collections.abc import Iterator

import pytest
from kubernetes import client

from kubeview.scheduling import PackingConfig
from kubeview.scheduling.native_profile import SCHEDULER_NAME, profile, scoring_of
from kubeview.scheduling.native_scoring import NativeScoring

from .extender_run import Story, clear
from .live_view import LiveView
from .native_run import MixRun, node_shapes
from .objects import add_node, api, ensure_namespace, wait_nodes_ready
from .plane import Plane

STORY_RUNS = 50
MIX_PODS = 240  # >= 200 decisions compared, about 90% of them bound
AGREEMENT = 0.95
NAMESPACE = "native-packing"
STORY_NODES = ("native-story-a", "native-story-b")
STORY_SELECT = {"kubeview.test/native-story": "yes"}
MIX_NODES = 32
MIX_SELECT = {"kubeview.test/native-mix": "yes"}
SEED = 37


@pytest.fixture(scope="module")
def core(plane: Plane) -> Iterator[client.CoreV1Api]:
    core = client.CoreV1Api(api(plane.kubeconfig))
    ensure_namespace(core, NAMESPACE)
    yield core
    if SCHEDULER_NAME in plane.procs:
        plane.procs.pop(SCHEDULER_NAME).stop()
    core.delete_collection_namespaced_pod(NAMESPACE, grace_period_seconds=0)
    for node in core.list_node(label_selector="kubeview.test/native").items:
        core.delete_node(node.metadata.name)


def _start(plane: Plane, scoring: NativeScoring) -> None:
    """(Re)start the second scheduler with the generated profile; kube-scheduler refuses an invalid
    configuration at start, so a ready scheduler is one that accepted it."""
    plane.start_scheduler(SCHEDULER_NAME, {"profiles": [profile(scoring)]})


def test_kube_scheduler_refuses_what_kubeview_refuses(plane: Plane, core: client.CoreV1Api) -> None:  # noqa: ARG001
    """The acceptance above means something: a weight past kubeview's 1..100 bound, written into the
    profile by hand, stops kube-scheduler at start with its validation error."""
    bad = profile(scoring_of(PackingConfig()))
    bad["pluginConfig"][0]["args"]["scoringStrategy"]["resources"][0]["weight"] = 101
    with pytest.raises(AssertionError, match="exited"):
        plane.start_scheduler(SCHEDULER_NAME, {"profiles": [bad]})
    log = plane.procs.pop(SCHEDULER_NAME).tail()
    assert "weight" in log and "101" in log


@pytest.mark.parametrize("strategy", ["MostAllocated", "RequestedToCapacityRatio"])
def test_one_one_two_packs_every_run(plane: Plane, core: client.CoreV1Api, strategy: str,
                                     realk8s_counts: dict[str, str]) -> None:
    if not any(n.metadata.name == STORY_NODES[0] for n in core.list_node(label_selector="kubeview.test/native").items):
        for name in STORY_NODES:
            add_node(core, name, {"cpu": "8", "memory": "32Gi", "pods": "110", "nvidia.com/gpu": "2"},
                     labels={**STORY_SELECT, "kubeview.test/native": "story"})
        wait_nodes_ready(core, list(STORY_NODES))
    _start(plane, scoring_of(PackingConfig(), strategy))
    clear(core, NAMESPACE)
    story = Story(core, NAMESPACE, STORY_SELECT, scheduler=SCHEDULER_NAME)
    for _ in range(STORY_RUNS):
        story.one_packed_run()
    first = {p[n] for p in story.placements for n in p if n.endswith("-0-1gpu")}
    realk8s_counts[f"1-1-2 story, native {strategy}"] = (f"{story.runs} runs in a row, all three bound and packed "
                                                        f"every run (first pod on {sorted(first)}: ties at random)")
    print(f"realk8s 1-1-2 story native {strategy}: {story.runs}/{STORY_RUNS} runs packed")


def test_native_choices_match_the_what_if(plane: Plane, core: client.CoreV1Api,
                                          realk8s_counts: dict[str, str]) -> None:
    rng = random.Random(SEED)
    names = [f"native-mix-{i:02d}" for i in range(MIX_NODES)]
    shapes = node_shapes(rng, MIX_NODES)
    for name, shape in zip(names, shapes, strict=True):
        add_node(core, name, shape, labels={**MIX_SELECT, "kubeview.test/native": "mix"})
    wait_nodes_ready(core, names)
    scoring = scoring_of(PackingConfig())
    _start(plane, scoring)
    clear(core, NAMESPACE)
    view = LiveView(plane.kubeconfig).start()
    try:
        run = MixRun(core, view, NAMESPACE, MIX_SELECT, SCHEDULER_NAME, scoring, rng,
                     gpus=sum(int(s["nvidia.com/gpu"]) for s in shapes))
        start = time.monotonic()
        for i in range(MIX_PODS):
            run.step(i)
        took = time.monotonic() - start
    finally:
        view.stop()
    result = run.result
    realk8s_counts["native profile vs what-if"] = f"{result.words()}, {took:.0f} s"
    print(f"realk8s native profile vs what-if: {result.words()} in {took:.1f} s")
    for line in result.differ:
        print(f"  differs: {line}")
    assert result.total == MIX_PODS >= 200
    assert result.agree >= AGREEMENT * result.total, "\n".join(result.differ)
