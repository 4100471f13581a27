"""Issue 16 item 11: a job too big *in total* is refused from its settings, before allocating.

Per-field limits let tile 1 x chunk 1 x spp 10^6 through to a MemoryError traceback, and an
8192x8192 scene reached 7.8 GB before failing."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from renderer.scene import MAX_IMAGE_BYTES, MAX_TASKS, SceneError, load
from tests.renderer.testkit import ROOT, THREE, env, free_port

MAX_RSS_MIB = 200  # the refusal costs no more than starting the command


def test_limits_are_on_the_total() -> None:
    with pytest.raises(SceneError, match=r"^three-spheres.yaml: tasks: the job would have 1,536,000,000 tasks "
                                         r"\(tile 1, 1 samples per task\), limit 1,000,000: use larger tiles"):
        load(THREE, tile=1, chunk=1, spp=1_000_000)
    with pytest.raises(SceneError, match=r"^three-spheres.yaml: image: 8192x8192 needs 3.2 GiB of image buffers "
                                         r"\(51 bytes/pixel\), limit 1 GiB$"):
        load(THREE, width=8192, height=8192)
    assert MAX_TASKS == 1_000_000 and MAX_IMAGE_BYTES == 1 << 30
    load(THREE, tile=1, chunk=1, spp=650)  # 1536 x 650 = 998,400 tasks: at the bound, accepted


@pytest.mark.parametrize("args", [("--tile", "1", "--chunk", "1", "--spp", "1000000"),
                                  ("--width", "8192", "--height", "8192")])
@pytest.mark.parametrize("command", ["render", "producer"])
def test_cli_refuses_before_allocating(tmp_path: Path, command: str, args: tuple[str, ...]) -> None:
    extra = ("--listen", f"127.0.0.1:{free_port()}") if command == "producer" else ()
    argv = [sys.executable, "-m", "renderer", command, str(THREE), "-o", str(tmp_path / "o.png"), *extra, *args]
    probe = ("import resource, subprocess, sys\n"
             f"r = subprocess.run({argv!r}, capture_output=True, text=True)\n"
             "sys.stdout.write(f'{r.returncode}\\n{resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss}\\n' + r.stderr)")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, cwd=ROOT,
                         env=env()).stdout.splitlines()
    rc, max_rss_kib, stderr = int(out[0]), int(out[1]), out[2:]
    assert rc == 2 and len(stderr) == 1 and stderr[0].startswith("renderer: three-spheres.yaml: "), out
    assert max_rss_kib < MAX_RSS_MIB * 1024, f"{max_rss_kib / 1024:.0f} MiB used to refuse the job"
    assert not (tmp_path / "o.png").exists()
