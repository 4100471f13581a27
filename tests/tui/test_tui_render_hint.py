"""On the demo, the Render screen without a render suggests a command that starts one there
(`--demo`, and the `--cpu` a node has free), not `kubeview --render three-spheres`, which fails on
the demo at the default 1000m (#24 item 13)."""

from __future__ import annotations

from tui_helpers import run_async, settle

from kubeview.cluster.local.demo import open_demo
from kubeview.tui.app import make_app


@run_async
async def test_the_demo_render_screen_suggests_a_command_that_fits() -> None:
    source = open_demo()
    app = make_app(source)
    try:
        async with app.run_test(size=(160, 48)) as pilot:
            await settle(pilot)
            await pilot.press("colon", *"render", "enter")
            await pilot.pause()
            shown = "\n".join(strip.text for strip in app.screen._compositor.render_strips())
            assert "Start one with:  kubeview --demo --render three-spheres --cpu 800m" in shown
    finally:
        source.close()
