"""The recorded kube-apiserver v1.36.2 responses in tests/fixtures/k8s/ (see its README.md and PROVENANCE.md)."""

from __future__ import annotations

import copy
import json
from functools import cache
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "tests" / "fixtures" / "k8s"


def path(name: str) -> Path:
    return FIXTURES / name


@cache
def _text(name: str) -> str:
    return path(name).read_text()


def load(name: str) -> dict:
    """A fresh copy of one JSON fixture (callers may mutate it)."""
    return json.loads(_text(name))


def raw(name: str) -> bytes:
    return _text(name).encode()


def watch_lines(name: str) -> list[bytes]:
    """The events of a recorded watch stream, one raw JSON line each (no newline)."""
    return [line.encode() for line in _text(name).splitlines() if line.strip()]


def watch_events(name: str) -> list[dict]:
    return [json.loads(line) for line in watch_lines(name)]


def event_watch_lines() -> list[bytes]:
    """A watch of Events built from the recording (no watch of Events was recorded; the objects are
    the recorded ones with what an apiserver would change): gpu-c's second FailedScheduling
    seen a third time (MODIFIED, series count 3), a new Warning about gpu-b (ADDED), and a
    SuccessfulDelete about the ReplicaSet going (DELETED)."""
    items = load("events.json")["items"]
    again = copy.deepcopy(items[-1])
    again["metadata"]["resourceVersion"] = "350"
    again["series"] = {"count": 3, "lastObservedTime": "2026-11-22T10:05:33.273603Z"}
    new = copy.deepcopy(items[-3])  # gpu-b's Scheduled, made into a kubelet Warning
    new["metadata"].update(name="gpu-b.18ea55f3aa000001", uid="7f1c", resourceVersion="351")
    new.update(type="Warning", reason="FailedMount", eventTime=None, count=1, action=None,
               message='MountVolume.SetUp failed for volume "data" : configmap "data" not found',
               source={"component": "kubelet", "host": "gpu-node-2"},
               firstTimestamp="2026-11-22T10:05:40Z", lastTimestamp="2026-11-22T10:05:40Z")
    gone = copy.deepcopy(items[12])
    gone["metadata"]["resourceVersion"] = "352"
    return [json.dumps({"type": t, "object": {"kind": "Event", "apiVersion": "v1", **o}}).encode()
            for t, o in (("MODIFIED", again), ("ADDED", new), ("DELETED", gone))]


def index(folder: str = "") -> list[dict]:
    """index.json (of `folder`, e.g. "dra"): every file with the method, path and HTTP status it was
    recorded from."""
    return json.loads(_text(f"{folder}/index.json" if folder else "index.json"))


def quantity_strings() -> set[str]:
    """Every quantity string in every fixture (capacity, allocatable, requests, limits, overhead)."""
    found: set[str] = set()

    def walk(node: object, in_resources: bool) -> None:
        if isinstance(node, dict):
            for k, v in node.items():
                if in_resources and isinstance(v, str):
                    found.add(v)
                else:
                    walk(v, k in ("capacity", "allocatable", "requests", "limits", "overhead"))
        elif isinstance(node, list):
            for item in node:
                walk(item, False)

    for entry in sorted(FIXTURES.iterdir()):
        if entry.is_dir():
            continue
        if entry.suffix == ".json":
            walk(json.loads(entry.read_text()), False)
        elif entry.suffix == ".jsonl":
            for line in entry.read_text().splitlines():
                if line.strip():
                    walk(json.loads(line), False)
    return found
