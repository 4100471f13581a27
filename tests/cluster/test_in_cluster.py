"""In a pod: no kubeconfig, KUBERNETES_SERVICE_HOST set, the service account's token and CA mounted.
The real client's in-cluster loader against the test API server over HTTPS (a throwaway CA-less
self-signed certificate for 127.0.0.1, made with openssl)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from kubeapi import KubeAPI, self_signed
from kubernetes.config import incluster_config

from kubeview.cluster.kube.source import KubeSource
from kubeview.cluster.source import SourceError
from kubeview.commands.snapshot import sync


@pytest.fixture
def in_pod(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[KubeAPI, Path]]:
    """A pod's view: the API server over TLS, its token and CA where the loader reads them."""
    cert, key = self_signed(tmp_path)
    api = KubeAPI().start(tls=(cert, key))
    account = tmp_path / "serviceaccount"
    account.mkdir()
    (account / "token").write_text(api.token)
    (account / "ca.crt").write_bytes(cert.read_bytes())
    monkeypatch.setattr(incluster_config, "SERVICE_TOKEN_FILENAME", str(account / "token"))
    monkeypatch.setattr(incluster_config, "SERVICE_CERT_FILENAME", str(account / "ca.crt"))
    monkeypatch.setenv("KUBECONFIG", str(tmp_path / "no-kubeconfig-here"))
    monkeypatch.setenv("KUBERNETES_SERVICE_HOST", "127.0.0.1")
    monkeypatch.setenv("KUBERNETES_SERVICE_PORT", api.url.rsplit(":", 1)[1])
    try:
        yield api, account
    finally:
        api.stop()


def test_the_service_account_reaches_the_api_server_over_tls(in_pod: tuple[KubeAPI, Path]) -> None:
    api, _ = in_pod
    source = KubeSource()
    assert source.server == api.url and source.server.startswith("https://127.0.0.1:")
    assert source.title == f"in-cluster @ {api.url}"
    model = sync(source)
    source.close()
    assert sorted(model.nodes) == ["cpu-node-1", "cpu-node-2", "cpu-node-3", "gpu-node-1", "gpu-node-2"]
    listed = api.requests_to("/api/v1/nodes", watch=False)
    assert listed and listed[0].headers.get("Authorization").lower() == f"bearer {api.token}"  # the loader's spelling


def test_a_missing_token_is_one_sentence(in_pod: tuple[KubeAPI, Path]) -> None:
    _, account = in_pod
    (account / "token").unlink()
    with pytest.raises(SourceError, match="in-cluster service account cannot be used .*pass --kubeconfig"):
        KubeSource()
