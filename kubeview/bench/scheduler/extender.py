"""Drive the extender over loopback HTTP the way kube-scheduler does, and time its calls per pod.

A real `ExtenderServer` runs in a child process on 127.0.0.1 with its cluster model (a separate
process, as kube-scheduler is: in one process the client's JSON work would hold the server's GIL).
The client plays kube-scheduler with the shipped configuration (prioritize only; prioritize + bind
with the opt-in bind verb, or filter + prioritize, for comparison): it keeps one HTTP/1.1 connection
(as Go's client does), sends `prioritize` the nodes its own filters passed (those with a free GPU:
`managedResources` with `ignoredByScheduler: false` means kube-scheduler checks GPU fit itself) in a
different order for every pod (its parallel filter fills the list as workers finish), then binds the
best-scored node: through `bind` when served (the child's binder applies the binding to its model),
else as kube-scheduler's own binder would, the watch showing it. Request bodies are encoded before the clock starts:
what is timed is the round trip, i.e. what the scheduler waits for.

The client is a minimal HTTP/1.1 client over a socket (`_GoLikeClient`), standing in for Go's
net/http: `http.client` spends ~0.1 ms of Python per call building the request and parsing the
response headers, time kube-scheduler's client does not spend and the extender does not cause.
Everything the server does is timed; its own per-verb percentiles are reported beside.
"""

from __future__ import annotations

import gc
import json
import multiprocessing
import random
import socket
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import yaml

from kubeview.bench.machine import StealMeter
from kubeview.model.events import Listed, WatchEvent
from kubeview.scheduling.extender import Extender
from kubeview.scheduling.feed import DEFAULT_MAX_STALENESS, ModelFeed
from kubeview.scheduling.protocol import host_scores
from kubeview.scheduling.server import ExtenderServer

if TYPE_CHECKING:
    from multiprocessing.context import ForkContext, SpawnContext  # POSIX only

GPU = "nvidia.com/gpu"
POD_SPEC = {"containers": [{"name": "train", "image": "nvidia/cuda:12.4.0-base-ubuntu22.04",
                            "resources": {"requests": {"cpu": "1", "memory": "8Gi", GPU: "1"},
                                          "limits": {GPU: "1"}}}],
            "schedulerName": "default-scheduler", "restartPolicy": "Always"}


SHIPPED_VERBS = ("prioritize",)  # manifests/scheduler: prioritizeVerb only (no filterVerb, no bindVerb since #37)


@dataclass(slots=True)
class LatencyResult:
    name: str  # e.g. "Extender/5000NodeNames"
    mode: str  # "NodeNames" or "Nodes"
    nodes: int
    calls: int
    p50_ms: float  # the round trips kube-scheduler waits for, per pod (all verbs)
    p99_ms: float
    verb_p50_ms: dict[str, float]  # client-side p50 per verb
    target_p99_ms: float | None
    verbs: tuple[str, ...] = SHIPPED_VERBS
    server_ms: dict[str, dict] | None = None  # the server's own view per verb (GET /status latency)
    window_p99_ms: list[float] | None = None  # p99 of each consecutive window of WINDOW calls
    steal: float | None = None  # share of CPU time the hypervisor took during the run

    @property
    def judged_p99_ms(self) -> float:
        """The median window's p99: a burst of stolen CPU (other tenants) lands in one window."""
        return float(np.median(self.window_p99_ms)) if self.window_p99_ms else self.p99_ms

    @property
    def cpu_per_pod_ms(self) -> float | None:
        """The extender's own CPU time per pod (p50 of each verb, summed), from its /status."""
        server = self.server_ms or {}
        parts = [server.get(v, {}).get("cpu_p50_ms") for v in self.verbs]
        known = [p for p in parts if p is not None]
        return None if len(known) < len(parts) else round(float(sum(known)), 3)

    def data_item(self) -> dict:
        data = {"Perc50": self.p50_ms, "Perc99": self.p99_ms}
        if self.cpu_per_pod_ms is not None:
            data["CPUPerPod"] = self.cpu_per_pod_ms
        return {"data": data, "unit": "ms",
                "labels": {"Metric": "ExtenderLatency", "Name": self.name, "Verbs": "+".join(self.verbs)}}


class _GoLikeClient:
    """One keep-alive HTTP/1.1 connection; the request goes out in one write, as Go's bufio does."""

    def __init__(self, host: str, port: int, timeout: float = 30.0) -> None:
        self.sock = socket.create_connection((host, port), timeout=timeout)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)  # Go's default too
        self.rfile = self.sock.makefile("rb")
        self.head = (f"Host: {host}:{port}\r\nUser-Agent: Go-http-client/1.1\r\nContent-Type: application/json\r\n"
                     "Accept-Encoding: gzip\r\n")

    def post(self, path: str, body: bytes) -> tuple[int, bytes]:
        self.sock.sendall(f"POST {path} HTTP/1.1\r\n{self.head}Content-Length: {len(body)}\r\n\r\n".encode() + body)
        status = self.rfile.readline(65537).split(b" ", 2)
        if len(status) < 2 or not status[0].startswith(b"HTTP/1."):
            raise RuntimeError(f"not an HTTP response: {b' '.join(status)[:100]!r}")
        length = None
        while (line := self.rfile.readline(65537)) not in (b"\r\n", b"\n", b""):
            name, _, value = line.partition(b":")
            if name.strip().lower() == b"content-length":
                length = int(value)
        if length is None:
            raise RuntimeError("response without Content-Length")
        return int(status[1]), self.rfile.read(length)

    def close(self) -> None:
        self.rfile.close()
        self.sock.close()


def gpu_node(name: str, template: dict | None = None) -> dict:
    """A Node as kube-scheduler sends it: the recorded full object when a template is given."""
    if template is not None:
        obj = json.loads(json.dumps(template))
        obj["metadata"]["name"] = name
        obj["metadata"].setdefault("labels", {})["kubernetes.io/hostname"] = name
        return obj
    amounts = {"cpu": "64", "memory": "512Gi", "pods": "110", GPU: "8"}
    return {"metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}}, "spec": {},
            "status": {"capacity": amounts, "allocatable": amounts,
                       "conditions": [{"type": "Ready", "status": "True"}]}}


WINDOW = 200  # calls per window for `window_p99_ms`


def _pod(i: int) -> dict:
    name = f"bench-{i}"
    return {"metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}", "resourceVersion": "1"},
            "spec": POD_SPEC, "status": {"phase": "Pending", "qosClass": "Burstable"}}


def _serve(pipe, nodes: list[dict]) -> None:
    """Child process: the extender with its model; bound pods arrive on `pipe` like watch events."""
    feed = ModelFeed(max_staleness=DEFAULT_MAX_STALENESS)
    feed.apply(Listed("Node", nodes, "1"))
    feed.apply(Listed("Pod", [], "1"))
    feed.start()
    gc.collect()
    gc.freeze()  # as the command does once the cluster is listed
    lock = threading.Lock()

    def bind(namespace: str, name: str, uid: str, node: str) -> None:
        """The API server's part: the pod is bound and the watch shows it."""
        pod = _pod(int(name.rsplit("-", 1)[1]))
        bound = dict(pod, spec=dict(pod["spec"], nodeName=node), metadata=dict(pod["metadata"], resourceVersion="2"))
        with lock:
            feed.apply(WatchEvent("Pod", "ADDED", bound))

    server = ExtenderServer(Extender(feed, binder=bind), "127.0.0.1", 0).start()
    pipe.send(server.port)
    while True:
        msg = pipe.recv()
        if msg is None:
            break
        if msg == "stats":
            pipe.send(server.extender.metrics.latency())
            continue
        with lock:
            feed.apply(WatchEvent("Pod", "ADDED", msg))
    server.stop()
    feed.stop()


def measure(nodes: list[dict], mode: str, calls: int, name: str, target_p99_ms: float | None = None,
            warmup: int = 20, verbs: tuple[str, ...] = SHIPPED_VERBS) -> LatencyResult:
    """`calls` pods through `verbs` (the shipped prioritize+bind, or filter+prioritize) against an
    extender whose model holds `nodes`."""
    # fork where there is one (nothing but this thread runs here yet); spawn elsewhere
    ctx: ForkContext | SpawnContext
    if "fork" in multiprocessing.get_all_start_methods():
        ctx = multiprocessing.get_context("fork")
    else:
        ctx = multiprocessing.get_context("spawn")
    pipe, child_end = ctx.Pipe()
    child = ctx.Process(target=_serve, args=(child_end, nodes), name="kubeview-bench-extender", daemon=True)
    child.start()
    if not pipe.poll(120):
        child.kill()
        raise RuntimeError("the benchmark's extender process did not start")
    port = pipe.recv()
    conn = _GoLikeClient("127.0.0.1", port)
    names = [n["metadata"]["name"] for n in nodes]
    free = {n["metadata"]["name"]: int(n["status"]["allocatable"].get(GPU, "0")) for n in nodes}
    by_name = {n["metadata"]["name"]: n for n in nodes}
    shuffle = random.Random(0).shuffle
    sent: list[str] = []
    nodes_json = names_json = "null"
    total: list[float] = []
    per_verb: dict[str, list[float]] = {v: [] for v in verbs}

    def post(verb: str, body: bytes) -> bytes:
        t0 = time.perf_counter()
        status, data = conn.post(f"/{verb}", body)
        took[verb] = time.perf_counter() - t0
        if status != 200:
            raise RuntimeError(f"{verb} answered {status}: {data[:200]!r}")
        return data

    try:
        with StealMeter() as steal:
            for i in range(warmup + calls):
                took: dict[str, float] = {}
                pod = _pod(i)
                fits = [n for n in names if free[n] >= 1]  # kube-scheduler's own NodeResourcesFit
                if mode == "NodeNames":
                    shuffle(fits)
                    sent, names_json = fits, json.dumps(fits, separators=(",", ":"))
                elif fits != sent:  # full Nodes: 4 KB each, re-encoded only when the set changes
                    sent = fits
                    nodes_json = json.dumps({"metadata": {}, "items": [by_name[n] for n in sent]}, separators=(",", ":"))
                body = f'{{"Pod":{json.dumps(pod, separators=(",", ":"))},"Nodes":{nodes_json},"NodeNames":{names_json}}}'.encode()
                passed_names = sent
                if "filter" in verbs:
                    # kube-scheduler sends prioritize the nodes that passed; when all did, the same body
                    reply = json.loads(post("filter", body))
                    passed = reply["NodeNames"] if mode == "NodeNames" else reply["Nodes"]["items"]
                    passed_names = passed if mode == "NodeNames" else [n["metadata"]["name"] for n in passed]
                    if len(passed) != len(sent):
                        body = json.dumps({"Pod": pod, "Nodes": None if mode == "NodeNames" else
                                           {"metadata": {}, "items": passed},
                                           "NodeNames": passed if mode == "NodeNames" else None},
                                          separators=(",", ":")).encode()
                scores = host_scores(post("prioritize", body), passed_names)
                if scores:
                    top = max(scores.values())
                    best = min(h for h, s in scores.items() if s == top)
                    free[best] -= 1
                    meta = pod["metadata"]
                    if "bind" in verbs:
                        post("bind", json.dumps({"PodName": meta["name"], "PodNamespace": meta["namespace"],
                                                 "PodUID": meta["uid"], "Node": best}).encode())
                    else:  # kube-scheduler binds; the watch shows it
                        pipe.send(dict(pod, spec=dict(pod["spec"], nodeName=best),
                                       metadata=dict(meta, resourceVersion="2")))
                if i >= warmup:
                    for verb, seconds in took.items():
                        per_verb[verb].append(seconds)
                    total.append(sum(took.values()))
        pipe.send("stats")
        server_ms = pipe.recv()
    finally:
        conn.close()
        pipe.send(None)
        child.join(timeout=30)
        if child.is_alive():
            child.kill()
    ms = np.array(total) * 1e3
    windows = [round(float(np.percentile(ms[i:i + WINDOW], 99)), 3) for i in range(0, len(ms) - WINDOW + 1, WINDOW)]
    return LatencyResult(name=name, mode=mode, nodes=len(nodes), calls=calls,
                         p50_ms=round(float(np.percentile(ms, 50)), 3), p99_ms=round(float(np.percentile(ms, 99)), 3),
                         verb_p50_ms={v: round(float(np.percentile(t, 50)) * 1e3, 3) for v, t in per_verb.items() if t},
                         target_p99_ms=target_p99_ms, verbs=tuple(verbs), server_ms=server_ms,
                         window_p99_ms=windows or None, steal=steal.share)


NODE_TEMPLATE = Path(__file__).resolve().parents[1] / "scenarios" / "node-gpu-recorded.yaml"


def full_nodes(count: int) -> list[dict]:
    """Full Node objects as kube-scheduler sends them (recorded gpu-node-1, managedFields and all)."""
    template = yaml.safe_load(NODE_TEMPLATE.read_text())
    return [gpu_node(f"gpu-node-{i:05d}", template) for i in range(count)]
