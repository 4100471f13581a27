"""The extender under the real kube-scheduler v1.37 with the shipped configuration (issue #25, 3b).

Two kwok nodes with 2 GPUs each; pods asking 1, 1 and 2 GPUs. The default scheduler alone spreads
the first two and strands the third; with the extender every run must pack all three (kube-scheduler
binds them: the shipped configuration has no bindVerb). Runs follow
each other with no pause: the next run's pods are created while the last run's are being deleted,
the case where a stale view would leave the 2-GPU pod Pending.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from kubernetes import client

from .extender_run import (
    ExtenderProc,
    Story,
    clear,
    extender_on_gpu_nodes,
    scheduler_config,
    stop_and_clean,
    wait_gone,
)
from .objects import api
from .plane import REPO, Plane
from .procs import wait_until

RUNS = 100  # the issue asks for at least 50; a run takes ~0.1 s here
BIND_RUNS = 20  # the opt-in bindVerb: the same story, fewer runs
SPREAD_RUNS = 30  # 1 in ~30 failed while the extender scored on a view older than a deletion
NAMESPACE = "gpu-story"
NODES = ("gpu-story-a", "gpu-story-b")
SELECT = {"kubeview.test/gpu-story": "yes"}  # the pods go to these two nodes only, whatever other tests left


@pytest.fixture(scope="module")
def core(plane: Plane) -> client.CoreV1Api:
    return client.CoreV1Api(api(plane.kubeconfig))


@pytest.fixture(scope="module")
def extender(plane: Plane, core: client.CoreV1Api, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ExtenderProc]:
    """Nodes, the shipped extender RBAC, the extender as its ServiceAccount, kube-scheduler pointed at it."""
    ext = extender_on_gpu_nodes(plane, core, NAMESPACE, dict.fromkeys(NODES, "2"), SELECT, tmp_path_factory.mktemp("ext"))
    yield ext
    plane.set_scheduler_config({})
    stop_and_clean(ext, core, NAMESPACE, list(NODES))


@pytest.mark.parametrize("node_cache_capable", [True, False], ids=["nodeCacheCapable", "fullNodes"])
def test_one_one_two_packs_every_run(plane: Plane, core, extender: ExtenderProc, node_cache_capable: bool,
                                     realk8s_counts: dict[str, str]) -> None:
    plane.set_scheduler_config(scheduler_config(extender.url, node_cache_capable))
    clear(core, NAMESPACE)
    story = Story(core, NAMESPACE, SELECT)
    binds, prioritizes = extender.calls("bind"), extender.calls("prioritize")
    for _ in range(RUNS):
        story.one_packed_run()
    # every 1-GPU pod was scored by the extender (the 2-GPU pod fits one node only); kube-scheduler
    # bound them all itself (no bindVerb shipped): the extender's predictions packed them
    assert extender.calls("prioritize") - prioritizes >= 2 * RUNS
    assert extender.calls("bind") == binds
    mode = "nodeCacheCapable=true" if node_cache_capable else "nodeCacheCapable=false"
    realk8s_counts[f"1-1-2 story, {mode}"] = f"{story.runs} runs in a row, all three bound and packed every run"
    print(f"realk8s 1-1-2 story {mode}: {story.runs}/{RUNS} runs packed")


def test_opt_in_bind_verb_binds_every_gpu_pod(plane: Plane, core, extender: ExtenderProc) -> None:
    """`bindVerb: bind` with bind/pods-binding-rbac.yaml: the extender posts every GPU pod's Binding, as
    its own least-privilege account, and the story packs as it does without."""
    rbac = str(REPO / "manifests" / "scheduler" / "bind" / "pods-binding-rbac.yaml")
    can_bind = ("auth", "can-i", "create", "pods", "--subresource=binding", "-n", NAMESPACE,
                "--as=system:serviceaccount:kubeview-system:kubeview-extender")
    assert plane.kubectl(*can_bind, check=False).stdout.strip() == "no"  # not with the shipped role alone
    plane.kubectl("apply", "-f", rbac)
    try:
        wait_until(lambda: plane.kubectl(*can_bind, check=False).stdout.strip() == "yes", 20,
                   "the extender's account allowed to bind (the authorizer's RBAC cache)")
        config = scheduler_config(extender.url, True)
        config["extenders"][0]["bindVerb"] = "bind"
        plane.set_scheduler_config(config)
        clear(core, NAMESPACE)
        story = Story(core, NAMESPACE, SELECT)
        binds = extender.calls("bind")
        for _ in range(BIND_RUNS):
            story.one_packed_run()
        assert extender.calls("bind") - binds == 3 * BIND_RUNS  # kube-scheduler bound none by itself
    finally:
        plane.kubectl("delete", "-f", rbac, "--wait=false", check=False)
        plane.set_scheduler_config(scheduler_config(extender.url, True))
    wait_until(lambda: plane.kubectl(*can_bind, check=False).stdout.strip() == "no", 20,
               "the bind grant gone again")


def test_put_config_spread_then_pack(plane: Plane, core, extender: ExtenderProc) -> None:
    """spread puts the 1-GPU pods on different nodes and strands the 2-GPU pod; pack again packs."""
    plane.set_scheduler_config(scheduler_config(extender.url, True))
    clear(core, NAMESPACE)
    story = Story(core, NAMESPACE, SELECT)
    extender.put_config({"policy": "spread"})
    for i in range(SPREAD_RUNS):  # each run's pods are created while the last run's are being deleted
        run = f"spread{i}"
        ones = story.create(run, (1, 1))
        nodes = story.wait_bound(run, 2)
        assert nodes[ones[0]] != nodes[ones[1]], f"spread put both 1-GPU pods on one node: {nodes}"
        story.delete(run)
    wait_gone(core, NAMESPACE)
    story.create("spread-last", (1, 1))
    last = story.wait_bound("spread-last", 2)
    assert len(set(last.values())) == 2, f"spread put both 1-GPU pods on one node: {last}"
    (two,) = story.create("spread-last-two", (2,))
    wait_until(lambda: story.unschedulable(two), 20, "the 2-GPU pod Unschedulable under spread")
    story.delete("spread-last")
    story.delete("spread-last-two")
    assert extender.put_config({"policy": "pack"})["policy"] == "pack"
    for _ in range(5):
        story.one_packed_run()


def test_extender_killed_mid_run_then_restarted(plane: Plane, core, extender: ExtenderProc) -> None:
    """ignorable: with the extender dead, kube-scheduler schedules and binds without it; after a
    restart on the same port it packs again."""
    plane.set_scheduler_config(scheduler_config(extender.url, True))
    clear(core, NAMESPACE)
    extender.put_config({"policy": "pack"})  # as shipped, whatever the test before left
    story = Story(core, NAMESPACE, SELECT)
    story.create("kill-first", (1,))
    story.wait_bound("kill-first", 1)
    extender.kill()
    story.create("kill-during", (1, 1))
    story.wait_bound("kill-during", 2)
    story.delete("kill-first")
    story.delete("kill-during")
    extender.start()
    wait_gone(core, NAMESPACE)
    for _ in range(10):
        story.one_packed_run()


def test_extender_account_cannot_do_more(plane: Plane, core, extender: ExtenderProc) -> None:  # noqa: ARG001
    """The token the extender ran with is refused what the extender never does."""
    kc = Path(extender.kubeconfig)
    own = client.CoreV1Api(api(kc))
    with pytest.raises(client.ApiException) as exc:
        own.create_namespaced_pod(NAMESPACE, client.V1Pod(metadata=client.V1ObjectMeta(name="nope"),
                                                          spec=client.V1PodSpec(containers=[client.V1Container(name="c", image="x")])))
    assert exc.value.status == 403
