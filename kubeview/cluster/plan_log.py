"""The audit log of applied plans: who applied what, when, on which cluster, and how it ended.

One SQLite file (stdlib sqlite3), by default `$XDG_STATE_HOME/kubeview/plans.sqlite` (else
`~/.local/state/kubeview/plans.sqlite`), or the path in `$KUBEVIEW_PLAN_LOG` / `--log-file`. A row is
written when an apply starts (outcome "applying") and completed when it ends, so an apply that was
killed half-way still shows. Shared by `kubeview plan --apply` and the TUI.
"""

from __future__ import annotations

import contextlib
import getpass
import json
import os
import socket
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

SCHEMA = """CREATE TABLE IF NOT EXISTS plans (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    at TEXT NOT NULL,          -- when the apply started, UTC ISO 8601
    who TEXT NOT NULL,         -- user@host
    cluster TEXT NOT NULL,     -- the source's title (context @ server, or local cluster)
    target TEXT NOT NULL,
    plan TEXT NOT NULL,        -- the plan as JSON (Plan.to_dict)
    outcome TEXT NOT NULL,     -- applying | bound | refused | timeout | failed
    detail TEXT NOT NULL DEFAULT '',
    ended TEXT                 -- when it ended, UTC ISO 8601
)"""


@dataclass(frozen=True, slots=True)
class Entry:
    id: int
    at: str
    who: str
    cluster: str
    target: str
    plan: dict
    outcome: str
    detail: str
    ended: str | None

    def to_dict(self) -> dict:
        return {"id": self.id, "at": self.at, "who": self.who, "cluster": self.cluster, "target": self.target,
                "plan": self.plan, "outcome": self.outcome, "detail": self.detail, "ended": self.ended}


def default_path() -> Path:
    env = os.environ.get("KUBEVIEW_PLAN_LOG")
    if env:
        return Path(env)
    state = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(state) / "kubeview" / "plans.sqlite"


def who() -> str:
    try:
        user = getpass.getuser()
    except (KeyError, OSError):
        user = str(os.getuid()) if hasattr(os, "getuid") else "unknown"
    return f"{user}@{socket.gethostname()}"


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


class PlanLog:
    def __init__(self, path: Path | str | None = None) -> None:
        self.path = Path(path) if path else default_path()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self._connect() as db:
            db.execute(SCHEMA)

    @contextlib.contextmanager
    def _connect(self) -> Iterator[sqlite3.Connection]:
        """One connection per call, committed and closed (the log is written a few times per apply)."""
        db = sqlite3.connect(self.path, timeout=10)
        try:
            with db:
                yield db
        finally:
            db.close()

    def started(self, cluster: str, target: str, plan: dict, user: str | None = None) -> int:
        with self._connect() as db:
            cur = db.execute("INSERT INTO plans (at, who, cluster, target, plan, outcome) VALUES (?, ?, ?, ?, ?, ?)",
                             (_now(), user or who(), cluster, target, json.dumps(plan), "applying"))
            assert cur.lastrowid is not None  # an INSERT's row
            return cur.lastrowid

    def ended(self, entry: int, outcome: str, detail: str = "") -> None:
        with self._connect() as db:
            db.execute("UPDATE plans SET outcome = ?, detail = ?, ended = ? WHERE id = ?",
                       (outcome, detail, _now(), entry))

    def entries(self, limit: int = 50) -> list[Entry]:
        """The latest `limit` entries, newest first."""
        with self._connect() as db:
            rows = db.execute("SELECT id, at, who, cluster, target, plan, outcome, detail, ended FROM plans "
                              "ORDER BY id DESC LIMIT ?", (limit,)).fetchall()
        return [Entry(r[0], r[1], r[2], r[3], r[4], json.loads(r[5]), r[6], r[7], r[8]) for r in rows]
