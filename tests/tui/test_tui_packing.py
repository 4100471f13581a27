"""Editing the packing policy in place changes the what-if table before anything is applied."""

from __future__ import annotations

import pytest
from tui_helpers import run_async, settle, wait_for

from kubeview.cluster.synthetic import SyntheticSource
from kubeview.scheduling.config import PackingConfig
from kubeview.scheduling.evaluate import evaluate
from kubeview.tui.app import make_app
from kubeview.tui.rows.whatif import hypothetical_pod
from kubeview.tui.screens.packing import PackingScreen
from kubeview.tui.widgets.prompt_bar import PromptInput
from kubeview.tui.widgets.virtual_table import VirtualTable


@run_async
async def test_policy_edit_changes_the_what_if_then_apply(small_cluster: SyntheticSource) -> None:
    app = make_app(small_cluster)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("4")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, PackingScreen)
        w = screen.whatif
        assert w is not None and w.config == PackingConfig()
        # live and edited agree before any edit, and match the scheduling module itself
        with app.state.lock:
            alloc = app.state.model.allocation()
        expected = evaluate(alloc, hypothetical_pod(2), PackingConfig())
        assert (w.live.scores == expected.scores).all() and (w.edited.scores == w.live.scores).all()
        assert w.live.best == expected.best == "gpu-node-12"  # pack: the fuller GPU node (4 of 8 used)

        await pilot.press("p")  # pack -> spread, not applied yet
        await pilot.pause()
        w = screen.whatif
        assert w.config.policy == "spread" and app.packing_live.policy == "pack"
        assert w.edited.best == "gpu-node-04" and w.live.best == "gpu-node-12"
        assert "edited → gpu-node-04" in screen.query_one("#whatif-summary").render().plain
        table = screen.query_one("#whatif", VirtualTable)
        assert table.rows.key(0) == "gpu-node-04"  # the edited policy's choice first

        assert table.cursor_key == "gpu-node-12"  # the selection follows its node through the re-sort
        await pilot.press("home", "x")  # avoid the top node: it scores 0 under the edit
        await pilot.pause()
        w = screen.whatif
        assert w.config.avoid == frozenset({"gpu-node-04"}) and w.edited.best == "gpu-node-12"

        await pilot.press("a")  # apply: the synthetic source's scheduler takes it, the header says so
        await wait_for(pilot, lambda: app.packing_live == w.config, what="the applied policy")
        assert small_cluster.packing == w.config
        assert app.packing_label == "spread · embedded scheduler"
        await wait_for(pilot, lambda: app.banner[1] == "ok", what="the apply's one-line result")
        assert app.banner == ("packing policy spread is live on the synthetic cluster's scheduler.", "ok")


@run_async
async def test_weights_edit_in_place_and_pending_pod_pick(small_cluster: SyntheticSource) -> None:
    app = make_app(small_cluster)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("4")
        await settle(pilot)
        screen = app.screen
        field = screen.query_one("#weight-cpu")
        field.focus()
        await pilot.press("end", "backspace", "2")  # cpu weight 0 -> 2
        await pilot.pause()
        assert dict(screen.whatif.config.weights) == {"nvidia.com/gpu": 1.0, "cpu": 2.0, "memory": 0.0}
        assert screen.whatif.live.scores.tolist() != screen.whatif.edited.scores.tolist()

        picker = screen.query_one("#pod-picker")
        picker.focus()
        await pilot.press("down", "enter")  # the first pending pod
        await pilot.pause()
        pending = app.state.model.pending()[0]
        assert screen.pod_key == pending.key
        assert f"{pending.namespace}/{pending.name}" in screen.query_one("#whatif-summary").render().plain
        assert screen.whatif.live.message == evaluate(screen.whatif.alloc, pending).message


@run_async
async def test_apply_goes_to_the_extender_on_a_real_cluster(kube_api, tmp_path) -> None:  # noqa: ANN001
    from kubeview.cluster.kube.source import KubeSource
    from kubeview.scheduling.extender import Extender
    from kubeview.scheduling.feed import ModelFeed
    from kubeview.scheduling.server import ExtenderServer

    server = ExtenderServer(Extender(ModelFeed()), "127.0.0.1", 0, token="t0ken").start()
    (tmp_path / "token").write_text("t0ken")
    source = KubeSource(str(kube_api.kubeconfig))
    app = make_app(source, extender=server.url, extender_token_file=str(tmp_path / "token"))
    try:
        async with app.run_test(size=(120, 40)) as pilot:
            await settle(pilot)
            await wait_for(pilot, lambda: app.packing_live is not None, what="the extender's config")
            assert app.packing_label == f"pack · extender {server.url}"
            await pilot.press("4")
            await settle(pilot)
            await pilot.press("p", "a")
            await wait_for(pilot, lambda: app.banner[1] == "ok", what="the extender to take the policy")
            assert server.extender.config.policy == "spread"
            assert app.packing_label == f"spread · extender {server.url}"
            assert app.banner[0] == f"packing policy spread is live on the extender {server.url}."
    finally:
        source.close()
        server.stop()


@run_async
async def test_without_an_extender_apply_says_what_to_do(kube_api) -> None:  # noqa: ANN001
    from kubeview.cluster.kube.source import KubeSource

    source = KubeSource(str(kube_api.kubeconfig))
    app = make_app(source)
    try:
        async with app.run_test(size=(120, 40)) as pilot:
            await settle(pilot)
            assert app.packing_label == "not managed here (start with --extender URL or --native-scheduler)"
            await pilot.press("4")
            await settle(pilot)
            await pilot.press("p", "a")
            await wait_for(pilot, lambda: app.banner[1] == "error", what="the refusal")
            assert app.banner[0] == "no scheduler to send the policy to: start kubeview with --extender URL or --native-scheduler."
    finally:
        source.close()


@pytest.mark.parametrize("size", [(160, 48), (100, 30), (80, 24)])
@run_async
async def test_tab_cycles_the_visible_controls_never_the_prompt(small_cluster: SyntheticSource,
                                                                size: tuple[int, int]) -> None:
    """#24 item 6: Tab moved focus into the hidden prompt line (then `n` and Down did nothing, a `7` went
    into the hint); the policy, weights and Pod picker were reached only with Shift+Tab or the mouse."""
    app = make_app(small_cluster)
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        await pilot.press("4")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, PackingScreen) and app.focused is screen.main_widget()
        seen = []
        for _ in range(8):
            await pilot.press("tab")
            await pilot.pause()
            assert not isinstance(app.focused, PromptInput), seen
            seen.append(app.focused)
        ids = [w.id for w in seen]
        cycle = ["policy", "weight-nvidia-com-gpu", "weight-cpu", "weight-memory", "pod-picker", "whatif"]
        assert ids[:6] == cycle and ids[6:] == cycle[:2], ids  # round and round, the prompt never in it
        assert "tab" in {k for k, b in screen.active_bindings.items() if b.binding.show}  # the footer says so
        await pilot.press("tab", "tab", "tab")  # to the pod picker: `n` and Down still work there
        assert app.focused.id == "pod-picker"
        await pilot.press("n")
        await pilot.pause()
        assert screen.gpus == 4
        await pilot.press("shift+tab")
        await pilot.pause()
        assert app.focused.id == "weight-memory"
        await pilot.press("escape", "1", "tab")  # other screens: the prompt is out of the Tab order too
        await settle(pilot)
        await pilot.pause()
        assert not isinstance(app.focused, PromptInput)
        await pilot.press("slash")  # ... and still opens
        await pilot.pause()
        assert isinstance(app.focused, PromptInput)
