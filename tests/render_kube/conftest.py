"""Fixtures for the real-cluster render tests: the extended test API server and a client for it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from kubernetes import client

from kubeview.cluster.kube.config import connect
from tests.render_kube.renderapi import RenderKubeAPI

NS = "kv"


@pytest.fixture
def render_api(tmp_path: Path) -> Iterator[RenderKubeAPI]:
    """A started RenderKubeAPI in which namespace `kv` exists; `.kubeconfig` points at it."""
    api = RenderKubeAPI(namespaces=("default", NS)).start()
    api.kubeconfig = api.write_kubeconfig(tmp_path / "kubeconfig")
    try:
        yield api
    finally:
        api.stop()


@pytest.fixture
def api_client(render_api: RenderKubeAPI) -> Iterator[client.ApiClient]:
    """The ApiClient kubeview's kube source builds for that kubeconfig."""
    conn = connect(str(render_api.kubeconfig))
    try:
        yield conn.api_client
    finally:
        conn.api_client.close()
