"""The interface every cluster source (kube, local, synthetic) offers to the TUI, the commands and the
extender: `ClusterSource` (what all have) and the capabilities a source declares by implementing them."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from kubeview.model.events import SourceEvent
from kubeview.scheduling.config import PackingConfig

if TYPE_CHECKING:
    from kubernetes import client


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


@runtime_checkable
class ClusterSource(Protocol):
    """What every source has (kube, local, synthetic, the tests' own): a title, a run loop, a close.

    Anything more is a capability below, declared by implementing its Protocol and read with
    `isinstance(source, TheProtocol)` where it is used (docs/architecture.md, "Adding a source
    capability"); a source that lacks one simply does not offer the action."""

    title: str  # "local cluster" or "CONTEXT @ https://server"
    is_local: bool

    def run(self, emit: Callable[[SourceEvent], None], stop: threading.Event) -> None:
        """Block, emitting Listed/WatchEvent/ConnectionState until `stop` is set. Runs in a worker thread."""

    def close(self) -> None:
        """Stop everything this source started (processes, threads, connections)."""


@runtime_checkable
class ListsKinds(Protocol):
    """A source that says which kinds must sync before its view is whole (the kube source: discovery
    adds the DRA and gang kinds); one without it lists `model.events.KINDS`."""

    kinds: tuple[str, ...]


@runtime_checkable
class Scales(Protocol):
    """Scales workloads (Deployment, ReplicaSet, StatefulSet)."""

    def scale(self, kind: str, namespace: str, name: str, replicas: int) -> str:
        """Set a workload's replicas; returns a one-line result, raises ActionError with the refusal."""


@runtime_checkable
class EditsJobs(Protocol):
    """Changes a Job's parallelism and suspends or resumes it."""

    def set_parallelism(self, namespace: str, name: str, parallelism: int) -> str:
        """Set a Job's spec.parallelism; one-line result, ActionError with the refusal."""

    def suspend_job(self, namespace: str, name: str, suspend: bool) -> str:
        """Suspend (True) or resume (False) a Job; one-line result, ActionError with the refusal."""


@runtime_checkable
class KnowsPacking(Protocol):
    """Its scheduler's packing policy is known (the embedded scheduler's, the synthetic one's pretend one)."""

    @property
    def packing(self) -> PackingConfig: ...


@runtime_checkable
class RunsPacking(KnowsPacking, Protocol):
    """Runs the scheduler itself, so its packing policy can be changed here (the embedded cluster)."""

    def set_packing(self, config: PackingConfig) -> str:
        """Make `config` live; one-line result, ActionError with the refusal."""


@runtime_checkable
class GetsObjects(Protocol):
    """Hands out its own copy of an object (the embedded cluster's apiserver)."""

    def get(self, kind: str, namespace: str, name: str) -> dict | None: ...


@runtime_checkable
class FetchesObjects(Protocol):
    """Reads one whole object from the cluster on demand (a real API server: the model keeps a trimmed
    pod, so the pod screen fetches the rest when opened). A network round trip: call it off the UI
    thread; None when the object is gone or the server cannot say."""

    def fetch(self, kind: str, namespace: str, name: str) -> dict | None: ...


@runtime_checkable
class ReportsQueuePositions(Protocol):
    """Reads Kueue's queue positions (its visibility API) while `want_positions` is set, emitting
    `QueuePositions` (the kube source: kube/queue_positions.py). Set it only while they are shown."""

    want_positions: threading.Event


@runtime_checkable
class Evicts(GetsObjects, Protocol):
    """The Eviction API, nominations and PodDisruptionBudgets (what applying a plan needs)."""

    def evict(self, namespace: str, name: str) -> str: ...

    def nominate(self, namespace: str, name: str, node: str) -> str: ...

    def budgets(self) -> list[dict]: ...


@runtime_checkable
class Preempts(Protocol):
    """Reclaims a node as a spot provider would (the embedded cluster)."""

    def preempt_node(self, name: str) -> str: ...


@runtime_checkable
class TalksToKube(Protocol):
    """A real API server: its configured `kubernetes.client.ApiClient` and its URL, for callers that
    need more of the API (bindings, evictions, the render job's objects)."""

    api_client: client.ApiClient  # (only typed here: the client is imported by the kube source)
    server: str


@runtime_checkable
class MaybeDemo(Protocol):
    """Knows whether it is `--demo` (commands it suggests on screen then say `--demo`)."""

    demo: bool


CAPABILITIES: tuple[type, ...] = (ListsKinds, Scales, EditsJobs, KnowsPacking, RunsPacking, GetsObjects,
                                  FetchesObjects, Evicts, Preempts, TalksToKube, MaybeDemo)


def capabilities(source: ClusterSource) -> tuple[str, ...]:
    """The names of the capabilities `source` declares (for a reader, a test, a debug line; code that
    acts asks `isinstance(source, TheProtocol)` where it acts)."""
    return tuple(c.__name__ for c in CAPABILITIES if isinstance(source, c))
