"""`--local-metrics HOST:PORT`: the local cluster serves its metrics while it lives, and not after."""

from __future__ import annotations

import subprocess
import sys
import urllib.error
import urllib.request

import pytest

from kubeview.cli import build_parser
from kubeview.cluster.local.source import LocalSource
from kubeview.cluster.select import open_source


def test_local_source_serves_metrics_until_closed() -> None:
    args = build_parser().parse_args(["--local", "--local-metrics", "127.0.0.1:0"])
    source = open_source(args)
    assert isinstance(source, LocalSource) and source.metrics is not None
    url = source.metrics.url
    try:
        body = urllib.request.urlopen(url, timeout=10).read().decode()
        assert 'node_memory_MemTotal_bytes{node="cpu-node-1"}' in body or "node_memory_MemTotal_bytes" in body
        assert "node_cpu_seconds_total" in body
    finally:
        source.close()
    with pytest.raises(urllib.error.URLError):
        urllib.request.urlopen(url, timeout=2)


def test_bad_local_metrics_address_is_one_line() -> None:
    out = subprocess.run([sys.executable, "-m", "kubeview", "--local-metrics", "nowhere", "snapshot"],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 2
    assert out.stderr.count("\n") == 1 and "--local-metrics must be HOST:PORT" in out.stderr
