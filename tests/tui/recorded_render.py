"""A render job that replays what a real producer answered, for deterministic render snapshots.

tests/data/tui/render-*.json and *.png were recorded from `python -m renderer producer three-spheres
--width 192 --height 112 --spp 256` with two consumers (`GET /status` and `GET /image.png` once a
second): `starting` (compiling, no samples yet), `early` (33%), `running` (63%) and `finished` are
four consecutive answers. A job replays them in order up to its moment, then repeats that one, so
the screen ends in the same state however many times it polled. The live path (real producer and
consumers) is covered by test_tui_render.py.
"""

from __future__ import annotations

from pathlib import Path

from kubeview.render.local import RenderProgress
from kubeview.render.status import parse_status

DATA = Path(__file__).resolve().parents[1] / "data" / "tui"
MOMENTS = ("starting", "early", "running", "finished")


class RecordedRenderJob:
    """`poll`, `image_png`, `scale`, `stop` of a render job, answering from the recording."""

    def __init__(self, moment: str = "running") -> None:
        order = MOMENTS[: MOMENTS.index(moment) + 1]
        self.statuses = [parse_status((DATA / f"render-status-{m}.json").read_bytes()) for m in order]
        self.status = self.statuses[-1]
        self.png = (DATA / f"render-image-{moment}.png").read_bytes()
        self.scaled: list[int] = []
        self.stopped = False
        self.polls = 0

    def poll(self) -> RenderProgress:
        status = self.statuses[min(self.polls, len(self.statuses) - 1)]
        self.polls += 1
        running = 0 if status.finished else len(status.consumers)
        return RenderProgress(status=status, running=running, pending=0, restarts=0, pending_reason=None,
                              producer_phase="Running")

    def image_png(self) -> bytes:
        return self.png

    def scale(self, replicas: int) -> str:
        self.scaled.append(replicas)
        return f"ReplicaSet render/consumer scaled to {replicas} replicas."

    def stop(self) -> None:
        self.stopped = True
