"""The recorded kube-apiserver v1.36.2 responses in tests/fixtures/k8s/ (see its README.md and PROVENANCE.md)."""

from __future__ import annotations

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
