"""`kubeview --demo --render three-spheres` names the `--cpu` that would fit, and the command the
Render screen suggests on the demo really starts a render there (#24 item 13)."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from pathlib import Path

from kubeview.cluster.local.demo import open_demo
from kubeview.render.cpu_hint import render_command


def kubeview(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("KUBECONFIG", "KUBERNETES_SERVICE_HOST")}
    env["HOME"] = str(tmp_path)
    return subprocess.run([sys.executable, "-m", "kubeview", *args], capture_output=True, text=True, timeout=180,
                          env=env, cwd=tmp_path)


def test_the_demo_render_at_the_default_cpu_names_the_cpu_that_fits(tmp_path: Path) -> None:
    out = kubeview(tmp_path, "--demo", "--render", "three-spheres", "--headless")
    assert (out.returncode, out.stderr) == (1, (
        "kubeview: no consumer fits on the cluster at cpu 1000m: 0/9 nodes are available: 3 Insufficient cpu, "
        "6 node(s) had untolerated taint(s); --cpu 800m would fit (the most cpu a node that takes consumers "
        "has free).\n"))


def test_the_command_suggested_on_the_demo_renders(tmp_path: Path) -> None:
    source = open_demo()
    try:
        command = render_command(source.model().allocation(), demo=source.demo)
    finally:
        source.close()
    assert command == "kubeview --demo --render three-spheres --cpu 800m"
    out = kubeview(tmp_path, *shlex.split(command)[1:], "--headless", "-o", "x.png")
    assert out.returncode == 0, out.stderr
    assert (tmp_path / "x.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
