"""A decoy cluster: a loopback port that records every connection, and kubeconfigs pointing at it.

`.ci/run` runs the suite with `KUBECONFIG`, `~/.kube/config` and the in-cluster variables all naming
this decoy, then fails if anything connected (issue 38): no test may reach a cluster it was not
given. `tests/test_hermetic.py` runs it the same way on a probe.

    python tests/kube_decoy.py DIR     # writes DIR/kubeconfig, DIR/home/.kube/config, DIR/port;
                                       # appends one line per connection to DIR/connections; runs
                                       # until SIGTERM (or --seconds)
"""

from __future__ import annotations

import argparse
import contextlib
import json
import signal
import socket
import sys
import threading
import time
from pathlib import Path

MAX_CONNECTIONS = 10_000   # past this the decoy stops accepting: the count already condemns the run
FIRST_BYTES = 64           # what is recorded of each connection's first message (a TLS hello, a GET)


def kubeconfig(port: int) -> dict:
    """A one-context kubeconfig naming the decoy (TLS unchecked: it never completes a handshake)."""
    return {"apiVersion": "v1", "kind": "Config", "current-context": "decoy",
            "clusters": [{"name": "decoy", "cluster": {"server": f"https://127.0.0.1:{port}",
                                                       "insecure-skip-tls-verify": True}}],
            "users": [{"name": "decoy", "user": {"token": "decoy-token"}}],
            "contexts": [{"name": "decoy", "context": {"cluster": "decoy", "user": "decoy"}}]}


def connections(folder: Path) -> list[str]:
    """The recorded connections, one line each (empty when nothing connected)."""
    log = folder / "connections"
    return log.read_text().splitlines() if log.exists() else []


class Decoy:
    """The listening socket and its recorder; `start()` writes the files and returns at once."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self._sock = socket.create_server(("127.0.0.1", 0))
        self.port: int = self._sock.getsockname()[1]
        self._lock = threading.Lock()
        self._count = 0

    def start(self) -> Decoy:
        self.folder.mkdir(parents=True, exist_ok=True)
        text = json.dumps(kubeconfig(self.port), indent=1)
        (self.folder / "kubeconfig").write_text(text)
        kube = self.folder / "home" / ".kube"
        kube.mkdir(parents=True, exist_ok=True)
        (kube / "config").write_text(text)
        (self.folder / "connections").write_text("")
        (self.folder / "port").write_text(f"{self.port}\n")
        threading.Thread(target=self._accept, daemon=True, name="decoy").start()
        return self

    def _accept(self) -> None:
        while self._count < MAX_CONNECTIONS:
            try:
                conn, peer = self._sock.accept()
            except OSError:
                return
            self._count += 1
            threading.Thread(target=self._record, args=(conn, peer), daemon=True).start()

    def _record(self, conn: socket.socket, peer: tuple[str, int]) -> None:
        conn.settimeout(2.0)
        try:
            first = conn.recv(FIRST_BYTES)
        except OSError:
            first = b""
        finally:
            conn.close()
        line = f"{time.strftime('%H:%M:%S')} from {peer[0]}:{peer[1]} first bytes {first[:FIRST_BYTES]!r}\n"
        with self._lock, (self.folder / "connections").open("a") as log:
            log.write(line)

    def stop(self) -> None:
        self._sock.close()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("folder", type=Path)
    ap.add_argument("--seconds", type=float, default=6 * 3600.0, help="stop after this long (default 6 h)")
    args = ap.parse_args(argv)
    decoy = Decoy(args.folder).start()
    done = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: done.set())
    print(f"decoy: listening on 127.0.0.1:{decoy.port}, recording into {args.folder / 'connections'}", flush=True)
    with contextlib.suppress(KeyboardInterrupt):
        done.wait(args.seconds)
    decoy.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
