"""Render children (producer and consumers, `python -m renderer`) run exactly the parent's code,
not a `renderer/` in the working directory (#24 item 10). From a checkout's root the consumers
imported `./renderer` while kubeview ran the installed package (and checked that one's numba cache,
so "compiling kernels, first run only" was said on every run)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

BIN = Path(sys.executable).parent / "kubeview"  # the console script: the parent's own sys.path[0] is bin/


def test_children_never_import_a_renderer_from_the_working_directory(tmp_path: Path) -> None:
    marker = tmp_path / "FAKE-RENDERER-RAN"
    fake = tmp_path / "renderer"
    fake.mkdir()
    (fake / "__init__.py").write_text("")
    (fake / "__main__.py").write_text(f"import pathlib\npathlib.Path({str(marker)!r}).write_text('ran')\n"
                                      "raise SystemExit(3)\n")
    env = {k: v for k, v in os.environ.items() if k not in ("KUBECONFIG", "KUBERNETES_SERVICE_HOST", "PYTHONPATH")}
    env["HOME"] = str(tmp_path)
    assert BIN.exists(), BIN
    out = subprocess.run([str(BIN), "--render", "three-spheres", "--headless", "--local", "-o", "x.png"],
                         capture_output=True, text=True, timeout=300, env=env, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert not marker.exists()  # no child ran ./renderer
    assert (tmp_path / "x.png").read_bytes()[:4] == b"\x89PNG"
