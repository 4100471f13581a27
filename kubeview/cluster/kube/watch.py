"""The informer loop for one kind: list, then watch from the list's resourceVersion, forever.

Follows kopf's `clients/watching.py` (see STYLE.md): list (raw JSON, no model classes: a 150,000-pod
list parses in a second instead of a minute), emit `Listed`, watch from its resourceVersion with
`allowWatchBookmarks=true`, remember the resourceVersion of every event including BOOKMARK, and
re-watch from it when the server ends the stream. A 410 Gone in any of its three shapes (HTTP 410
on a list, on a list's `continue`, or an `ERROR` event in a watch) goes back to the outer loop,
which relists. A broken connection re-watches with backoff and reports the kind as down, so the
view is marked stale meanwhile; a 429 waits as long as `Retry-After` says. 401 and 403 are not
retried: they raise `Fatal`, which `KubeSource` turns into a `SourceError`.

The python client's `Watch.stream` is not used: it retries a 410 once by itself and then raises.
"""

from __future__ import annotations

import contextlib
import functools
import json
import logging
import random
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import urllib3.exceptions
from kubernetes.client.exceptions import ApiException

from kubeview.cluster.kube import pod_wire
from kubeview.cluster.kube.errors import describe_api_error, describe_connection_error, retry_after
from kubeview.cluster.kube.page_ahead import Ahead, peek_continue
from kubeview.cluster.kube.watch_settings import WatchSettings as WatchSettings  # callers import it from here
from kubeview.model.events import ConnectionState, Listed, Listing, SourceEvent, WatchEvent
from kubeview.model.gcpause import gc_paused

log = logging.getLogger(__name__)

# A list page this big is decoded with the cyclic collector paused and its objects frozen after: with
# the collector on, the collections that the page's allocations trigger walk every object of the pages
# before it, again and again. 150,000 pods in 30 pages: 7.9 s of CPU to decode, 1.4 s paused
# (docs/architecture.md, #41).
PAUSE_BYTES = 1 << 20


class Gone(Exception):
    """410: the resourceVersion is too old (compacted); relist."""


class Fatal(Exception):
    """An error retrying cannot fix (401, 403, a bad request); the message is one sentence."""


class Forbidden(Exception):
    """403 on a kind the source can do without (`KindSpec.optional`): shown as none, not fatal."""


class Throttled(Exception):
    """429 Too Many Requests: wait `seconds`."""

    def __init__(self, seconds: float) -> None:
        super().__init__(f"throttled for {seconds:g}s")
        self.seconds = seconds


@dataclass
class KindSpec:
    """One kind to list and watch, and the client method that does it (bound to its API class)."""

    kind: str  # "Pod"
    plural: str  # "pods", for messages
    call: Callable[..., object]  # e.g. CoreV1Api.list_pod_for_all_namespaces (namespace already bound)
    namespaced_scope: str = ""  # "" = all namespaces / cluster; else the namespace
    # when the API answers 403 (RBAC): this narrower spec is used instead (relisting with it), and
    # `on_fallback()` is called first (the source says what it now shows, see KubeSource)
    fallback: KindSpec | None = None
    on_fallback: Callable[[], None] | None = None
    # an optional kind (Events, Jobs) never fails the source: a 403 lists it as empty and stops
    # watching it, any other failure drops it (KubeSource); `on_unavailable` hears why either way. A
    # ClusterRole from before kubeview showed Jobs must not stop kubeview from starting, and the view
    # goes on without Events
    on_unavailable: Callable[[str], None] | None = None
    optional: bool = False


class Link:
    """The kinds' connection states folded into one `ConnectionState` for the model.

    live: every kind listed and watching; reconnecting: any kind lost its connection (the view is
    stale); failed: a fatal error; connecting: before all kinds are up.
    """

    def __init__(self, kinds: list[str], emit: Callable[[SourceEvent], None]) -> None:
        self._kinds = set(kinds)
        self._emit = emit
        self._up: set[str] = set()
        self._down: dict[str, str] = {}
        self._state: tuple[str, str] | None = None
        self._lock = threading.Lock()

    def up(self, kind: str) -> None:
        with self._lock:
            self._down.pop(kind, None)
            self._up.add(kind)
            self._publish()

    def down(self, kind: str, detail: str) -> None:
        with self._lock:
            self._down[kind] = detail
            self._publish()

    def drop(self, kind: str) -> None:
        """An optional kind that cannot be read: the others' state is the whole state."""
        with self._lock:
            self._kinds.discard(kind)
            self._up.discard(kind)
            self._down.pop(kind, None)
            self._publish()

    def failed(self, detail: str) -> None:
        with self._lock:
            self._set("failed", detail)

    def _publish(self) -> None:
        if self._state is not None and self._state[0] == "failed":
            return
        if self._down:
            self._set("reconnecting", next(iter(self._down.values())))
        elif self._up >= self._kinds:
            self._set("live", "")
        else:
            self._set("connecting", "")

    def _set(self, state: str, detail: str) -> None:
        if self._state != (state, detail):
            self._state = (state, detail)
            self._emit(ConnectionState(state, time.time(), detail))  # type: ignore[arg-type]


@dataclass
class Informer:
    """The list+watch loop of one kind. `run()` blocks until `stop` is set or a `Fatal` is raised."""

    spec: KindSpec
    emit: Callable[[SourceEvent], None]
    stop: threading.Event
    link: Link
    server: str
    settings: WatchSettings = field(default_factory=WatchSettings)
    resource_version: str | None = None  # None: must (re)list
    synced: bool = False
    broken_at: float | None = None  # when its watch broke, until it delivers again: a relist's `Listing.as_of`
    pages_ahead: int = 0  # list pages that were asked for while the one before decoded (page_ahead.py)
    _response: object | None = None  # the open watch, so `interrupt()` can shut it from another thread

    def run(self, *, _iterations: int | None = None) -> None:
        """Loop list/watch. `_iterations` (tests): return after that many watch requests."""
        failures = 0
        watches = 0
        while not self.stop.is_set():
            if _iterations is not None and watches >= _iterations:
                return
            try:
                if self.resource_version is None:
                    self._list()
                watches += 1
                self._watch()
                failures, self.broken_at = 0, None  # the watch ran to its end: all up to now delivered
            except Gone:
                log.info("%s: resourceVersion expired, relisting", self.spec.kind)
                self.resource_version = None
            except Forbidden as exc:
                # the source says it itself when it has an on_unavailable hook (optional kinds): one line, not two
                log.log(logging.INFO if self.spec.on_unavailable is not None else logging.WARNING,
                        "%s: %s; showing none", self.spec.kind, exc)
                if self.spec.on_unavailable is not None:
                    self.spec.on_unavailable(str(exc))
                self.emit(Listed(self.spec.kind, [], ""))
                self.synced = True
                self.link.up(self.spec.kind)
                return
            except Throttled as t:
                self.stop.wait(t.seconds)
            except Fatal:
                raise
            except Exception as exc:  # the network, a 5xx, a garbled stream: back off and retry
                if self.stop.is_set():
                    return
                detail = self._describe(exc)
                if not self.synced and self.settings.give_up_before_sync and _is_connection_error(exc):
                    raise Fatal(detail) from exc
                failures, self.broken_at = failures + 1, self.broken_at or time.time()
                self.link.down(self.spec.kind, detail)
                log.warning("%s: %s (retry %d)", self.spec.kind, detail, failures)
                self.stop.wait(self.settings.backoff(failures))

    def interrupt(self) -> None:
        """Unblock a read in progress (called from another thread on stop)."""
        resp = self._response
        if resp is None:
            return
        try:
            shutdown = getattr(resp, "shutdown", None)
            (shutdown or resp.close)()  # type: ignore[attr-defined]
        except Exception:  # already closed
            pass

    # -- list ----------------------------------------------------------------------------------
    def _list(self) -> None:
        items: list[dict] = []
        rv = ""
        # before the first request: the kind is not complete until `Listed` (model/freshness.py)
        as_of = self.broken_at or time.time()
        self.emit(Listing(self.spec.kind, 0, as_of))
        data = self._page(None)
        while True:
            peeked = peek_continue(data)
            ahead = Ahead(functools.partial(self._page, peeked)) if peeked else None  # page_ahead.py
            if len(data) >= PAUSE_BYTES:  # a page's dicts are acyclic and live until the list is applied
                with gc_paused(keep=True):  # model/gcpause.py: no collection walks them again
                    page = self._decode_page(data)
            else:
                page = self._decode_page(data)
            read = page.get("items") or ()
            items.extend(read)
            meta = page.get("metadata") or {}
            rv = meta.get("resourceVersion", rv)
            token = meta.get("continue")
            if not token:
                break
            self.emit(Listing(self.spec.kind, len(items), as_of, read))  # the model builds its views now
            if ahead is not None and peeked == token:
                self.pages_ahead += 1
                data = ahead.result()
            else:
                data = self._page(token)
        self.resource_version, self.broken_at = rv, None
        self.emit(Listed(self.spec.kind, items, rv))
        self.synced = True
        self.link.up(self.spec.kind)

    def _page(self, token: str | None) -> bytes:
        kwargs: dict = {"_preload_content": False,
                        "_request_timeout": (self.settings.connect_timeout, self.settings.list_timeout)}
        if self.settings.page_size:
            kwargs["limit"] = self.settings.page_size
        if token:
            kwargs["_continue"] = token
        return self._call(**kwargs).data  # type: ignore[attr-defined]

    # -- watch ---------------------------------------------------------------------------------
    def _watch(self) -> None:
        lo, hi = self.settings.watch_timeout
        timeout = random.randint(lo, hi) if hi > lo else lo
        resp = self._call(watch=True, resource_version=self.resource_version, allow_watch_bookmarks=True,
                          timeout_seconds=timeout, _preload_content=False,
                          _request_timeout=(self.settings.connect_timeout, timeout + self.settings.read_slack))
        self._response = resp  # set before checking stop: `interrupt()` sets stop before reading it
        try:
            if self.stop.is_set():
                return
            self.link.up(self.spec.kind)
            for line in _lines(resp):
                if self.stop.is_set():
                    return
                self._event(self._decode_event(line))
        finally:
            self._response = None
            with contextlib.suppress(Exception):
                resp.release_conn()  # type: ignore[attr-defined]

    def _decode_page(self, data: bytes) -> dict:
        return pod_wire.pod_list(data) if self.spec.kind == "Pod" else json.loads(data)

    def _decode_event(self, line: bytes) -> dict:
        return pod_wire.pod_event(line) if self.spec.kind == "Pod" else json.loads(line)

    def _event(self, event: dict) -> None:
        kind = event.get("type")
        obj = event.get("object") or {}
        if kind == "ERROR":
            code = int(obj.get("code") or 0)
            if code == 410:
                raise Gone(obj.get("message", "expired"))
            if code == 403:
                self._fall_back()
                if self.spec.optional:
                    raise Forbidden(describe_api_error(code, json.dumps(obj), f"Watching {self.spec.plural}"))
            if code in (401, 403):
                raise Fatal(describe_api_error(code, json.dumps(obj), f"Watching {self.spec.plural}"))
            raise RuntimeError(f"watch error {code}: {obj.get('message', '')}")
        self.broken_at = None  # a watch delivers again: current
        rv = (obj.get("metadata") or {}).get("resourceVersion")
        if rv:
            self.resource_version = rv
        if kind == "BOOKMARK":
            return
        if kind in ("ADDED", "MODIFIED", "DELETED"):
            self.emit(WatchEvent(self.spec.kind, kind, obj))
        else:
            log.warning("%s: unknown watch event type %r skipped", self.spec.kind, kind)

    # -- plumbing ------------------------------------------------------------------------------
    def _call(self, **kwargs: object) -> object:
        try:
            return self.spec.call(**kwargs)
        except ApiException as exc:
            self._raise_for(exc)
            raise

    def _raise_for(self, exc: ApiException) -> None:
        status = int(exc.status or 0)
        if status == 410:
            raise Gone(str(exc.reason)) from None
        if status == 429:
            wait = retry_after(exc.headers)
            raise Throttled(min(self.settings.retry_after_max, 1.0 if wait is None else wait)) from None
        scope = f" in namespace {self.spec.namespaced_scope}" if self.spec.namespaced_scope else ""
        action = f"Listing {self.spec.plural}{scope}"
        if status == 403:
            self._fall_back()
            if self.spec.optional:
                raise Forbidden(describe_api_error(status, exc.body, action)) from None
        if status in (401, 403):
            sentence = describe_api_error(status, exc.body, action)
            if status == 403 and not self.spec.namespaced_scope and self.spec.kind != "Node":
                sentence = sentence[:-1] + " or pass -n NAMESPACE."
            raise Fatal(sentence) from None
        if status == 0:  # the client's wrapper for TLS failures
            raise ConnectionError(exc.reason) from None
        if 400 <= status < 500:
            raise Fatal(describe_api_error(status, exc.body, action)) from None

    def _fall_back(self) -> None:
        """On a 403, switch to the spec's narrower fallback, if it has one, and relist (`Gone`)."""
        narrower = self.spec.fallback
        if narrower is None:
            return
        log.info("%s: %s forbidden, falling back to namespace %s", self.spec.kind, self.spec.plural,
                 narrower.namespaced_scope)
        if self.spec.on_fallback is not None:
            self.spec.on_fallback()
        self.spec = narrower
        self.resource_version = None
        raise Gone("forbidden cluster-wide; relisting in the namespace")

    def _describe(self, exc: BaseException) -> str:
        if isinstance(exc, ApiException):
            return describe_api_error(int(exc.status or 0), exc.body, f"Watching {self.spec.plural}")
        if _is_connection_error(exc):
            return describe_connection_error(exc, self.server)
        return f"Watching {self.spec.plural} failed: {exc}."


def _is_connection_error(exc: BaseException) -> bool:
    return isinstance(exc, urllib3.exceptions.HTTPError | ConnectionError | OSError)


def _lines(resp: object) -> Iterator[bytes]:
    """Complete lines of a chunked watch stream, as they arrive."""
    pending = b""
    for chunk in resp.stream(amt=None, decode_content=False):  # type: ignore[attr-defined]
        pending += chunk
        if b"\n" not in pending:
            continue
        *complete, pending = pending.split(b"\n")
        for line in complete:
            if line.strip():
                yield line
    if pending.strip():
        yield pending
