"""The TUI on a server it cannot read (#42 item 3): no figure before it is known, and a failed first
connection is one line and exit 1, as kubectl and every headless command (README: "unreachable
server ... exit 1"); a server that goes away after the first list keeps the TUI open, marked stale.

Real servers: a port nothing listens on (127.0.0.1:1, as the issue found it) and the test API server
(tests/kubeapi) read by the `kubernetes` client.
"""

from __future__ import annotations

import fcntl
import os
import pty
import re
import select
import struct
import subprocess
import sys
import termios
import threading
import time
from pathlib import Path

from kubeapi import KubeAPI, SilentServer, WatchScript, status_body
from tui_helpers import run_async, settle, wait_for

from kubeview.cluster.kube.source import KubeSource
from kubeview.model.cluster import ClusterModel
from kubeview.model.events import Listed
from kubeview.tui.app import make_app
from kubeview.tui.summary import summarize
from kubeview.tui.widgets.cluster_header import ClusterHeader

ROOT = Path(__file__).resolve().parents[2]
PODS = "/api/v1/pods"
UNREACHABLE = "Cannot reach the API server at https://127.0.0.1:1 (connection refused)"


def header_lines(app) -> list[str]:  # noqa: ANN001
    header = app.screen.query_one(ClusterHeader)
    return [header._line1(header.summary).plain, header._line2(header.summary).plain,
            header._line3(header.summary).plain]


def run_in_a_terminal(args: list[str], env: dict[str, str], timeout: float = 60.0) -> tuple[int, str]:
    """`python -m kubeview ARGS` on a pty of 100x30 (so the TUI, not progress lines): exit code, all it wrote."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 30, 100, 0, 0))
    proc = subprocess.Popen([sys.executable, "-m", "kubeview", *args], stdin=slave, stdout=slave, stderr=slave,
                            env=env, cwd=ROOT, start_new_session=True)
    os.close(slave)
    out = b""
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([master], [], [], 0.5)
            if ready:
                try:
                    data = os.read(master, 1 << 16)
                except OSError:  # EIO: the child closed the terminal
                    break
                if not data:
                    break
                out += data
            elif proc.poll() is not None:
                break
        code = proc.wait(timeout=max(1.0, deadline - time.monotonic()))
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        os.close(master)
    return code, out.decode(errors="replace")


def test_an_unreachable_server_at_start_is_one_line_and_exit_1(tmp_path: Path) -> None:
    """Before: the TUI opened on "✖ failed since …" beside "cpu 0/0", "GPU 0/0", "GPUs none in this
    cluster" and stayed open."""
    kubeconfig = KubeAPI().write_kubeconfig(tmp_path / "kubeconfig", server="https://127.0.0.1:1")
    env = {**os.environ, "PYTHONPATH": str(ROOT), "TERM": "xterm-256color", "KUBECONFIG": str(kubeconfig)}
    env.pop("TEXTUAL_DRIVER", None)
    code, out = run_in_a_terminal([], env)
    assert code == 1, out
    assert left_on_the_terminal(out) == [f"kubeview: {UNREACHABLE}; check that the cluster is running and the "
                                         "kubeconfig's server address is right."]
    assert "GPU 0/0" not in out and "none in this cluster" not in out and "Traceback" not in out


def left_on_the_terminal(out: str) -> list[str]:
    """The lines the TUI left behind once it quit its alternate screen (which it must have entered)."""
    assert "\x1b[?1049l" in out, out  # the TUI started (then left its alternate screen)
    after = out.rpartition("\x1b[?1049l")[2]
    text = re.sub(r"\x1b\[[0-9;?<>=]*[ -/]*[@-~]|\x1b[()][A-Z0-9]|\x1b[=>]|\x1b\][^\x07]*\x07", "", after)
    return [line.strip() for line in text.replace("\r", "\n").split("\n") if line.strip()]


def test_a_server_that_accepts_and_never_answers_is_one_line_and_exit_1(tmp_path: Path) -> None:
    """Before: 'connecting…' with '…' figures while discovery waited out 10 s for each of seven group
    versions, then the lists theirs (over a minute; tests/cluster/test_kube_unanswered.py has the rest)."""
    with SilentServer() as server:
        kubeconfig = KubeAPI().write_kubeconfig(tmp_path / "kubeconfig", server=server.url)
        env = {**os.environ, "PYTHONPATH": str(ROOT), "TERM": "xterm-256color", "KUBECONFIG": str(kubeconfig),
               "KUBEVIEW_CONNECT_TIMEOUT": "1"}
        env.pop("TEXTUAL_DRIVER", None)
        code, out = run_in_a_terminal([], env)
        assert code == 1, out
        assert left_on_the_terminal(out) == [
            f"kubeview: The API server at {server.url} accepted the connection but did not answer within 1 s; "
            "check that the cluster is healthy and the kubeconfig's server address is right "
            "(KUBEVIEW_CONNECT_TIMEOUT sets the wait)."]
        assert server.accepted == 1 and "Traceback" not in out


@run_async
async def test_a_401_at_start_ends_the_app_with_exit_1_and_its_reason(kube_api: KubeAPI, tmp_path: Path) -> None:
    kubeconfig = kube_api.write_kubeconfig(tmp_path / "bad-token", token="wrong")
    source = KubeSource(str(kubeconfig))
    app = make_app(source)
    try:
        async with app.run_test(size=(100, 30)) as pilot:
            await wait_for(pilot, lambda: bool(app.start_failure), what="the failure")
    finally:
        source.close()
    assert app.return_value == 1  # run_tui prints start_failure as "kubeview: ..." and returns 1
    assert "failed: the API server rejected the credentials (401 Unauthorized" in app.start_failure
    assert "\n" not in app.start_failure


@run_async
async def test_figures_read_pending_until_their_lists_complete(kube_api: KubeAPI) -> None:
    """Nodes listed, pods failing (500, retried): the node count is known, nothing that counts pods is."""
    kube_api.respond("GET", PODS, 500, status_body(500, "InternalError", "etcd is slow"), times=10_000)
    source = KubeSource(str(kube_api.kubeconfig))
    app = make_app(source)
    try:
        async with app.run_test(size=(160, 40)) as pilot:
            # the node list can complete before the first pods answer (500) makes the source reconnect
            await wait_for(pilot, lambda: "5 nodes" in header_lines(app)[0] and "reconnecting" in header_lines(app)[0],
                           what="the nodes listed and the pods' 500 answered")
            line1, line2, line3 = header_lines(app)
            assert "5 nodes … pods … pending" in line1 and "reconnecting" in line1
            assert line2.split() == ["cpu", "…", "│", "mem", "…", "│", "GPU", "…"]
            assert line3.strip() == "GPUs … (listing Pod…)"  # what the figures wait for (#41)
            assert not app.start_failure  # a 500 is retried: not the end of the app
    finally:
        source.close()


def test_the_gpu_figures_wait_for_the_dra_lists_the_source_reads() -> None:
    model = ClusterModel("t")
    header = ClusterHeader()
    summary = summarize(model, kinds=("Node", "Pod", "ResourceSlice"))
    assert "… nodes … pods … pending" in header._line1(summary).plain
    model.apply(Listed("Node", [], "1"))
    model.apply(Listed("Pod", [], "1"))
    summary = summarize(model, kinds=("Node", "Pod", "ResourceSlice"))
    assert "0 nodes 0 pods 0 pending" in header._line1(summary).plain
    assert "cpu ········ 0/0" in header._line2(summary).plain and header._line2(summary).plain.endswith("GPU …")
    assert header._line3(summary).plain.strip() == "GPUs … (listing ResourceSlice…)"
    assert header._line3(summarize(model)).plain.strip() == "GPUs none in this cluster"  # no DRA to wait for
    model.apply(Listed("ResourceSlice", [], "1"))
    assert header._line3(summarize(model, kinds=("ResourceSlice",))).plain.strip() == "GPUs none in this cluster"


@run_async
async def test_a_server_failing_after_the_first_list_keeps_the_tui_open_with_its_figures(kube_api: KubeAPI) -> None:
    """After the first list, a lost server is a stale view (reconnecting), not the end of the app."""
    gate = threading.Event()
    kube_api.script_watch(PODS, WatchScript([], end="drop", gate=gate))  # the pods' watch breaks on cue
    source = KubeSource(str(kube_api.kubeconfig))
    app = make_app(source)
    try:
        async with app.run_test(size=(160, 40)) as pilot:
            await settle(pilot)
            kube_api.respond("GET", PODS, 503, status_body(503, "ServiceUnavailable", "going away"), times=10_000)
            gate.set()
            await wait_for(pilot, lambda: "reconnecting" in header_lines(app)[0], what="the lost connection")
            line1, line2, _ = header_lines(app)
            assert "5 nodes 6 pods 1 pending" in line1 and "GPU ████···· 2/4" in line2  # the last figures, stale
            assert app.is_running and not app.start_failure
    finally:
        source.close()
