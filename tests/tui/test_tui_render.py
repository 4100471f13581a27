"""The Render screen following a real render: the local cluster's producer and consumer processes."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from tui_helpers import run_async, wait_for

from kubeview.cluster.local.kubelet import KubeletSettings
from kubeview.cluster.local.source import LocalSource
from kubeview.render.local import LocalRenderJob, RenderSettings, resolve_scene
from kubeview.tui.app import make_app
from kubeview.tui.screens.render import RenderScreen
from kubeview.tui.widgets.half_block_image import HalfBlockImage
from kubeview.tui.widgets.virtual_table import VirtualTable

THREE = Path(__file__).resolve().parents[2] / "renderer" / "scenes" / "three-spheres.yaml"


def longer_scene(tmp_path: Path) -> Path:
    """three-spheres, bigger and with more samples: a few seconds, long enough to watch and scale."""
    doc = yaml.safe_load(THREE.read_text())
    doc["image"].update(width=96, height=64, samples_per_pixel=512)
    path = tmp_path / "three-spheres-long.yaml"
    path.write_text(yaml.safe_dump(doc))
    return path


@pytest.mark.slow
@run_async
async def test_render_screen_follows_a_real_render(tmp_path: Path) -> None:
    source = LocalSource(kubelet=KubeletSettings(poll_interval=0.05))
    out = tmp_path / "out.png"
    job = LocalRenderJob(source, RenderSettings(scene=resolve_scene(str(longer_scene(tmp_path))), output=out,
                                                replicas=2))
    job.start()
    app = make_app(source, job)
    try:
        async with app.run_test(size=(120, 40)) as pilot:
            assert isinstance(app.screen, RenderScreen)  # opened by itself for a render job
            screen = app.screen

            def status():  # noqa: ANN202
                return getattr(screen.progress, "status", None)

            await wait_for(pilot, lambda: status() is not None and status().samples_done > 0, 120, "samples")
            await wait_for(pilot, lambda: screen.query_one(HalfBlockImage)._image is not None, 30, "the image")
            consumers = screen.query_one("#consumers", VirtualTable)
            await wait_for(pilot, lambda: len(consumers.rows) >= 2, 30, "two consumers in the table")

            await pilot.press("plus")  # one more consumer: the ReplicaSet goes to 3
            await wait_for(pilot, lambda: app.banner[1] != "" and not app.banner[0].endswith("…"), 30,
                           f"scale (banner {app.banner}, replicas {screen.replicas})")
            assert app.banner == ("replicaset render/consumer scaled to 3", "ok")  # the local source's words
            await wait_for(pilot, lambda: status().finished, 240, "the render to finish")
            await wait_for(pilot, lambda: str(out) in str(screen.query_one("#render-result").render()), 10,
                           "where the image went")
            assert status().samples_done == status().samples_total
            assert out.exists() and out.stat().st_size > 0
            await pilot.press("q")
    finally:
        app.finish_cleanup()  # stops the job and the source (begun by q), as run_tui does
