"""The extender's logic without sockets: filter and prioritize calls, the live config, assumed pods.

`Extender.filter(body)` / `.prioritize(body)` / `.bind(body)` take a request body and return the reply body. Allocation
comes from a `ModelFeed` (the cluster model a kube source keeps up to date, or any model handed in):
with `nodeCacheCapable: true` the request names nodes of that model; with `false` it carries full
Node objects, and only the pods' usage comes from the model. The HTTP server (`server.py`) and tests
drive this class; the local cluster can too.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable

import numpy as np

from kubeview.model.allocation import Allocation
from kubeview.scheduling.allocations import UsageOverlay
from kubeview.scheduling.assumed import AssumedPods
from kubeview.scheduling.binding import BindError, binding_reply, decode_binding
from kubeview.scheduling.caller_bounds import CallerBounds
from kubeview.scheduling.config import POLICIES, PackingConfig
from kubeview.scheduling.evaluate import evaluate, resource_reason
from kubeview.scheduling.evaluated import Evaluated, decide, placement_rows
from kubeview.scheduling.feed import ClusterView, ModelFeed, rv_number
from kubeview.scheduling.lookup_budget import LookupLimits
from kubeview.scheduling.metrics import ExtenderMetrics
from kubeview.scheduling.node_cache import DEFAULT_MAX_BYTES, NodeCache
from kubeview.scheduling.node_index import NodeIndex, index_for
from kubeview.scheduling.protocol import (
    decode_args,
    filter_reply,
    prioritize_reply,
)
from kubeview.scheduling.wait_slots import WaitLimits
from kubeview.scheduling.wire_types import Body

log = logging.getLogger("kubeview.extender")
REUSE_SECONDS = 1.0  # how long a filter's evaluation may answer the prioritize call that follows


VERIFY_NODES = 4  # refused nodes a filter call checks against the API server (see _stale_refusals)


class Extender:
    def __init__(self, feed: ModelFeed, config: PackingConfig | None = None, assumed_ttl: float = 30.0,
                 clock: Callable[[], float] = time.monotonic,
                 binder: Callable[[str, str, str, str], None] | None = None, catch_up: float = 0.25,
                 node_cache_bytes: int = DEFAULT_MAX_BYTES,
                 pods_on: Callable[[str], set[str] | None] | None = None,
                 scheduler_ignores: Iterable[str] = (),
                 pod_of: Callable[[str, str], tuple[str, bool] | None] | None = None,
                 lookups: LookupLimits | None = None, waits: WaitLimits | None = None) -> None:
        self.feed = feed
        # The filter verb refuses a node only on what kube-scheduler does not check itself: the
        # resources its configuration lists with `ignoredByScheduler: true`. Everything else its own
        # filters (NodeResourcesFit over its cache: assumed pods, a gang's members placed earlier in
        # the cycle, deletions) have already passed, from a view at least as fresh as our watch.
        self.scheduler_ignores = tuple(sorted(set(scheduler_ignores)))
        self._refusable = frozenset(resource_reason(r) for r in self.scheduler_ignores)
        self._config = config or PackingConfig()
        self._config_lock = threading.Lock()
        self.assumed = AssumedPods(ttl=assumed_ttl, clock=clock)
        feed.follow_pods(self.assumed)
        self.binder = binder  # (namespace, name, uid, node) -> None, raises BindError; None: no bind verb
        self.catch_up = catch_up  # seconds to wait for the watch to reach a request's pod version
        self._never_shown: set[str] = set()  # nodes waited for once that the watch did not show
        # node -> uids of the pods the API server has on it now (None: could not ask); lets filter
        # check a refusal against the API before sending it (see _stale_refusals)
        self.pods_on = pods_on
        # (namespace, name) -> (uid, pending) as the API server has the pod now, None when it has none
        # (or cannot say); asked only for a pod our watch has not shown yet (see _predict)
        self.pod_of = pod_of
        self.metrics = ExtenderMetrics()
        self.metrics.set_policy(self._config.policy, POLICIES)
        # what any caller can make us do: API requests (lookup_budget.py), waits (wait_slots.py)
        self.bounds = CallerBounds(self.count, self.metrics, lookups, waits, clock)
        self.changes: deque[dict] = deque(maxlen=50)
        self.counters = {"filter": 0, "prioritize": 0, "filtered_out": 0, "unknown_nodes": 0, "assumed": 0,
                         "errors": 0, "bad_requests": 0, "config_changes": 0, "config_refused": 0,
                         "bind": 0, "bind_failed": 0, "waited_for_watch": 0, "waited_for_nodes": 0,
                         "asked_api_for_pod": 0, "unknown_pod": 0,
                         "api_lookups_refused": 0, "api_lookups_remembered": 0, "waits_refused": 0,
                         "node_names_not_waited": 0, "stale_refusals": 0, "refreshed_for_freed": 0,
                         # connections (server.py): closed by a deadline, at the cap, or by the client
                         "header_timeout": 0, "body_timeout": 0, "idle_timeout": 0, "write_timeout": 0,
                         "evicted_at_cap": 0, "refused_at_cap": 0, "client_gone": 0, "bad_framing": 0}
        self._counter_lock = threading.Lock()
        self._listeners: list[Callable[[PackingConfig], None]] = []
        self._last: tuple[tuple, Evaluated, float] | None = None
        self._prioritize_expected = False
        self.node_cache = NodeCache(node_cache_bytes)  # full Nodes by their bytes (nodeCacheCapable: false)
        self._overlay = UsageOverlay()
        self._full_index: tuple[list, NodeIndex] | None = None

    # -- config ----------------------------------------------------------------------------------
    @property
    def config(self) -> PackingConfig:
        return self._config

    def on_config(self, listener: Callable[[PackingConfig], None]) -> None:
        """Call `listener(new_config)` after every accepted change (the local scheduler, the TUI)."""
        self._listeners.append(listener)

    def set_config(self, patch: object, source: str = "api") -> PackingConfig:
        """Apply a (partial) config document; raises ValueError with the reason, keeping the old one."""
        with self._config_lock:
            old = self._config
            try:
                new = old.merged(patch)
            except ValueError as exc:
                self.count("config_refused")
                log.warning("packing config change from %s refused: %s", source, exc)
                raise
            self._config = new
            before, after = old.to_dict(), new.to_dict()
            self.changes.append({"at": time.time(), "by": source, "from": before, "to": after})
        self.count("config_changes")
        self.metrics.config_changes.inc()
        self.metrics.set_policy(new.policy, POLICIES)
        diff = {k: v for k, v in after.items() if before.get(k) != v}
        log.info("packing config changed by %s: %s", source, diff or "no difference")
        for listener in list(self._listeners):
            listener(new)
        return new

    # -- verbs -----------------------------------------------------------------------------------
    def count(self, name: str, n: int = 1) -> None:
        with self._counter_lock:
            self.counters[name] += n

    def _evaluate(self, body: Body, bound_only: bool, may_wait: bool = True) -> Evaluated:
        """Evaluate the request's pod on its nodes over the model view plus the assumed pods: only
        the ones we bound (`bound_only`, for filter) or our predictions too (for prioritize).
        MustWait when the watch lags behind the request's pod and `may_wait` is false."""
        view = self.feed.view()
        if view.version < self.feed.freed_version:
            self.count("refreshed_for_freed")
            view = self.feed.refresh()  # room freed since it was published (feed.py's docstring)
        self.assumed.prune(view.version)
        config = self._config
        # kube-scheduler calls prioritize right after filter with the same body: answer it from the
        # filter's evaluation, unless the config or what is assumed changed, or it is older than
        # REUSE_SECONDS. A newer model view alone does not count: what it adds that matters (a
        # binding) changes what is assumed.
        key = (body, config, self.assumed.version, self.feed.freed_version, bound_only or not self.assumed.predicting)
        last = self._last
        now = time.monotonic()
        if last is not None and last[0] == key and now - last[2] < REUSE_SECONDS:
            return last[1]
        index = index_for(view.alloc)
        args = decode_args(body, self.node_cache)
        pod_rv = rv_number((args.pod.get("metadata") or {}).get("resourceVersion"))
        if pod_rv is not None and self.catch_up > 0 and self.feed.pod_rv < pod_rv:
            fresh = self._catch_up_version(pod_rv, may_wait)
            if fresh is not None:
                view, index = fresh, index_for(fresh.alloc)
        if args.node_names is not None:
            alloc = view.alloc
            rows = placement_rows(index.row, args.node_names)
            if self.catch_up > 0 and rows.size and rows.min() < 0:
                fresh = self._catch_up_nodes(args.node_names, rows, may_wait)
                if fresh is not None:
                    view, index = fresh, index_for(fresh.alloc)
                    alloc, rows = view.alloc, placement_rows(index.row, args.node_names)
        else:
            assert args.items is not None  # decode_args gives node names or node items
            alloc = self._overlay(args.items.views, view.alloc)
            index = self._index_of(alloc)
            rows = np.arange(len(alloc.nodes), dtype=np.intp)
        assumed = self.assumed.load(alloc, index.row, view.version, exclude_uid=args.uid, bound_only=bound_only)
        placement = evaluate(alloc, args.pod_view, config, assumed, index=index)
        unknown = int((rows < 0).sum()) if rows.size and rows.min() < 0 else 0
        result = Evaluated(args=args, placement=placement, index=index, rows=rows, all_known=not unknown)
        self._last = (key, result, now)
        if unknown:
            self.count("unknown_nodes", unknown)
            self.metrics.unknown_nodes.inc(unknown)
        return result

    def _catch_up_version(self, pod_rv: int, may_wait: bool) -> ClusterView | None:
        """kube-scheduler's informer has seen this pod at a version our watch has not reached yet: what
        our model lacks (deletions, bindings before it) kube-scheduler already counts. Wait for the
        watch (briefly, well inside kube-scheduler's httpTimeout) and return a fresh view; None when
        every wait slot is held (a made-up version far ahead costs anyone a full wait: wait_slots.py)."""
        if not self.bounds.slot(self.bounds.version_waits, may_wait):
            return None
        try:
            self.count("waited_for_watch")
            self.feed.wait_for_rv(pod_rv, self.catch_up)
        finally:
            self.bounds.version_waits.release()
        view = self.feed.refresh()
        self.assumed.prune(view.version)
        return view

    def _catch_up_nodes(self, names: list[str], rows: np.ndarray, may_wait: bool) -> ClusterView | None:
        """kube-scheduler names nodes our watch has not shown yet (a node just added): wait for them
        briefly, as for a pod's version, and return a fresh view (None: nothing new to wait for).
        Scored blind, a new node gets 0 and every pod goes to the nodes we know: under spread, two
        pods on one node while an empty one waits. A name waited for once and never shown is not
        waited for again (`_never_shown`, bounded), so a node only kube-scheduler sees costs one wait.
        Made-up names cost anyone a wait: one call waits for at most `waits.node_names` of them, and
        only `waits.nodes_in_flight` calls wait at once; the others are scored on the view they have."""
        missing = [names[k] for k in np.flatnonzero(rows < 0).tolist() if names[k] not in self._never_shown]
        if not missing:
            return None
        if not self.bounds.slot(self.bounds.node_waits, may_wait):
            return None
        try:
            most = self.bounds.waits.node_names
            if len(missing) > most:
                self.count("node_names_not_waited", len(missing) - most)
                missing = missing[:most]
            self.count("waited_for_nodes")
            never = self.feed.wait_for_nodes(missing, self.catch_up)
        finally:
            self.bounds.node_waits.release()
        view = self.feed.refresh()
        if never and view.synced:  # (before the first node list every name is missing: wait again)
            if len(self._never_shown) > 4096:
                self._never_shown.clear()
            self._never_shown.update(never)
        self.assumed.prune(view.version)
        return view

    def _index_of(self, alloc: Allocation) -> NodeIndex:
        """The index of the nodes a request sent in full, kept while the overlay keeps its node set
        (not in `index_for`'s shared cache, where request node sets would push out the model's)."""
        last = self._full_index
        if last is None or last[0] is not alloc.views:
            last = self._full_index = (alloc.views, NodeIndex.build(alloc.nodes, alloc.views))
        return last[1]

    def _predict(self, ev: Evaluated, row: int, may_wait: bool) -> None:
        """Remember where kube-scheduler will put this pod (see assumed.py: scores only). Only for a
        pod the cluster has: our watch shows it, or, when the watch lags (a loaded API server, past
        `catch_up`), the API server says so (`pod_of`); a made-up pod changes nothing another pod
        sees. MustWait when that question is due and `may_wait` is false (not on the server's loop).
        Without it, two pods of a ReplicaSet created together under spread both went to the node
        first by name: neither was predicted, and the first's Binding came after the second's call."""
        meta = ev.args.pod.get("metadata") or {}
        namespace, name = meta.get("namespace", ""), meta.get("name", "")
        live = self.feed.pod(namespace, name)
        if live is None and self.pod_of is not None:
            known = self.bounds.pending_at_api(self.pod_of, namespace, name, ev.args.uid, may_wait)
        else:
            known = live is not None and live.uid == ev.args.uid and live.pending
        if not known:
            # a pod the cluster does not have (made up), or one no longer pending: an unauthenticated
            # caller cannot fill the ledger with made-up uids (issue #16 item 6)
            self.count("unknown_pod")
            return
        self.assumed.predict(ev.args.uid, namespace, name, ev.placement.nodes[row], ev.args.pod_view.requests,
                             meta.get("resourceVersion"))
        self.count("assumed")

    def _stale_refusals(self, ev: Evaluated, may_wait: bool) -> dict[str, set[str]]:
        """Nodes this filter would refuse on resources whose counted pods include some the API server
        no longer has: node -> those pods' uids. Up to VERIFY_NODES refused nodes are checked (one pod
        list by spec.nodeName each), those the pod would fit best on first. A refusal is only as fresh
        as the watch, and kube-scheduler, whose informer may be ahead, does not ask again for a pod
        it was refused until some later event: a refusal based on a pod already gone could strand it.
        Each list takes a token of the lookup budget (anyone can send such a filter); without one the
        watch is trusted. MustWait when `may_wait` is false (the API calls must not run on the loop)."""
        pods_on = self.pods_on
        positions = np.flatnonzero(ev.refused(self._refusable))
        if pods_on is None or not positions.size:
            return {}
        best_first = positions[np.argsort(-ev.placement.fit_scores[ev.rows[positions]], kind="stable")]
        stale: dict[str, set[str]] = {}
        for name in ev.args.names_at(best_first[:VERIFY_NODES]):
            counted = self.feed.pod_uids_on(name)
            if not counted:
                continue
            if not self.bounds.lookup(may_wait):
                break
            live = pods_on(name)
            if live is not None and counted - live:
                stale[name] = counted - live
        return stale

    def filter(self, body: Body, may_wait: bool = True) -> bytes:
        ev = self._evaluate(body, bound_only=True, may_wait=may_wait)
        if self.pods_on is not None and self.catch_up > 0 and self._refusable:
            stale = self._stale_refusals(ev, may_wait)
            if stale:
                # the API server no longer has pods our watch still counts there (kube-scheduler,
                # whose informer is ahead, retried this pod because they went): wait for the watch
                # to show them gone, then decide again on a fresh view
                self.count("stale_refusals", len(stale))
                for node, uids in stale.items():
                    self.feed.wait_gone(node, uids, self.catch_up)
                self.feed.refresh()
                self._last = None
                ev = self._evaluate(body, bound_only=True, may_wait=may_wait)
        passed = ~ev.refused(self._refusable)
        failing = np.flatnonzero(~passed)
        if failing.size == len(passed) - 1:  # one node left: kube-scheduler takes it without prioritize
            ok = np.flatnonzero(passed & ev.known)
            if ok.size == 1:
                self._predict(ev, int(ev.rows[ok[0]]), may_wait)  # first: MustWait before anything counts
        self.count("filter")
        failed: dict[str, str] = {}
        if failing.size:
            texts = ev.placement.reason_texts(ev.rows[failing])
            failed = dict(zip(ev.args.names_at(failing), texts, strict=True))
            self.count("filtered_out", int(failing.size))
            self.metrics.nodes_failed.inc(int(failing.size))
        self._prioritize_expected = len(passed) - failing.size > 1
        self.metrics.assumed.set(len(self.assumed))
        return filter_reply(ev.args, passed, failed, {})

    def prioritize(self, body: Body, may_wait: bool = True) -> bytes:
        ev = self._evaluate(body, bound_only=False, may_wait=may_wait)
        scores = ev.fit_scores()
        known = np.flatnonzero(ev.known)
        rank = np.zeros(len(scores), dtype=np.int64)
        rank[known] = ev.index.name_rank[ev.rows[known]]
        pick = decide(scores, known, rank)
        if pick is not None:
            self._predict(ev, int(ev.rows[pick]), may_wait)  # first: MustWait before anything counts
        self.count("prioritize")
        self.metrics.assumed.set(len(self.assumed))
        return prioritize_reply(ev.args, scores, ev.index, ev.rows)

    def bind(self, body: Body) -> bytes:
        """Post the pod's Binding (kube-scheduler's `bind` verb); from then on the pod counts on its
        node for certain until the model shows it there, or it is gone."""
        args = decode_binding(body)
        self.count("bind")
        if self.binder is None:
            self.count("bind_failed")
            return binding_reply("this extender does not bind pods (it has no API access): remove bindVerb "
                                 "from the scheduler's extender configuration")
        live = self.feed.pod(args.namespace, args.name)
        requests = live.requests if live is not None and live.uid == args.uid else self.assumed.requests_of(args.uid)
        # assumed before the Binding is posted, as kube-scheduler assumes before it binds: the watch can
        # show the binding before the binder returns, and that event must find the entry to confirm it
        # (recorded afterwards, the entry was counted beside the model for a whole ttl)
        self.assumed.bind(args.uid, args.namespace, args.name, args.node, requests or {})
        try:
            self.binder(args.namespace, args.name, args.uid, args.node)
        except BindError as exc:
            self.count("bind_failed")
            self.assumed.forget(args.uid)
            log.info("bind: %s", exc)
            return binding_reply(str(exc))
        finally:
            self.metrics.assumed.set(len(self.assumed))
        return binding_reply()

    def after_reply(self, verb: str) -> None:
        """Housekeeping once a reply is out: republish the model view if due, unless a prioritize call
        for the same pod is about to follow (kube-scheduler sends it right after a filter that left
        more than one node; after prioritize it is busy binding)."""
        if verb == "filter" and self._prioritize_expected:
            return
        self.feed.refresh_if_due()

    # -- status ----------------------------------------------------------------------------------
    def status(self) -> dict:
        view = self.feed.view()
        self.assumed.prune(view.version)
        alloc: Allocation = view.alloc
        connection = self.feed.connection
        with self._counter_lock:
            counters = dict(self.counters)
        return {
            "config": self._config.to_dict(),
            "scheduler_ignores": list(self.scheduler_ignores),  # the resources the filter verb checks
            "counters": counters,
            "latency": self.metrics.latency(),
            "assumed": self.assumed.snapshot(),
            "assumed_expired": self.assumed.expired,
            "assumed_confirmed": self.assumed.confirmed,
            "assumed_gone": self.assumed.gone,
            "changes": list(self.changes),
            "cluster": {"nodes": len(alloc.nodes), "version": view.version, "synced": view.synced,
                        "connection": connection.state, "detail": connection.detail,
                        "pod_resource_version": self.feed.pod_rv},  # the newest pod event the watch applied
        }
