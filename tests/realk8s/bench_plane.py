"""The real plane set up for `kubeview bench scheduler --kubeconfig`: three kube-schedulers and the extender.

Why this shape (issue #25 item 5, issue #37 item 4):
- the plane's own kube-scheduler is the plain one (`default-scheduler`); a second kube-scheduler
  runs the shipped second-scheduler profile (`kubeview-scheduler`, manifests/scheduler/
  second-scheduler) with the extender, and a third the generated native packing profile
  (`kubeview-native`, scheduling/native_profile.py, only its schedulerName changed), so one bench
  run measures plain, native and extender on the same nodes (`SCHEDULERS`, ratios to plain);
- all have their client QPS/burst lifted (`CLIENT`): at the default 50 QPS the plain scheduler
  is held to about 50 binds/s by its own rate limiter and the ratio measures the limiter;
- the extender is a local process (`kubeview extender`, admin credentials: the bench measures cost,
  the RBAC tests prove the shipped role), so its CPU can be read from /proc beside the others'.
- kube-controller-manager runs without node lifecycle (`CONTROLLERS`): fake nodes have no kubelet,
  so 40 s after creation it marks all 5,000 NotReady and taints them, a storm of Node writes that
  lands on whichever scheduler is measured then (the second, with the extender); scheduler_perf
  runs no controller-manager at all;
`cpu_seconds` reads every process's user+system time, so a run can say where the 2 cores went.
"""

from __future__ import annotations

import os
from pathlib import Path

import yaml

from kubeview.scheduling import PackingConfig
from kubeview.scheduling.native_profile import profile, scoring_of

from .extender_run import ExtenderProc
from .plane import REPO, Plane

SECOND_SCHEDULER = REPO / "manifests" / "scheduler" / "second-scheduler" / "kubeview-scheduler.yaml"
CLIENT = {"qps": 1000.0, "burst": 1000}
EXTENDER_SCHEDULER = "kubeview-scheduler"
NATIVE_SCHEDULER = "kubeview-native"  # its own name: the shipped native one is also `kubeview-scheduler`
SCHEDULERS = ("default-scheduler", NATIVE_SCHEDULER, EXTENDER_SCHEDULER)  # the bench's order: plain first
TICKS = os.sysconf("SC_CLK_TCK")
CONTROLLERS = "*,bootstrapsigner,tokencleaner,-node-lifecycle-controller,-taint-eviction-controller"


def second_scheduler_config(url: str, node_cache_capable: bool) -> dict:
    """The shipped second-scheduler KubeSchedulerConfiguration pointed at `url` (profile and extender
    as shipped; only the URL and `nodeCacheCapable` change)."""
    docs = [d for d in yaml.safe_load_all(SECOND_SCHEDULER.read_text()) if d]
    config_map = next(d for d in docs if d.get("kind") == "ConfigMap")
    shipped = yaml.safe_load(config_map["data"]["config.yaml"])
    extenders = [dict(e, urlPrefix=url, nodeCacheCapable=node_cache_capable) for e in shipped["extenders"]]
    return {"profiles": shipped["profiles"], "extenders": extenders}


def native_scheduler_config() -> dict:
    """The native packing profile `kubeview scheduler-manifests --mode native` ships (the default
    policy), under `NATIVE_SCHEDULER`'s name."""
    return {"profiles": [profile(scoring_of(PackingConfig()), NATIVE_SCHEDULER)]}


class BenchPlane:
    """A started plane with the plain scheduler (QPS lifted), the native one, the extender and the
    extender's scheduler."""

    def __init__(self, plane: Plane, client: dict | None = None) -> None:
        self.plane = plane
        self.client = CLIENT if client is None else client
        self.extender = ExtenderProc(plane, plane.kubeconfig)
        self.node_cache_capable = True

    def start(self, node_cache_capable: bool = True) -> BenchPlane:
        self.plane.set_scheduler_config({}, self.client)
        self.plane.start_scheduler(NATIVE_SCHEDULER, native_scheduler_config(), self.client)
        self.set_mode(node_cache_capable)
        return self

    def set_mode(self, node_cache_capable: bool) -> None:
        """(Re)start the extender (so its /status latency is this mode's alone) and the second scheduler
        with `nodeCacheCapable` on (node names) or off (full Nodes)."""
        self.node_cache_capable = node_cache_capable
        if self.extender.proc is not None:
            self.extender.proc.stop()
        self.extender.start()
        self.plane.start_scheduler(EXTENDER_SCHEDULER, second_scheduler_config(self.extender.url, node_cache_capable),
                                   self.client)

    def stop(self) -> None:
        if self.extender.proc is not None:
            self.extender.proc.stop()
        for name in (EXTENDER_SCHEDULER, NATIVE_SCHEDULER):
            second = self.plane.procs.pop(name, None)
            if second is not None:
                second.stop()

    def cpu_seconds(self) -> dict[str, float]:
        """User+system CPU seconds of every process of the plane (and the extender) so far."""
        procs = dict(self.plane.procs)
        if self.extender.proc is not None:
            procs["kubeview-extender"] = self.extender.proc
        out = {}
        for name, proc in procs.items():
            out[name] = _cpu_of(proc.popen.pid)
        return out


def latency_line(status: dict) -> str:
    """The extender's own per-verb latency and CPU time (its GET /status), one line."""
    parts = []
    for verb, d in sorted((status.get("latency") or {}).items()):
        if d.get("count"):
            parts.append(f"{verb} x{d['count']}: p50 {d['p50_ms']:.1f} p90 {d['p90_ms']:.1f} p99 {d['p99_ms']:.1f} ms, "
                         f"CPU p50 {d.get('cpu_p50_ms', 0):.2f} p99 {d.get('cpu_p99_ms', 0):.2f} ms")
    return "extender server side: " + ("; ".join(parts) or "no calls")


def _cpu_of(pid: int) -> float:
    """utime + stime of a process (its threads included) from /proc; 0 once it is gone."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / TICKS


def cpu_table(before: dict[str, float], after: dict[str, float], seconds: float) -> str:
    """Each process's CPU over a stretch, in seconds and in cores (of the wall time)."""
    rows = sorted(((after[n] - before.get(n, 0.0), n) for n in after), reverse=True)
    total = sum(r[0] for r in rows)
    parts = [f"{n} {cpu:.1f} s ({cpu / seconds:.2f} cores)" for cpu, n in rows if cpu >= 0.05]
    return f"CPU over {seconds:.0f} s wall: " + ", ".join(parts) + f"; total {total:.1f} s ({total / seconds:.2f} cores)"
