"""The pod screen on a real cluster reads the whole pod when it opens (#41 item 5): the model keeps a
trimmed pod (what the figures need), so labels, tolerations, containers with their images, ports and
states come from a GET of that pod, off the UI thread. Five pods opened one after another each show
their own (the screen never shows one pod's read under another's name), and a pod changed while its
screen is open is read again.
"""

from __future__ import annotations

from kubernetes import client
from textual.widgets import Static
from tui.tui_helpers import kube_app_on, run_async, settle, wait_for

from kubeview.tui.screens.pod_detail import PodDetailScreen

from .objects import add_node, api, ensure_namespace, wait_nodes_ready
from .plane import Plane
from .procs import wait_until

NAMESPACE = "whole-pod"
NODE = "whole-pod-node"
PODS = [f"wpd-{i}" for i in range(5)]  # names no other module's pod contains (the filter finds one)


def _pod(name: str) -> client.V1Pod:
    container = client.V1Container(name="main", image=f"registry.example/{name}:v2",
                                   ports=[client.V1ContainerPort(container_port=8000 + int(name[4:]))],
                                   resources=client.V1ResourceRequirements(requests={"cpu": "100m"}))
    return client.V1Pod(
        metadata=client.V1ObjectMeta(name=name, labels={"app": f"app-{name}", "team": "vision"}),
        spec=client.V1PodSpec(node_name=NODE, containers=[container], tolerations=[
            client.V1Toleration(key="nvidia.com/gpu", operator="Exists", effect="NoSchedule")]))


def _text(pilot) -> str:  # noqa: ANN001
    return str(pilot.app.screen.query_one("#pod-text", Static).render())


def test_the_pod_screen_shows_the_whole_pod_read_on_demand(plane: Plane) -> None:
    core = client.CoreV1Api(api(plane.kubeconfig))
    add_node(core, NODE, {"cpu": "8", "memory": "16Gi", "pods": "110"})
    wait_nodes_ready(core, [NODE])
    ensure_namespace(core, NAMESPACE)
    for name in PODS:
        core.create_namespaced_pod(NAMESPACE, _pod(name))
    wait_until(lambda: all(p.status.phase == "Running" for p in core.list_namespaced_pod(NAMESPACE).items), 60,
               "the pods Running (kwok)")

    @run_async
    async def drive() -> None:
        async with kube_app_on("2", str(plane.kubeconfig), (160, 60)) as pilot:
            for name in PODS:
                await pilot.press("slash", *name, "enter")  # the Pods screen's filter: this pod alone
                await settle(pilot)
                await pilot.press("enter")
                await wait_for(pilot, lambda: isinstance(pilot.app.screen, PodDetailScreen), what="the pod screen")
                await wait_for(pilot, lambda n=name: f"registry.example/{n}:v2" in _text(pilot),
                               what=f"{name}'s image, read from the API server")
                text = _text(pilot)
                assert f"app=app-{name}" in text and "team=vision" in text
                assert "nvidia.com/gpu:NoSchedule" in text
                assert f"ports {8000 + int(name[4:])}/TCP" in text
                assert "Running" in text and "Ready=True" in text
                others = [o for o in PODS if o != name]
                assert not any(f"app=app-{o}" in text for o in others), text
                if name == PODS[-1]:  # changed while open: read again when the model sees the change
                    core.patch_namespaced_pod(name, NAMESPACE, {"metadata": {"labels": {"stage": "eval"}}})
                    await wait_for(pilot, lambda: "stage=eval" in _text(pilot), what="the patched label")
                await pilot.press("escape")
                await settle(pilot)

    drive()
