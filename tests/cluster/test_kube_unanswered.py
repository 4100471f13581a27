"""A server that accepts the TCP connection and never answers (#42 item 3's leftover): a TLS
handshake that never finishes, or no response headers after it. Before, discovery asked seven group
versions one after another, each waiting out the 10 s connect timeout, then the lists waited again:
`snapshot` ended on its own 30 s watchdog ("sent nothing for 30 s") and the TUI said 'connecting…'
for over a minute. Now the first request (discovery) gives up after `connect_timeout`
(KUBEVIEW_CONNECT_TIMEOUT, README "The TUI") and every command says so in one line, exit 1.

Real servers: `SilentServer` (tests/kubeapi/silent.py) on loopback; real `python -m kubeview`.
"""

from __future__ import annotations

import os
import queue
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from kubeapi import KubeAPI, SilentServer, self_signed
from urllib3.exceptions import ReadTimeoutError

from kubeview.cluster.kube.errors import describe_connection_error
from kubeview.cluster.kube.source import KubeSource
from kubeview.cluster.kube.watch import WatchSettings
from kubeview.cluster.source import SourceError

ROOT = Path(__file__).resolve().parents[2]
POD = "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {containers: [{name: c, image: x}]}\n"


def unanswered(url: str, seconds: str = "1") -> str:
    return (f"kubeview: The API server at {url} accepted the connection but did not answer within {seconds} s; "
            "check that the cluster is healthy and the kubeconfig's server address is right "
            "(KUBEVIEW_CONNECT_TIMEOUT sets the wait).\n")


def kubeview(tmp_path: Path, url: str, *args: str, ca: Path | None = None) -> subprocess.CompletedProcess[str]:
    kubeconfig = KubeAPI().write_kubeconfig(tmp_path / "kubeconfig", server=url, ca=ca)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "KUBECONFIG": str(kubeconfig), "KUBEVIEW_CONNECT_TIMEOUT": "1",
           "HOME": str(tmp_path)}
    return subprocess.run([sys.executable, "-m", "kubeview", *args], capture_output=True, text=True, timeout=120,
                          env=env, cwd=tmp_path)


@pytest.mark.parametrize("answers", ["no TLS handshake", "no headers"])
def test_snapshot_of_a_server_that_never_answers_is_one_line_and_exit_1(tmp_path: Path, answers: str) -> None:
    tls = self_signed(tmp_path) if answers == "no headers" else None
    with SilentServer(tls) as server:
        out = kubeview(tmp_path, server.url, "snapshot", ca=tls[0] if tls else None)
        assert (out.returncode, out.stdout, out.stderr) == (1, "", unanswered(server.url))
        assert server.accepted == 1  # discovery, once: not seven discoveries and then six lists


@pytest.mark.parametrize(("args", "code"), [(("fit", "pod.yaml"), 1), (("plan", "default/p"), 3)])
def test_fit_and_plan_give_up_as_snapshot_does(tmp_path: Path, args: tuple[str, ...], code: int) -> None:
    (tmp_path / "pod.yaml").write_text(POD)
    with SilentServer() as server:
        out = kubeview(tmp_path, server.url, *args)
        assert (out.returncode, out.stderr) == (code, unanswered(server.url)), out.stdout


def test_the_wait_is_the_connect_timeout_which_the_environment_sets() -> None:
    assert WatchSettings.from_env({}).connect_timeout == 10.0
    assert WatchSettings.from_env({"KUBEVIEW_CONNECT_TIMEOUT": "2.5"}).connect_timeout == 2.5
    for bad in ("0", "-1", "ten", "inf", "nan"):
        with pytest.raises(SourceError, match=f"^KUBEVIEW_CONNECT_TIMEOUT must be a number of seconds above 0, "
                                              f"not '{bad}'.$"):
            WatchSettings.from_env({"KUBEVIEW_CONNECT_TIMEOUT": bad})


def test_without_giving_up_before_sync_the_informers_retry_after_one_discovery(tmp_path: Path) -> None:
    """The other setting: no SourceError from discovery; the informers report and retry."""
    events: queue.Queue = queue.Queue()
    stop = threading.Event()
    failure: list[BaseException] = []
    with SilentServer() as server:
        kubeconfig = KubeAPI().write_kubeconfig(tmp_path / "kubeconfig", server=server.url)
        settings = WatchSettings(connect_timeout=0.5, give_up_before_sync=False, error_backoffs=(0.1,))
        source = KubeSource(str(kubeconfig), settings=settings)

        def body() -> None:
            try:
                source.run(events.put, stop)
            except BaseException as exc:
                failure.append(exc)

        thread = threading.Thread(target=body, daemon=True)
        thread.start()
        try:
            while (event := events.get(timeout=60)) and getattr(event, "state", "") != "reconnecting":
                pass
        finally:
            stop.set()
            thread.join(timeout=30)
            source.close()
    assert not failure and not thread.is_alive()
    assert event.detail == describe_connection_error(ReadTimeoutError(None, "/", "Read timed out. (read timeout=0.5)"),
                                                     server.url)
    assert source.kinds == ("Node", "Pod", "ReplicaSet", "Deployment", "StatefulSet", "Job", "ResourceQuota")  # no DRA, no gangs
