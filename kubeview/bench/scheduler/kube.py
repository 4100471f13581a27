"""`kubeview bench scheduler --kubeconfig FILE`: scheduler_perf's scenarios against a real API server.

As scheduler_perf does, it creates fake nodes (no kubelets: a Node object and its status) and pods,
and measures the real kube-scheduler's SchedulingThroughput from the pods' bindings, seen through a
pods watch. Each workload runs once per scheduler name (`--schedulers`, default `default-scheduler`
then `kubeview-scheduler`, the second-scheduler profile of manifests/scheduler that calls the
extender), on the same nodes, the pods of one run deleted and gone before the next starts; the
figures of every run after the first are also printed as a ratio to the first.

Everything created carries the run's label (`kubeview.io/bench-run`) and the pods live in a
namespace of the run's own, so cleanup is three calls (pods with grace 0, nodes by label, the
namespace), made on the way out whatever happens, Ctrl-C and SIGTERM included. Gang workloads
(`createPodGroups`) need a cluster that serves scheduling.k8s.io/v1beta1 PodGroups (1.37 with the
GenericWorkload gate on and the group version enabled); elsewhere they are skipped with a line saying
so. Their groups are named per run of a workload (`gang-<run>-<i>`): a run never meets the groups of
one before, deleted with its pods but held a while by their `podgroup-protection` finalizer. A cluster with nodes
kubeview did not create is refused unless `--yes`: the bench's pods select only its own nodes, but
other pods could be scheduled onto fake nodes that will never run them.
"""

from __future__ import annotations

import functools
import itertools
import json
import signal
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TypeVar

import urllib3
from kubernetes import client
from kubernetes.client.exceptions import ApiException

from kubeview.bench.scheduler.kube_plan import (
    RUN_LABEL,
    ThroughputCollector,
    allocation_of,
    bench_namespace,
    bench_node,
    bench_pod,
    foreign_nodes,
    namespace_name,
    new_run_id,
)
from kubeview.bench.scheduler.plan_recovery import recover
from kubeview.bench.scheduler.pod_tally import PodTally, leaving
from kubeview.bench.scheduler.run import WorkloadResult, gpu_packing, throughput_summary
from kubeview.bench.scheduler.scenarios import Workload, node_objects, pod_group_objects, pod_objects
from kubeview.cluster.kube.config import Connection
from kubeview.cluster.kube.errors import describe_call_error
from kubeview.cluster.kube.watch import Informer, KindSpec, Link, WatchSettings

T = TypeVar("T")
DEFAULT_SCHEDULERS = ("default-scheduler", "kubeview-scheduler")  # plain, then the extender's
POD_GROUPS = ("scheduling.k8s.io", "v1beta1", "podgroups")


class BenchError(Exception):
    """The bench cannot go on; the message is one sentence for the user. `unreachable`: no connection
    could be made (the API server is gone: a cleanup says what it leaves instead of asking again)."""

    def __init__(self, message: str, *, unreachable: bool = False) -> None:
        super().__init__(message)
        self.unreachable = unreachable


@dataclass
class KubeOptions:
    schedulers: list[str] = field(default_factory=lambda: list(DEFAULT_SCHEDULERS))
    yes: bool = False  # run beside nodes kubeview did not create
    timeout: float = 600.0  # seconds for one createPods op to be placed
    stall: float = 60.0  # seconds without a pod placed before a run is given up
    interval: float = 1.0  # throughput sample interval (scheduler_perf: 1 s)
    workers: int = 8  # parallel create calls
    settle: float = 120.0  # seconds to wait for deleted pods to be gone
    rounds: int = 1  # runs of each workload per scheduler, the order reversed every other round


class KubeBench:
    def __init__(self, conn: Connection, options: KubeOptions, say: Callable[[str], None]) -> None:
        self.conn = conn
        self.options = options
        self.say = say
        self.core = client.CoreV1Api(conn.api_client)
        self.custom = client.CustomObjectsApi(conn.api_client)
        self._group_runs = itertools.count()  # PodGroup name prefixes, one per run of a gang workload
        self.run_id = new_run_id()
        self.namespace = namespace_name(self.run_id)
        self.tally = PodTally()
        self._made_namespace = False
        self._made_nodes = False
        self._stop = threading.Event()  # stop creating (Ctrl-C, an error)
        self._watch_stop = threading.Event()  # the pods watch runs through cleanup, which waits on it
        self._informer: Informer | None = None
        self._pool = ThreadPoolExecutor(1, thread_name_prefix="kubeview-bench")  # creating, in the background

    # -- the whole run -------------------------------------------------------------------------
    def run(self, workloads: list[Workload]) -> list[WorkloadResult]:
        self.preflight()
        gangs = [w for w in workloads if w.has_groups]
        if gangs and not self.serves_pod_groups():
            self.say(f"skipping {len(gangs)} gang workload(s) ({', '.join(w.full_name for w in gangs)}): "
                     f"{self.conn.title} serves no scheduling.k8s.io/v1beta1 podgroups (1.37: the GenericWorkload "
                     "gate on in every component and --runtime-config=scheduling.k8s.io/v1beta1=true)")
            workloads = [w for w in workloads if not w.has_groups]
        results: list[WorkloadResult] = []
        with _sigterm_as_interrupt():
            try:
                self._call(f"Creating namespace {self.namespace}", self.core.create_namespace,
                           bench_namespace(self.run_id))
                self._made_namespace = True
                self._start_watch()
                for workload in workloads:
                    results += self.run_workload(workload)
            finally:
                self.cleanup()
        return results

    def preflight(self) -> None:
        nodes = self._list_nodes()
        foreign = foreign_nodes(nodes)
        if foreign and not self.options.yes:
            shown = ", ".join(foreign[:3]) + (f" and {len(foreign) - 3} more" if len(foreign) > 3 else "")
            raise BenchError(f"{self.conn.title} has {len(foreign)} node(s) kubeview bench did not create "
                             f"({shown}); the bench adds fake nodes that other pods could be scheduled onto. "
                             "Use a cluster of its own, or pass --yes to run anyway.")
        stale = len(nodes) - len(foreign)
        if stale:
            self.say(f"note: {stale} fake node(s) of an earlier bench run are still there "
                     f"(kubectl delete nodes -l {RUN_LABEL}); this run's pods select only its own nodes")

    def run_workload(self, workload: Workload) -> list[WorkloadResult]:
        """Each scheduler's runs of `workload`, `options.rounds` of them, the order reversed every other
        round (A B C, C B A, ...): drift over the run and the cost of going first or last cancel."""
        node_objs: list[dict] = []
        results = {s: WorkloadResult(f"{workload.full_name}/{s}", None, 0, 0, 0, 0, 0.0, gang_size=workload.gang_size)
                   for s in self.options.schedulers}
        try:
            for rnd in range(self.options.rounds):
                order = self.options.schedulers if rnd % 2 == 0 else self.options.schedulers[::-1]
                if self.options.rounds > 1:
                    self.say(f"  round {rnd + 1} of {self.options.rounds}: {', '.join(order)}")
                for scheduler in order:
                    node_objs = self._run_once(workload, scheduler, results[scheduler], node_objs)
        finally:
            self._delete_nodes()
        return list(results.values())

    def _run_once(self, workload: Workload, scheduler: str, result: WorkloadResult, node_objs: list[dict]) -> list[dict]:
        """One run of the workload's ops with `scheduler`, added to `result`; the nodes are created by
        the first run of all (returned), the pods deleted and gone after each."""
        first = not node_objs
        samples, unschedulable = len(result.samples), result.unschedulable
        pod_seq = node_seq = 0
        created: list[str] = []  # pod names in creation order, for deletePods
        groups = f"gang-{next(self._group_runs)}-"
        for op in workload.ops:
            if op.opcode == "createPodGroups":
                self._all(self._create_pod_group, pod_group_objects(op, groups), "podgroups")
            if op.opcode == "createNodes":
                objs = node_objects(op, node_seq)
                node_seq += op.count
                if first:
                    node_objs = node_objs + self._create_nodes(objs)
            elif op.opcode == "createPods":
                pods = [bench_pod(p, self.run_id, scheduler) for p in pod_objects(op, pod_seq, group_prefix=groups)]
                pod_seq += op.count
                created += [p["metadata"]["name"] for p in pods]
                self._place(pods, scheduler, result if op.collect else None)
            elif op.opcode == "deletePods":
                gone = leaving(created, op.templates[0]["metadata"]["namePrefix"], op.count)
                created = [n for n in created if n not in set(gone)]
                self._delete_named(gone)
        result.nodes = len(node_objs)
        result.round_rates.append(throughput_summary(result.samples[samples:])["Average"])
        bound = self.tally.bound()
        alloc = allocation_of(node_objs, bound)
        result.gpu = gpu_packing(alloc) if alloc.nodes else {}
        if result.gpu and result.unschedulable > unschedulable:
            result.recovery = recover(node_objs, bound, self.tally.pending()).words()
        self._delete_pods()
        if workload.has_groups:
            self._call(f"Deleting the PodGroups in {self.namespace}", self.custom.delete_collection_namespaced_custom_object,
                       *POD_GROUPS[:2], self.namespace, POD_GROUPS[2])
        return node_objs

    # -- nodes and pods ------------------------------------------------------------------------
    def _list_nodes(self) -> list[dict]:
        return json.loads(self._call("Listing nodes", self.core.list_node)).get("items") or []

    def _create_nodes(self, templates: list[dict]) -> list[dict]:
        start = time.monotonic()
        made = [bench_node(t, self.run_id) for t in templates]

        def one(pair: tuple[dict, dict]) -> None:
            node, status = pair
            name = node["metadata"]["name"]
            self._call(f"Creating node {name}", self.core.create_node, node)
            self._made_nodes = True
            self._call(f"Writing the status of node {name}", self.core.patch_node_status, name, status)

        self._all(one, made, "nodes")
        self.say(f"  created {len(made)} fake nodes in {time.monotonic() - start:.1f} s")
        return [{**node, "status": status["status"]} for node, status in made]

    def _place(self, pods: list[dict], scheduler: str, result: WorkloadResult | None) -> None:
        """Create `pods` and wait until each is bound or found unschedulable; measured when `result`."""
        names = {p["metadata"]["name"] for p in pods}
        collector = ThroughputCollector(self.options.interval)
        started = time.monotonic()
        created_at: list[float] = []  # when the last create returned: is creation what caps the rate?
        creating = self._pool.submit(self._create_timed, pods, created_at)
        last_progress, last_seen = started, (-1, -1)
        while True:
            time.sleep(self.options.interval if result is not None else 0.05)
            now = time.monotonic()
            bound, unschedulable = self.tally.count(names)
            if result is not None:
                collector.tick(now, bound)
            if creating.done():
                creating.result()  # raises the first create error
            if (bound, unschedulable) != last_seen:
                last_progress, last_seen = now, (bound, unschedulable)
            if bound + unschedulable >= len(names):
                break
            if now - last_progress > self.options.stall or now - started > self.options.timeout:
                if not self.tally.attempted(names):
                    raise BenchError(f"no scheduler named {scheduler!r} looked at the bench's pods in "
                                     f"{now - started:.0f} s; is it running? (the second-scheduler profile "
                                     "is in manifests/scheduler/second-scheduler)")
                self.say(f"  {len(names) - bound - unschedulable} of {len(names)} pods still not placed after "
                         f"{now - started:.0f} s; counted as they are")
                break
        if result is not None:
            placed = last_progress - started
            made = (created_at[0] - started) if created_at else float("nan")
            self.say(f"  {scheduler}: created {len(names)} pods in {made:.1f} s ({len(names) / made:.1f} pods/s), "
                     f"the last placed at {placed:.1f} s ({bound / max(placed, 1e-9):.1f} pods/s)"
                     + ("; creating was the limit" if creation_bound(made, placed, self.options.interval) else ""))
            result.seconds += time.monotonic() - started
            result.samples += collector.samples
            result.measured_pods += len(names)
            result.scheduled += bound
            result.unschedulable += len(names) - bound

    def _create_timed(self, pods: list[dict], created_at: list[float]) -> None:
        self._all(self._create_pod, pods, "pods")
        created_at.append(time.monotonic())

    def serves_pod_groups(self) -> bool:
        """Whether the API server serves scheduling.k8s.io/v1beta1 podgroups (discovery)."""
        try:
            data = self._call("Reading scheduling.k8s.io/v1beta1 discovery", self.custom.get_api_resources,
                              *POD_GROUPS[:2])
        except BenchError:
            return False  # 404: the group version is off (and any other failure shows on the next call)
        return any(r.get("name") == "podgroups" for r in json.loads(data).get("resources") or [])

    def _create_pod_group(self, group: dict) -> None:
        self._call(f"Creating PodGroup {self.namespace}/{group['metadata']['name']}",
                   self.custom.create_namespaced_custom_object, *POD_GROUPS[:2], self.namespace, POD_GROUPS[2],
                   {**group, "metadata": {**group["metadata"], "labels": {RUN_LABEL: self.run_id}}})

    def _create_pod(self, pod: dict) -> None:
        self._call(f"Creating pod {self.namespace}/{pod['metadata']['name']}", self.core.create_namespaced_pod,
                   self.namespace, pod)

    def _delete_named(self, names: list[str]) -> None:
        """These pods (grace 0), waited for until the watch shows them gone: pods leaving."""
        self._all(lambda name: self._call(f"Deleting pod {self.namespace}/{name}", self.core.delete_namespaced_pod,
                                          name, self.namespace, grace_period_seconds=0), names, "delete")
        deadline = time.monotonic() + self.options.settle
        while self.tally.present(names) and time.monotonic() < deadline and not self._watch_stop.is_set():
            time.sleep(0.05)

    def _delete_pods(self) -> None:
        """Every pod of the run, at once (grace 0: no kubelet will confirm), and wait until gone."""
        self._call(f"Deleting the pods in {self.namespace}", self.core.delete_collection_namespaced_pod,
                   self.namespace, grace_period_seconds=0)
        deadline = time.monotonic() + self.options.settle
        while self.tally.remaining() and time.monotonic() < deadline and not self._watch_stop.is_set():
            time.sleep(0.05)

    def _delete_nodes(self) -> None:
        if self._made_nodes:
            self._call("Deleting the bench's nodes", self.core.delete_collection_node,
                       label_selector=f"{RUN_LABEL}={self.run_id}")
            self._made_nodes = False

    def cleanup(self) -> None:
        """Everything the run created, whatever state it is in; reports what it could not remove."""
        self._stop.set()
        self._pool.shutdown(wait=True, cancel_futures=True)
        started = self._made_namespace
        steps = [self._delete_pods, self._delete_nodes, self._delete_namespace] if started else [self._delete_nodes]
        problems = []
        for step in steps:
            try:
                step()
            except BenchError as exc:
                problems.append(str(exc))
                if exc.unreachable:  # the API server is gone: each step after would only fail the same way
                    break
        self._watch_stop.set()
        if self._informer is not None:
            self._informer.interrupt()
        if problems:
            self.say("cleanup incomplete: " + " ".join(problems))
        elif started:
            self.say(f"cleaned up: the fake nodes and namespace {self.namespace} are deleted")

    def _delete_namespace(self) -> None:
        self._call(f"Deleting namespace {self.namespace}", self.core.delete_namespace, self.namespace)
        self._made_namespace = False

    # -- plumbing ------------------------------------------------------------------------------
    def _start_watch(self) -> None:
        spec = KindSpec("Pod", "pods", functools.partial(self.core.list_namespaced_pod, self.namespace),
                        self.namespace)
        link = Link(["Pod"], lambda e: None)
        self._informer = Informer(spec, self.tally.emit, self._watch_stop, link, self.conn.server,
                                  WatchSettings(watch_timeout=(60, 120)))
        threading.Thread(target=self._watch_body, name="kubeview-bench-watch", daemon=True).start()
        if not self.tally.synced.wait(30):
            raise BenchError(f"the pods watch of {self.namespace} did not start in 30 s")

    def _watch_body(self) -> None:
        try:
            assert self._informer is not None
            self._informer.run()
        except Exception as exc:  # Fatal (401/403): the bench sees no progress and says so
            if not self._watch_stop.is_set():
                self.say(f"the pods watch stopped: {exc}")
            self._watch_stop.set()

    def _all(self, fn: Callable[[T], object], items: list[T], what: str) -> None:
        """fn over items on the worker threads; stops at the first error (raised here)."""
        if self._stop.is_set():
            return
        with ThreadPoolExecutor(max(1, self.options.workers), thread_name_prefix=f"kubeview-{what}") as pool:
            for future in [pool.submit(self._unless_stopped, fn, item) for item in items]:
                try:
                    future.result()
                except BaseException:
                    pool.shutdown(wait=True, cancel_futures=True)
                    raise

    def _unless_stopped(self, fn: Callable[[T], object], item: T) -> None:
        if not self._stop.is_set():
            fn(item)

    def _call(self, action: str, fn: Callable, *args: object, **kwargs: object) -> bytes:
        """The reply's body, undecoded (the client's model classes would cost more than the bench
        measures); an API or network error becomes a BenchError of one sentence."""
        try:
            resp = fn(*args, _request_timeout=(10, 60), _preload_content=False, **kwargs)
            data = resp.data  # read whole, so the connection goes back to the pool
            resp.release_conn()
        except (ApiException, urllib3.exceptions.HTTPError, OSError) as exc:
            unreachable = isinstance(getattr(exc, "reason", exc), urllib3.exceptions.NewConnectionError | ConnectionRefusedError)
            raise BenchError(describe_call_error(exc, self.conn.server, action) or str(exc), unreachable=unreachable) from None
        return data


def creation_bound(made: float, placed: float, interval: float) -> bool:
    """Whether the pods were placed about as soon as they were created (within two samples), over a
    stretch long enough for that to mean the scheduler waited for pods, not a burst too short to tell."""
    return placed > 5 * interval and placed - made < 2 * interval


@contextmanager
def _sigterm_as_interrupt() -> Iterator[None]:
    """SIGTERM cleans up as Ctrl-C does (main thread only; elsewhere nothing to install)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)
