"""Exit codes and one-line messages of #24 item 14: a closed pipe under `snapshot`, SIGTERM, `--cpu 0`,
`--prometheus-queries` without `--prometheus` or unreadable, `-o x.jpg`, and the "too many tasks"
advice of `kubeview --render` (it named the renderer's knobs, which `--render` does not have)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from test_cli_options import RENDER, _env, _usage, kubeview


@pytest.mark.parametrize("output", [(), ("--json",)])
def test_snapshot_into_a_closed_pipe_exits_0_silently(tmp_path: Path, output: tuple[str, ...]) -> None:
    """The reader is gone before kubeview writes a byte (its end closed first): the broken pipe is
    certain, not a race with `head`. Tables exited 1 (rich's own handler), --json 0 or 141."""
    read, write = os.pipe()
    os.close(read)
    try:
        proc = subprocess.run([sys.executable, "-m", "kubeview", "snapshot", *output], stdout=write,
                              stderr=subprocess.PIPE, text=True, timeout=120, env=_env(tmp_path), cwd=tmp_path)
    finally:
        os.close(write)
    assert (proc.returncode, proc.stderr) == (0, "")


def test_sigterm_says_terminated_and_exits_143_as_ctrl_c_says_interrupted(tmp_path: Path) -> None:
    proc = subprocess.Popen([sys.executable, "-m", "kubeview", *RENDER, "--spp", "500000", "-o", "x.png"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=_env(tmp_path),
                            cwd=tmp_path)
    try:
        for line in proc.stdout:  # the render is running: its first progress line is out
            if "samples/s" in line:
                break
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert (proc.returncode, err) == (143, "kubeview: terminated\n")
    assert not (tmp_path / "x.png").exists()


def test_bad_values_of_item_14_are_one_line(tmp_path: Path) -> None:
    cases: dict[tuple[str, ...], tuple[int, str]] = {
        (*RENDER, "--cpu", "0"): (2, _usage("--cpu", "'0' must be more than 0 (examples: 1000m, 0.5, 2)")),
        (*RENDER, "--cpu=-1"): (2, _usage("--cpu", "'-1' must be more than 0 (examples: 1000m, 0.5, 2)")),
        ("snapshot", "--prometheus-queries", "q.yaml"):
            (2, "kubeview: --prometheus-queries q.yaml needs --prometheus URL (the queries are sent there).\n"),
        ("snapshot", "--prometheus", "http://127.0.0.1:9", "--prometheus-queries", "nosuch.yaml"):
            (2, "kubeview: cannot read --prometheus-queries nosuch.yaml: No such file or directory.\n"),
        (*RENDER, "-o", "x.jpg"): (2, "kubeview: -o x.jpg: the render writes PNG; name a .png file\n"),
        (*RENDER, "--spp", "1000000"): (2, "kubeview: three-spheres.yaml: tasks: the job would have 1,500,000 tasks "
                                           "(tile 16, 4 samples per task), limit 1,000,000: lower --spp or --width, "
                                           "or raise tasks.tile or tasks.samples in a copy of the scene\n"),
    }
    (tmp_path / "q.yaml").write_text("queries: {}\n")
    for args, (code, message) in cases.items():
        out = kubeview(tmp_path, *args)
        assert (out.returncode, out.stdout, out.stderr) == (code, "", message), args
    assert not list(tmp_path.glob("*.jpg")) and not list(tmp_path.glob("*.png"))
