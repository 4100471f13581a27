"""Scaling from the Workloads screen through the real kube source against the test API server.

The assertions are on what the API server received (the PATCH of the `scale` subresource) and on
the one line the user sees, for a success, a confirmation, a decline and a recorded refusal.
"""

from __future__ import annotations

from kubeapi import KubeAPI
from tui_helpers import kube_app_on, run_async, wait_for

from kubeview.tui.screens.prompts import Confirm, NumberPrompt
from kubeview.tui.screens.workloads import WorkloadsScreen, needs_confirmation
from kubeview.tui.widgets.virtual_table import VirtualTable

RS_SCALE = "/apis/apps/v1/namespaces/default/replicasets/consumer/scale"


def patches(api: KubeAPI) -> list[dict]:
    return [r.json() for r in api.requests_to(RS_SCALE, method="PATCH")]


def test_which_jumps_ask_first() -> None:
    assert needs_confirmation(3, 0) and needs_confirmation(3, 31) and needs_confirmation(40, 3)
    assert not needs_confirmation(3, 30) and not needs_confirmation(0, 10) and not needs_confirmation(30, 3)
    assert needs_confirmation(0, 11)


@run_async
async def test_scale_through_the_kube_source(kube_api: KubeAPI) -> None:
    async with kube_app_on("3", str(kube_api.kubeconfig)) as pilot:
        app = pilot.app
        assert isinstance(app.screen, WorkloadsScreen)
        table = app.screen.query_one(VirtualTable)
        assert table.cursor_key == ("ReplicaSet", "default", "consumer")
        assert app.state.model.workloads[table.cursor_key].desired == 3

        # + : one more replica, a merge patch of spec.replicas, the source's sentence in the banner
        await pilot.press("plus")
        await wait_for(pilot, lambda: app.banner[1] == "ok", what="the scale result")
        assert patches(kube_api) == [{"spec": {"replicas": 4}}]
        assert app.banner == ("ReplicaSet default/consumer scaled to 4 replicas.", "ok")

        # s 40: more than 10x asks first; y goes ahead
        await pilot.press("s")
        await pilot.pause()
        assert isinstance(app.screen, NumberPrompt)
        await pilot.press("backspace", "4", "0", "enter")
        await pilot.pause()
        assert isinstance(app.screen, Confirm)
        await pilot.press("y")
        await wait_for(pilot, lambda: len(patches(kube_api)) == 2, what="the second PATCH")
        assert patches(kube_api)[-1] == {"spec": {"replicas": 40}}

        # s 0: asks; n leaves it alone and sends nothing
        await pilot.press("s")
        await pilot.pause()
        await pilot.press("backspace", "0", "enter")
        await pilot.pause()
        assert isinstance(app.screen, Confirm)
        await pilot.press("n")
        await pilot.pause()
        assert len(patches(kube_api)) == 2
        assert app.banner == ("ReplicaSet default/consumer left at 3 replicas.", "ok")

        # the API's refusal comes back as its one sentence, in red
        kube_api.respond_fixture("PATCH", RS_SCALE, "status-403-forbidden-serviceaccount.json")
        await pilot.press("minus")
        await wait_for(pilot, lambda: app.banner[1] == "error", what="the refusal")
        assert app.banner[0] == (
            'Scaling ReplicaSet default/consumer to 2 was forbidden (403): pods "err-sa" is forbidden: '
            'error looking up service account default/missing: serviceaccount "missing" not found; '
            "ask a cluster admin for access.")
        assert not app.banner[0].startswith("Traceback")

