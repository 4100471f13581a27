"""Write screenshots/*.svg from real runs of the TUI on the embedded local cluster, during a render.

    python scripts/screenshots.py [--out screenshots]

What is on screen is real: the bundled 5-node local cluster (kubeview.cluster.local.LocalSource),
GPU pods placed by its scheduler under the `spread` policy (so a 2-GPU pod stays Pending although
2 GPUs are free: the fragmentation the README talks about), and a render of three-spheres whose
consumers are real processes, asked for 4 cores each so that one of four stays Pending with the
scheduler's "Insufficient cpu". Takes about a minute; the render image lands next to the SVGs.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from kubeview.cluster.local import LocalSource  # noqa: E402
from kubeview.render.local import LocalRenderJob, RenderSettings, resolve_scene  # noqa: E402
from kubeview.scheduling.config import PackingConfig  # noqa: E402
from kubeview.tui.app import KubeviewApp, make_app  # noqa: E402

SIZE = (120, 40)


def gpu_pod(name: str, gpus: int) -> dict:
    return {"metadata": {"name": name, "namespace": "training"},
            "spec": {"containers": [{"name": "train", "image": "cuda-train:1.0", "resources": {
                "requests": {"cpu": "2", "memory": "8Gi", "nvidia.com/gpu": str(gpus)},
                "limits": {"nvidia.com/gpu": str(gpus)}}}]}}


def scene(tmp: Path) -> Path:
    """three-spheres, larger and with more samples: long enough to catch it half done."""
    doc = yaml.safe_load((REPO / "renderer" / "scenes" / "three-spheres.yaml").read_text())
    doc["image"].update(width=192, height=112, samples_per_pixel=2048)
    path = tmp / "three-spheres.yaml"
    path.write_text(yaml.safe_dump(doc))
    return path


async def wait_for(pilot, predicate: Callable[[], bool], timeout: float, what: str) -> None:  # noqa: ANN001
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise SystemExit(f"screenshots: timed out waiting for {what}")
        await pilot.pause(0.1)


async def shoot(app: KubeviewApp, out: Path, job: LocalRenderJob) -> None:
    async with app.run_test(size=SIZE) as pilot:
        render = app.screen

        def fraction() -> float:
            status = getattr(render.progress, "status", None)  # type: ignore[attr-defined]
            return status.fraction if status is not None else 0.0

        await wait_for(pilot, lambda: fraction() > 0.15, 180, "the render to get going")
        await pilot.pause(1.0)  # one more image fetch
        app.save_screenshot("render.svg", str(out))
        for key, name in (("1", "nodes"), ("2", "pods"), ("3", "workloads")):
            await pilot.press(key)
            await pilot.pause(0.8)
            app.save_screenshot(f"{name}.svg", str(out))
        await pilot.press("1", "G", "enter")  # the last node: gpu-node-2
        await pilot.pause(0.8)
        app.save_screenshot("node-detail.svg", str(out))
        await pilot.press("escape", "4")
        await pilot.pause(0.8)
        picker = app.screen.query_one("#pod-picker")
        picker.focus()
        await pilot.press("down", "down", "enter")  # the pending 2-GPU pod (after the pending consumer)
        app.screen.query_one("#whatif").focus()
        await pilot.press("p", "p")  # spread -> balanced -> pack, not applied
        await pilot.pause(0.8)
        app.save_screenshot("packing.svg", str(out))
        await pilot.press("5")
        await wait_for(pilot, lambda: fraction() >= 1.0 and job.settings.output.exists(), 300, "the render to finish")
        await pilot.pause(1.5)
        app.save_screenshot("render-finished.svg", str(out))
        await pilot.press("q")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=REPO / "screenshots", help="directory for the SVGs")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        source = LocalSource()
        source.set_packing(PackingConfig(policy="spread"))
        for name, gpus in (("gpu-a", 1), ("gpu-b", 1), ("gpu-c", 2)):
            source.create_pod(gpu_pod(name, gpus))
        job = LocalRenderJob(source, RenderSettings(scene=resolve_scene(str(scene(Path(tmp)))),
                                                    output=(args.out / "three-spheres.png").resolve(),
                                                    replicas=4, cpu="4"))
        try:
            job.start()
            asyncio.run(shoot(make_app(source, job), args.out, job))
        finally:
            job.stop()
            source.close()
    for svg in sorted(args.out.glob("*.svg")):
        print(svg.relative_to(REPO) if svg.is_relative_to(REPO) else svg)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
