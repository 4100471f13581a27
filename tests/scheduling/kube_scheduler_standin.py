"""A kube-scheduler stand-in for tests: kube-scheduler v1.36's side of the extender conversation.

The real kube-scheduler cannot run on these machines, so this plays its part as faithfully as the tests
need, following the recordings in tests/fixtures/k8s/extender-live/ and upstream's code
(pkg/scheduler/schedule_one.go, framework/plugins/noderesources, extender.go):

- **Informer**: it sees every change of the LiveCluster at once (its own cache), while kubeview's
  extender watches the test API server, where the LiveCluster can hold events back (`delay`).
- **Queue**: unbound pods of `default-scheduler` in arrival order; a pod that fails goes to the
  unschedulable set with `PodScheduled=False` written to the API, and back to the queue when a pod
  is deleted (the event that frees room), as NodeResourcesFit's queueing hint does.
- **Filter**: NodeResourcesFit on every requested resource (cpu, memory, pods, extended resources,
  `ignoredByScheduler: false`) against its cache, which includes the pods it has assumed but not
  yet bound. Then, for pods the extender is interested in (`managedResources`), the extender's
  `filterVerb` with the nodes that passed, if configured.
- **Score**, only with more than one feasible node: NodeResourcesFit's LeastAllocated (cpu and
  memory, weight 1, non-zero requests), NodeResourcesBalancedAllocation (cpu and memory, weight 1,
  skipped for best-effort pods), TaintToleration (weight 3, 100 everywhere: no PreferNoSchedule
  taints here); the other default plugins score 0 for these pods. The extender's `prioritizeVerb`
  score times `weight` times 10 (MaxNodeScore / MaxExtenderPriority) is added. The highest total
  wins; ties are broken at random (a seeded `random.Random`).
- **Bind**, asynchronously after a random pause (the binding cycle runs beside the next pod's
  scheduling cycle): the extender's `bindVerb` for pods it is interested in, else a Binding through
  the API. A failed bind forgets the assumed pod and queues the pod again if it still exists.
- **Wire**: keep-alive HTTP/1.1, Go's field names, `Content-Type: application/json`,
  `User-Agent: Go-http-client/1.1`; with `nodeCacheCapable: false` full Node objects go in `Nodes`.
  `ignorable: true`: a failing extender is skipped.
"""

from __future__ import annotations

import contextlib
import copy
import http.client
import json
import random
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from kubeapi.live import Conflict, Event, LiveCluster

from kubeview.model.quantity import to_units

MAX_NODE_SCORE = 100
MAX_EXTENDER_PRIORITY = 10
DEFAULT_MILLI_CPU = 100  # schedutil.DefaultMilliCPURequest: for scoring pods without a cpu request
DEFAULT_MEMORY = 200 * 1024 * 1024  # schedutil.DefaultMemoryRequest


@dataclass
class ExtenderConfig:
    url: str
    filter_verb: str = ""
    prioritize_verb: str = ""
    bind_verb: str = ""
    weight: int = 1
    node_cache_capable: bool = False
    ignorable: bool = False
    managed: tuple[str, ...] = ()

    @classmethod
    def from_scheduler_config(cls, doc: dict, url: str) -> ExtenderConfig:
        (ext,) = doc["extenders"]
        return cls(url=url, filter_verb=ext.get("filterVerb", ""), prioritize_verb=ext.get("prioritizeVerb", ""),
                   bind_verb=ext.get("bindVerb", ""), weight=int(ext.get("weight", 1)),
                   node_cache_capable=bool(ext.get("nodeCacheCapable", False)),
                   ignorable=bool(ext.get("ignorable", False)),
                   managed=tuple(m["name"] for m in ext.get("managedResources") or ()))


def pod_requests(pod: dict) -> dict[str, int]:
    """Sum of the app containers' requests (cpu in millicores), what NodeResourcesFit compares."""
    out: dict[str, int] = {"pods": 1}
    for c in pod["spec"].get("containers") or ():
        for name, q in ((c.get("resources") or {}).get("requests") or {}).items():
            out[name] = out.get(name, 0) + to_units(name, q)
    return out


def _nonzero(requests: dict[str, int]) -> tuple[int, int]:
    return requests.get("cpu") or DEFAULT_MILLI_CPU, requests.get("memory") or DEFAULT_MEMORY


def _allocatable(node: dict) -> dict[str, int]:
    return {name: to_units(name, q) for name, q in node["status"]["allocatable"].items()}


@dataclass
class NodeState:
    allocatable: dict[str, int]
    requested: dict[str, int] = field(default_factory=dict)
    nonzero: list[int] = field(default_factory=lambda: [0, 0])  # cpu millis, memory bytes (scoring)
    pods: dict[str, dict[str, int]] = field(default_factory=dict)  # uid -> requests

    def add(self, uid: str, req: dict[str, int], sign: int = 1) -> None:
        for name, value in req.items():
            self.requested[name] = self.requested.get(name, 0) + sign * value
        cpu, mem = _nonzero(req)
        self.nonzero[0] += sign * cpu
        self.nonzero[1] += sign * mem
        if sign > 0:
            self.pods[uid] = req
        else:
            self.pods.pop(uid, None)


def least_allocated(node: NodeState, req: dict[str, int]) -> int:
    cpu, mem = _nonzero(req)
    total = 0
    for used, cap in ((node.nonzero[0] + cpu, node.allocatable.get("cpu", 0)),
                      (node.nonzero[1] + mem, node.allocatable.get("memory", 0))):
        total += 0 if cap == 0 or used > cap else (cap - used) * MAX_NODE_SCORE // cap
    return total // 2


def balanced_allocation(node: NodeState, req: dict[str, int]) -> int:
    if not req.get("cpu") and not req.get("memory"):
        return 0  # best-effort pods are skipped
    fractions = []
    for name in ("cpu", "memory"):
        cap = node.allocatable.get(name, 0)
        if cap:
            fractions.append(min(1.0, (node.requested.get(name, 0) + req.get(name, 0)) / cap))
    std = abs(fractions[0] - fractions[1]) / 2 if len(fractions) == 2 else 0.0
    return int((1 - std) * MAX_NODE_SCORE)


class StandInScheduler:
    def __init__(self, cluster: LiveCluster, extender: ExtenderConfig | None, seed: int,
                 bind_pause: tuple[float, float] = (0.0, 0.003)) -> None:
        self.cluster = cluster
        self.extender = extender
        self.rng = random.Random(seed)
        self.bind_pause = bind_pause
        self.nodes: dict[str, NodeState] = {}
        self.bound: dict[str, str] = {}  # uid -> node (bound or assumed)
        self.queue: deque[tuple[str, str]] = deque()
        self.unschedulable: set[tuple[str, str]] = set()
        self.log: list[dict] = []  # every extender call: verb, pod, nodes, reply
        self.errors: list[str] = []
        self._lock = threading.Condition()
        self._stop = False
        self._local = threading.local()
        self._binding = 0  # binding cycles in flight
        self._moves = 0  # pod deletions seen: a cycle that fails while one arrives is retried at once
        for name, node in cluster.nodes.items():
            self.nodes[name] = NodeState(_allocatable(node))
        self._thread = threading.Thread(target=self._loop, name="standin-scheduler", daemon=True)
        cluster.listeners.append(self._on_event)

    # -- lifecycle -------------------------------------------------------------------------------
    def start(self) -> StandInScheduler:
        self._thread.start()
        return self

    def stop(self) -> None:
        with self._lock:
            self._stop = True
            self._lock.notify_all()
        self._thread.join(timeout=5)

    def idle(self) -> bool:
        with self._lock:
            return not self.queue and not self._binding

    # -- informer --------------------------------------------------------------------------------
    def _on_event(self, event: Event) -> None:
        if event.kind != "Pod":
            return
        obj = event.obj
        meta = obj["metadata"]
        key, uid = (meta["namespace"], meta["name"]), meta["uid"]
        with self._lock:
            if event.type == "DELETED":
                node = self.bound.pop(uid, None)
                if node is not None:
                    self.nodes[node].add(uid, self.nodes[node].pods.get(uid, {}), -1)
                self.unschedulable.discard(key)
                with contextlib.suppress(ValueError):
                    self.queue.remove(key)
                # a deletion frees room: every unschedulable pod is tried again
                self.queue.extend(sorted(self.unschedulable))
                self.unschedulable.clear()
                self._moves += 1
            elif obj["spec"].get("nodeName"):
                node = obj["spec"]["nodeName"]
                if self.bound.get(uid) != node:
                    old = self.bound.pop(uid, None)
                    if old is not None:
                        self.nodes[old].add(uid, self.nodes[old].pods.get(uid, {}), -1)
                    self.bound[uid] = node
                    self.nodes[node].add(uid, pod_requests(obj))
            elif event.type == "ADDED" and obj["spec"].get("schedulerName", "default-scheduler") == "default-scheduler":
                self.queue.append(key)
            self._lock.notify_all()

    # -- scheduling cycle ------------------------------------------------------------------------
    def _loop(self) -> None:
        while True:
            with self._lock:
                while not self.queue and not self._stop:
                    self._lock.wait(0.05)
                if self._stop:
                    return
                key = self.queue.popleft()
            pod = self.cluster.pod(*key)
            if pod is None or pod["spec"].get("nodeName"):
                continue
            try:
                self._schedule(pod)
            except Exception as exc:  # a stand-in bug must fail the test, not hang it
                self.errors.append(f"{key}: {type(exc).__name__}: {exc}")

    def _interested(self, pod: dict) -> bool:
        if self.extender is None:
            return False
        for c in pod["spec"].get("containers") or ():
            res = c.get("resources") or {}
            if any(name in self.extender.managed for part in ("requests", "limits") for name in res.get(part) or {}):
                return True
        return False

    def _schedule(self, pod: dict) -> None:
        meta = pod["metadata"]
        key, uid = (meta["namespace"], meta["name"]), meta["uid"]
        req = pod_requests(pod)
        with self._lock:
            moves = self._moves
            feasible = [n for n, st in sorted(self.nodes.items())
                        if all(st.requested.get(r, 0) + v <= st.allocatable.get(r, 0) for r, v in req.items() if v)]
            states = {n: copy.deepcopy(self.nodes[n]) for n in feasible}
        interested = self._interested(pod)
        wire_pod = {k: v for k, v in pod.items() if k not in ("kind", "apiVersion")}
        wire_pod["metadata"] = {k: v for k, v in meta.items() if k != "managedFields"}
        if feasible and interested and self.extender.filter_verb:
            reply = self._call(self.extender.filter_verb, self._args(wire_pod, feasible))
            if reply is not None:
                failed = set(reply.get("FailedNodes") or {}) | set(reply.get("FailedAndUnresolvableNodes") or {})
                feasible = [n for n in feasible if n not in failed]
        if not feasible:
            self.cluster.set_unschedulable(*key, f"0/{len(self.nodes)} nodes are available")
            with self._lock:  # an event during the cycle may have made room: then try again at once
                (self.queue.append if self._moves != moves else self.unschedulable.add)(key)
                self._lock.notify_all()
            return
        if len(feasible) == 1:
            host = feasible[0]
        else:
            totals = {n: least_allocated(states[n], req) + balanced_allocation(states[n], req) + 3 * MAX_NODE_SCORE
                      for n in feasible}
            if interested and self.extender.prioritize_verb:
                reply = self._call(self.extender.prioritize_verb, self._args(wire_pod, feasible))
                for item in reply or ():
                    if item["Host"] in totals:
                        totals[item["Host"]] += item["Score"] * self.extender.weight * (
                            MAX_NODE_SCORE // MAX_EXTENDER_PRIORITY)
            host = self._select(totals)
        with self._lock:  # assume: the next cycle sees the pod on its node
            self.bound[uid] = host
            self.nodes[host].add(uid, req)
            self._binding += 1
        threading.Thread(target=self._bind, args=(wire_pod, key, uid, host, req, interested), daemon=True).start()

    def _select(self, totals: dict[str, int]) -> str:
        """selectHost: the highest total, ties broken at random (reservoir sampling, as upstream)."""
        best, count, chosen = None, 0, ""
        for name, score in totals.items():
            if best is None or score > best:
                best, count, chosen = score, 1, name
            elif score == best:
                count += 1
                if self.rng.randrange(count) == 0:
                    chosen = name
        return chosen

    def _bind(self, pod: dict, key: tuple[str, str], uid: str, host: str, req: dict, interested: bool) -> None:
        try:
            time.sleep(self.rng.uniform(*self.bind_pause))
            error = None
            reply = None
            if interested and self.extender.bind_verb:
                reply = self._call(self.extender.bind_verb, {"PodName": key[1], "PodNamespace": key[0],
                                                             "PodUID": uid, "Node": host})
                if reply is not None and reply.get("Error"):
                    error = reply["Error"]
            if reply is None:  # not the extender's, or it failed and is ignorable: the default binder
                try:
                    self.cluster.bind(key[0], key[1], host, uid)
                except Conflict as exc:
                    error = exc.message
            if error is not None:
                with self._lock:  # unreserve, forget, retry if the pod is still there
                    if self.bound.get(uid) == host:
                        self.bound.pop(uid)
                        self.nodes[host].add(uid, req, -1)
                    if self.cluster.pod(*key) is not None:
                        self.queue.append(key)
                self.log.append({"verb": "bind-failed", "pod": key[1], "error": error})
        finally:
            with self._lock:
                self._binding -= 1
                self._lock.notify_all()

    # -- the extender's wire ---------------------------------------------------------------------
    def _args(self, pod: dict, names: list[str]) -> dict:
        if self.extender.node_cache_capable:
            return {"Pod": pod, "Nodes": None, "NodeNames": names}
        items = [{k: v for k, v in self.cluster.nodes[n].items() if k not in ("kind", "apiVersion")} for n in names]
        return {"Pod": pod, "Nodes": {"metadata": {}, "items": items}, "NodeNames": None}

    def _conn(self) -> http.client.HTTPConnection:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            parts = urlsplit(self.extender.url)
            conn = self._local.conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=5)
        return conn

    def _call(self, verb: str, args: dict) -> object | None:
        body = json.dumps(args, separators=(",", ":")).encode()
        headers = {"Content-Type": "application/json", "User-Agent": "Go-http-client/1.1",
                   "Accept-Encoding": "gzip"}
        try:
            conn = self._conn()
            conn.request("POST", f"{urlsplit(self.extender.url).path.rstrip('/')}/{verb}", body, headers)
            resp = conn.getresponse()
            data = resp.read()
        except (OSError, http.client.HTTPException) as exc:
            self._local.conn = None
            return self._failed(verb, f"{type(exc).__name__}: {exc}")
        if resp.status != 200:
            return self._failed(verb, f"HTTP {resp.status}: {data[:200]!r}")
        reply = json.loads(data)
        pod = args.get("Pod") or {}
        self.log.append({"verb": verb, "pod": (pod.get("metadata") or {}).get("name", args.get("PodName")),
                         "nodes": args.get("NodeNames"), "reply": reply, "at": time.monotonic()})
        return reply

    def _failed(self, verb: str, why: str) -> None:
        self.log.append({"verb": f"{verb}-error", "error": why})
        if not self.extender.ignorable:
            raise RuntimeError(f"extender {verb} failed and is not ignorable: {why}")
        return None
