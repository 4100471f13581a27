"""A render job that replays what a real producer answered, for deterministic render snapshots.

tests/data/tui/render-*.json and *.png were recorded from `python -m renderer producer three-spheres
--width 192 --height 112 --spp 256` with two consumers (`GET /status` and `GET /image.png` once a
second); `running` is the answer at 63%, `finished` the last one. The live path (real producer and
consumers) is covered by test_tui_render.py.
"""

from __future__ import annotations

from pathlib import Path

from kubeview.render.local import RenderProgress
from kubeview.render.status import parse_status

DATA = Path(__file__).resolve().parents[1] / "data" / "tui"


class RecordedRenderJob:
    """`poll`, `image_png`, `scale`, `stop` of a render job, answering from the recording."""

    def __init__(self, moment: str = "running") -> None:
        self.status = parse_status((DATA / f"render-status-{moment}.json").read_bytes())
        self.png = (DATA / f"render-image-{moment}.png").read_bytes()
        self.scaled: list[int] = []
        self.stopped = False

    def poll(self) -> RenderProgress:
        running = 0 if self.status.finished else len(self.status.consumers)
        return RenderProgress(status=self.status, running=running, pending=0, restarts=0, pending_reason=None,
                              producer_phase="Running")

    def image_png(self) -> bytes:
        return self.png

    def scale(self, replicas: int) -> str:
        self.scaled.append(replicas)
        return f"ReplicaSet render/consumer scaled to {replicas} replicas."

    def stop(self) -> None:
        self.stopped = True
