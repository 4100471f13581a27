"""Source selection: the local cluster unless a kubeconfig exists and --local is not given."""

from __future__ import annotations

import argparse
from pathlib import Path

from kubeview.cluster.local.source import LocalSource
from kubeview.cluster.select import open_source, wants_kube


def args(**kw: object) -> argparse.Namespace:
    base = {"local": False, "kubeconfig": None, "context": None, "namespace": None, "cluster": None}
    return argparse.Namespace(**{**base, **kw})


def test_local_flag_wins(tmp_path: Path) -> None:
    assert not wants_kube(args(local=True, kubeconfig=str(tmp_path / "config")))
    assert wants_kube(args(kubeconfig=str(tmp_path / "config")))  # an explicit kubeconfig means a real cluster


def test_no_kubeconfig_means_the_local_cluster(tmp_path: Path, monkeypatch) -> None:  # noqa: ANN001
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("KUBECONFIG", raising=False)
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    source = open_source(args())
    try:
        assert isinstance(source, LocalSource)
        assert source.title == "local cluster" and source.is_local
    finally:
        source.close()
