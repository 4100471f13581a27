"""Kueue's queue positions, polled from its visibility API through the API server (model/queues/positions.py).

Kueue v0.17 reports where a pending Workload stands only there (an aggregated API server in its manager,
`visibility.kueue.x-k8s.io/v1beta2`), not on its objects, so this is a poll, not a watch; bounded:
- only while someone wants positions (`want`: the TUI's Quota and queue screens, `snapshot`), every
  `interval` seconds, in the source's own thread (never the UI's);
- only for the ClusterQueues whose status counts pending Workloads (seen in the source's own
  ClusterQueue events: `see`), at most `max_queues` of them per round, one GET each with `limit`;
- a round is one `QueuePositions` event; when the API is not served (404: the group unknown), refused
  (403) or failing (503: its APIService unavailable; a timeout), the round has no positions and says why
  once (`Positions.unavailable`), never a guess.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import quote

from kubernetes import client
from kubernetes.client.exceptions import ApiException

from kubeview.cluster.kube.errors import NETWORK_ERRORS
from kubeview.cluster.kube.raw import response_json
from kubeview.model.events import Listed, QueuePositions, SourceEvent, WatchEvent
from kubeview.model.queues.objects import KIND_CLUSTER_QUEUE
from kubeview.model.queues.positions import (
    API,
    NOT_SERVED,
    Key,
    Position,
    Positions,
    pending_queues,
    read_summary,
)

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class PositionSettings:
    interval: float = 5.0
    """Seconds between rounds while positions are wanted."""
    max_queues: int = 20
    """ClusterQueues asked per round (those with pending Workloads, by name)."""
    limit: int = 1000
    """Pending Workloads asked per ClusterQueue (Kueue's own default)."""
    timeout: tuple[float, float] = (3.0, 10.0)
    """Connect and read timeouts of one request."""


class QueuePositionPoller:
    """See the module docstring. `see` is called with every event the source emits (any thread);
    `run` is the poll loop, in a thread of its own, until `stop`."""

    def __init__(self, api_client: client.ApiClient, emit: Callable[[SourceEvent], None], want: threading.Event,
                 settings: PositionSettings | None = None) -> None:
        self.api_client = api_client
        self.emit = emit
        self.settings = settings or PositionSettings()
        self.want = want
        self._lock = threading.Lock()
        self._queues: dict[str, dict] = {}
        self._listed = threading.Event()

    def see(self, event: SourceEvent) -> None:
        """Keep the ClusterQueues' last objects (their status says which have pending Workloads)."""
        if isinstance(event, Listed) and event.kind == KIND_CLUSTER_QUEUE:
            with self._lock:
                self._queues = {str((o.get("metadata") or {}).get("name", "")): o for o in event.objects}
            self._listed.set()
        elif isinstance(event, WatchEvent) and event.kind == KIND_CLUSTER_QUEUE:
            name = str((event.obj.get("metadata") or {}).get("name", ""))
            with self._lock:
                if event.type == "DELETED":
                    self._queues.pop(name, None)
                else:
                    self._queues[name] = event.obj

    def run(self, stop: threading.Event) -> None:
        """A round as soon as positions are wanted and the ClusterQueues are listed, then every `interval`."""
        while not stop.is_set():
            if self.want.is_set() and self._listed.is_set():
                self.emit(QueuePositions(self.round()))
                stop.wait(self.settings.interval)
            else:
                stop.wait(0.2)

    def round(self) -> Positions:
        with self._lock:
            names = pending_queues(self._queues)[: self.settings.max_queues]
        found: dict[str, dict[Key, Position]] = {}
        for name in names:
            try:
                found[name] = read_summary(name, self._get(name))
            except _Gone:
                continue  # deleted since its event: nothing to say of it
            except _Unavailable as exc:
                return Positions(found, str(exc))
        return Positions(found)

    def _get(self, cluster_queue: str) -> object:
        path = f"/apis/{API}/clusterqueues/{quote(cluster_queue, safe='')}/pendingworkloads"
        request = self.api_client.param_serialize("GET", path, query_params=[("limit", self.settings.limit)],
                                                  header_params={"Accept": "application/json"},
                                                  auth_settings=["BearerToken"])
        try:
            return response_json(self.api_client._call_with_legacy_options(
                request, {}, None, False, self.settings.timeout, True))
        except ApiException as exc:
            raise _refusal(exc, cluster_queue) from None
        except NETWORK_ERRORS as exc:
            raise _Unavailable(f"positions: Kueue's visibility API did not answer ({exc.__class__.__name__})") from None
        except ValueError as exc:  # not JSON, or not a PendingWorkloadsSummary
            raise _Unavailable(f"positions: Kueue's visibility API answered something else ({exc})") from None


class _Unavailable(Exception):
    """No positions this round; the message says why (shown once)."""


class _Gone(Exception):
    """The ClusterQueue is gone (Kueue's own 404 for it)."""


def _refusal(exc: ApiException, cluster_queue: str) -> Exception:
    """A non-2xx answer in words: a 404 naming the ClusterQueue is Kueue's (the queue is gone), any other
    404 the API server's (the group is not served)."""
    status = exc.status or 0
    try:
        body = json.loads(exc.body or "")
    except (TypeError, ValueError):
        body = None
    details = body.get("details") if isinstance(body, dict) else None
    if status == 404 and isinstance(details, dict) and details.get("name") == cluster_queue:
        return _Gone()
    if status == 404:
        return _Unavailable(NOT_SERVED)
    if status in (401, 403):
        return _Unavailable(f"positions: Kueue's visibility API refused kubeview ({status}; it needs get on "
                            "clusterqueues/pendingworkloads in visibility.kueue.x-k8s.io)")
    message = body.get("message") if isinstance(body, dict) else None
    return _Unavailable(f"positions: Kueue's visibility API is unavailable ({status}"
                        + (f": {message}" if message else f" {exc.reason}") + ")")
