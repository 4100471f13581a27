"""ExtenderClient against the real extender HTTP server: read, change, and every refusal as one sentence."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from kubeview.cluster.extender_client import ExtenderClient
from kubeview.cluster.source import ActionError
from kubeview.scheduling.config import PackingConfig
from kubeview.scheduling.extender import Extender
from kubeview.scheduling.feed import ModelFeed
from kubeview.scheduling.server import ExtenderServer

TOKEN = "t0ken"


@pytest.fixture
def server() -> Iterator[ExtenderServer]:
    srv = ExtenderServer(Extender(ModelFeed()), "127.0.0.1", 0, token=TOKEN).start()
    try:
        yield srv
    finally:
        srv.stop()


def test_get_and_put_config(server: ExtenderServer) -> None:
    client = ExtenderClient(server.url, TOKEN)
    assert client.get_config() == PackingConfig()
    wanted = PackingConfig(policy="spread", weights={"nvidia.com/gpu": 2.0, "cpu": 1.0}, bias={"gpu-node-1": 3},
                           avoid=frozenset({"gpu-node-2"}))
    assert client.put_config(wanted) == wanted
    assert server.extender.config == wanted
    assert client.get_config() == wanted


def test_token_from_file_and_refusals(server: ExtenderServer, tmp_path: Path) -> None:
    (tmp_path / "token").write_text(TOKEN + "\n")
    assert ExtenderClient.from_options(server.url, str(tmp_path / "token")).token == TOKEN
    with pytest.raises(ActionError, match=r"^cannot read the extender token file .*missing: No such file"):
        ExtenderClient.from_options(server.url, str(tmp_path / "missing"))
    with pytest.raises(ActionError, match=r"^the extender refused the change \(401\): PUT /config needs the header "
                                          r"Authorization: Bearer <token>; pass --extender-token-file\.$"):
        ExtenderClient(server.url).put_config(PackingConfig(policy="spread"))
    assert server.extender.config == PackingConfig()  # unchanged


def test_unreachable_extender_is_one_sentence() -> None:
    client = ExtenderClient("http://127.0.0.1:1", timeout=2)
    with pytest.raises(ActionError, match=r"^cannot reach the extender at http://127\.0\.0\.1:1: .*\.$"):
        client.get_config()
