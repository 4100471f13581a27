"""`--spp`/`--width` reach the render and keep it deterministic; images are 0644; a render whose output
cannot be written at the end keeps the image and says where (issue #15, items 3 and 9)."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from kubeview.render.inputs import choose_scene
from renderer.image import OutputError, write_atomic, write_or_keep

REPO = Path(__file__).resolve().parents[2]
ENV = {**os.environ, "PYTHONPATH": str(REPO)}


def test_width_alone_keeps_the_aspect_and_becomes_producer_arguments() -> None:
    choice = choose_scene("three-spheres", spp=8, width=40)  # the scene is 48x32
    assert (choice.width, choice.height, choice.spp) == (40, 27, 8)
    assert choice.producer_args() == ["--width", "40", "--height", "27", "--spp", "8"]
    assert choose_scene("three-spheres").producer_args() == []


def test_images_are_written_0644_under_umask_022(tmp_path: Path) -> None:
    old = os.umask(0o022)
    try:
        write_atomic(tmp_path / "a.png", b"x")
        write_or_keep(np.zeros((2, 2, 3)), tmp_path / "b.png", tmp_path / "b.npy", "t")
    finally:
        os.umask(old)
    for name in ("a.png", "b.png", "b.npy"):
        assert stat.S_IMODE((tmp_path / name).stat().st_mode) == 0o644, name


def test_an_output_that_fails_is_kept_in_the_temporary_directory(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", None)  # re-read TMPDIR
    image = np.full((2, 2, 3), 0.25)
    with pytest.raises(OutputError) as err:
        write_or_keep(image, tmp_path / "gone" / "x.png", None, "job1")
    kept = tmp_path / "x-job1.png"
    assert str(err.value) == f"cannot write {tmp_path}/gone/x.png: No such file or directory; the image was kept in {kept}"
    assert err.value.kept == [kept] and kept.read_bytes()[:4] == b"\x89PNG"


@pytest.mark.slow
def test_spp_and_width_render_equals_the_single_process_render(tmp_path: Path) -> None:
    proc = subprocess.run([sys.executable, "-m", "kubeview", "--render", "three-spheres", "--headless", "--local",
                           "--spp", "8", "--width", "40", "-o", "out.png", "--raw", "out.npy"], env=ENV,
                          capture_output=True, text=True, timeout=300, cwd=tmp_path, preexec_fn=lambda: os.umask(0o022))
    assert proc.returncode == 0, proc.stderr
    assert "render three-spheres 40x27 spp 8: 100.0%" in proc.stdout
    subprocess.run([sys.executable, "-m", "renderer", "render", "three-spheres", "--width", "40", "--height", "27",
                    "--spp", "8", "--raw", "ref.npy", "--no-progress"], check=True, env=ENV, capture_output=True,
                   timeout=300, cwd=tmp_path)
    image, ref = np.load(tmp_path / "out.npy"), np.load(tmp_path / "ref.npy")
    assert image.shape == (27, 40, 3) and image.tobytes() == ref.tobytes()
    assert stat.S_IMODE((tmp_path / "out.png").stat().st_mode) == 0o644  # was 0600


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_an_output_gone_at_the_end_keeps_the_image_and_says_why(tmp_path: Path) -> None:
    """The directory of -o disappears mid-render: one line with the real error and where the image is,
    exit 1, no second render (it used to run to 100%, run again, then say `consumer disconnected`)."""
    spare, sub = tmp_path / "spare", tmp_path / "sub"
    spare.mkdir()
    sub.mkdir()
    proc = subprocess.Popen([sys.executable, "-m", "kubeview", "--render", "three-spheres", "--headless", "--local",
                             "--spp", "20000", "-o", str(sub / "a.png")], env={**ENV, "TMPDIR": str(spare)},
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path)
    lines = []
    for line in proc.stdout:  # type: ignore[union-attr]
        lines.append(line)
        if "%" in line and " 0.0%" not in line and sub.exists():
            sub.rmdir()  # mid-render
    proc.wait(60)
    err = proc.stderr.read()  # type: ignore[union-attr]
    kept = list(spare.glob("a-three-spheres-*.png"))
    assert len(kept) == 1 and kept[0].read_bytes()[:4] == b"\x89PNG", (lines, err)
    assert (proc.returncode, err) == (
        1, f"kubeview: cannot write {sub}/a.png: No such file or directory; the image was kept in {kept[0]}\n")
    assert sum("100.0%" in line for line in lines) <= 1  # not rendered a second time


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_a_cold_kernel_cache_is_said_on_the_progress_lines(tmp_path: Path) -> None:
    """The first render after install (or an edit of the kernels) printed `0.0% ETA ?` for many
    seconds without saying why; with numba's cache warm the note is gone."""
    env = {**ENV, "NUMBA_CACHE_DIR": str(tmp_path / "numba")}  # empty: the consumers must compile

    def render() -> list[str]:
        proc = subprocess.run([sys.executable, "-m", "kubeview", "--render", "three-spheres", "--headless", "--local",
                               "--spp", "4", "-o", "x.png"], env=env, capture_output=True, text=True, timeout=240,
                              cwd=tmp_path)
        assert proc.returncode == 0, proc.stderr
        return proc.stdout.splitlines()

    cold = render()
    waiting = [line for line in cold if " 0.0%" in line]
    assert waiting and all(line.endswith("  (compiling kernels, first run only)") for line in waiting), cold
    assert not any("compiling" in line for line in cold if "100.0%" in line)
    warm = render()
    assert not any("compiling" in line for line in warm), warm
