"""heap.keep_large_buffers: 2 MB request and reply buffers reuse mapped pages instead of faulting in
fresh ones on every call (counted as the process's minor page faults, in a fresh interpreter)."""

from __future__ import annotations

import platform
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CYCLES = """
import resource, sys
from kubeview.scheduling.heap import keep_large_buffers
if sys.argv[1] == "tuned" and not keep_large_buffers(17 << 20, 64 << 20):
    sys.exit(3)
before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
for _ in range(50):  # a full-Nodes call's body in, a reply out
    body = bytearray(2 << 20)
    reply = bytes(body)
    del body, reply
print(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
"""


def _faults(mode: str) -> int:
    out = subprocess.run([sys.executable, "-c", CYCLES, mode], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    return int(out.stdout)


@pytest.mark.skipif(platform.system() != "Linux" or platform.libc_ver()[0] != "glibc", reason="glibc's mallopt")
def test_large_buffers_stop_faulting_in_fresh_pages() -> None:
    default, tuned = _faults("default"), _faults("tuned")
    assert default > 20 * 512  # 2 MB = 512 pages, faulted in again on most of the 50 cycles
    assert tuned < default / 10
