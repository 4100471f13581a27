"""Raw API answers saved as fixtures (scripts/record-gang137.py, scripts/record-batch-schedulers.py).

Each request goes to the plane's API server as its admin, and the body the server answered is saved
byte-for-byte re-indented (JSON) or line by line (watch streams), with an `index.json` entry naming
method, path, status and a note, in the format of tests/fixtures/k8s/ (its README). Nothing is
reshaped: a recording is what a client of that server reads.
"""

from __future__ import annotations

import json
import ssl
import sys
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from .plane import Plane, bin_dir, missing_binaries, new_plane
from .procs import stop_all

AGENT = "realk8s-record/0.1"


@dataclass
class Answer:
    status: int
    body: dict
    raw: bytes


@dataclass
class Recorder:
    plane: Plane
    out: Path
    index: list[dict] = field(default_factory=list)
    log: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.out.mkdir(parents=True, exist_ok=True)
        self._ssl = ssl.create_default_context(cafile=str(self.plane.pki.ca.cert))
        admin = self.plane.pki.clients["admin"]
        self._ssl.load_cert_chain(str(admin.cert), str(admin.key))

    def say(self, line: str) -> None:
        print(line, flush=True)
        self.log.append(line)

    def call(self, method: str, path: str, body: dict | None = None, content_type: str = "application/json",
             timeout: float = 30) -> Answer:
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(f"{self.plane.server}{path}", data=data, method=method,
                                     headers={"Content-Type": content_type, "Accept": "application/json",
                                              "User-Agent": AGENT})
        try:
            with urllib.request.urlopen(req, timeout=timeout, context=self._ssl) as r:
                raw, status = r.read(), r.status
        except urllib.error.HTTPError as exc:
            raw, status = exc.read(), exc.code
        try:
            parsed = json.loads(raw) if raw.strip() else {}
        except ValueError:
            parsed = {"raw": raw.decode(errors="replace")}
        return Answer(status, parsed, raw)

    def save(self, name: str, method: str, path: str, body: dict | None = None, note: str = "",
             content_type: str = "application/json", expect: int | None = None) -> Answer:
        """Make the request and save its answer as `name`."""
        ans = self.call(method, path, body, content_type)
        if expect is not None and ans.status != expect:
            raise SystemExit(f"{method} {path} -> {ans.status}, wanted {expect}: {ans.raw[:400]!r}")
        (self.out / name).write_text(json.dumps(ans.body, indent=1) + "\n")
        self.index.append({"file": name, "method": method, "path": path, "status": ans.status, "note": note})
        self.say(f"saved {name:<44} {method} {path} -> {ans.status}")
        return ans

    def save_watch(self, name: str, path: str, seconds: int, note: str = "") -> int:
        """A watch from a past resourceVersion, ended by the server after `seconds`: the events since
        then, one per line as streamed."""
        sep = "&" if "?" in path else "?"
        full = f"{path}{sep}watch=1&allowWatchBookmarks=true&timeoutSeconds={seconds}"
        req = urllib.request.Request(f"{self.plane.server}{full}", headers={"User-Agent": AGENT})
        lines = []
        with urllib.request.urlopen(req, timeout=seconds + 30, context=self._ssl) as r:
            for line in r:
                if line.strip():
                    lines.append(json.dumps(json.loads(line)))
        (self.out / name).write_text("".join(f"{x}\n" for x in lines))
        self.index.append({"file": name, "method": "GET", "path": full, "status": 200,
                           "note": f"{len(lines)} events, one per line as streamed" + (f"; {note}" if note else "")})
        self.say(f"saved {name:<44} GET {full} -> {len(lines)} events")
        return len(lines)

    def finish(self) -> None:
        (self.out / "index.json").write_text(json.dumps(self.index, indent=2) + "\n")
        (self.out / "capture.log").write_text("".join(f"{x}\n" for x in self.log))



def on_gated_plane(record: Callable[[Plane], None]) -> int:
    """Start a gated plane (the `gated_plane` fixture's), run `record` on it, stop it; 1 without binaries."""
    return on_plane(record, gated=True)


def on_plane(record: Callable[[Plane], None], gated: bool = False) -> int:
    """Start a plane (the `plane` fixture's, or with `gated` the `gated_plane`'s), run `record` on it,
    stop it; 1 without binaries."""
    binaries = bin_dir()
    if missing_binaries(binaries):
        sys.stderr.write(f"missing {', '.join(missing_binaries(binaries))}: bash scripts/build-kubernetes.sh\n")
        return 1
    plane = new_plane("kubeview-realk8s-record-", gated=gated)
    try:
        plane.start()
        record(plane)
    finally:
        stop_all()
    return 0
