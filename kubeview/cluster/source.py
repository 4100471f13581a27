"""The interface every cluster source (kube, local) offers to the TUI, the snapshot and the extender."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Protocol

from kubeview.model.events import SourceEvent


class ActionError(Exception):
    """An action the cluster refused; the message is one sentence a user can act on."""


class SourceError(Exception):
    """The source cannot start (bad kubeconfig, unknown context, unreachable server); one sentence.

    `usage=True` when what was typed is wrong (conflicting options, a `--kubeconfig` file or
    `--context` that does not exist): exit 2, as argparse; otherwise the run failed: exit 1 (the
    rule: docs/architecture.md, "Exit codes")."""

    def __init__(self, message: str, *, usage: bool = False) -> None:
        super().__init__(message)
        self.exit_code = 2 if usage else 1


class ClusterSource(Protocol):
    title: str  # "local cluster" or "CONTEXT @ https://server"
    is_local: bool

    def run(self, emit: Callable[[SourceEvent], None], stop: threading.Event) -> None:
        """Block, emitting Listed/WatchEvent/ConnectionState until `stop` is set. Runs in a worker thread."""

    def scale(self, kind: str, namespace: str, name: str, replicas: int) -> str:
        """Set a workload's replicas; returns a one-line result, raises ActionError with the refusal."""

    def set_parallelism(self, namespace: str, name: str, parallelism: int) -> str:
        """Set a Job's spec.parallelism; one-line result, ActionError with the refusal."""

    def suspend_job(self, namespace: str, name: str, suspend: bool) -> str:
        """Suspend (True) or resume (False) a Job; one-line result, ActionError with the refusal."""

    def close(self) -> None:
        """Stop everything this source started (processes, threads, connections)."""
