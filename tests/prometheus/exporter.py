"""A test exporter: DCGM-exporter-, node-exporter- and cAdvisor-shaped series with known values.

Counters grow at known rates from the wall clock at scrape time (value = rate x seconds since
start), so `rate()` over any window is the rate below, up to scrape jitter. Node and GPU names
(dgx-a, dgx-b) differ from the local cluster's, which the same Prometheus also scrapes.
"""

from __future__ import annotations

import time
from collections.abc import Iterator

from prometheus_client import CollectorRegistry, start_http_server
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily

GiB, MiB = 2**30, 2**20

# node-exporter: dgx-a carries a `node` label; dgx-b only an `instance` of HOST:PORT (kube-prometheus
# style, kept because the job honours labels). Rates are cpu-seconds per second, summed over cpus.
NODES = {
    "dgx-a": {"labels": {"node": "dgx-a"}, "cpus": 8,
              "rates": {"user": 2.0, "system": 0.5, "iowait": 0.25, "idle": 5.25},
              "mem_total": 32 * GiB, "mem_available": 20 * GiB},
    "dgx-b": {"labels": {"instance": "dgx-b:9100"}, "cpus": 4,
              "rates": {"user": 0.5, "system": 0.0, "idle": 3.5},
              "mem_total": 16 * GiB, "mem_available": 15 * GiB},
}
EXPECTED_NODE_CPU = {"dgx-a": 2500.0, "dgx-b": 500.0}  # millicores: user + system (not idle or iowait)
EXPECTED_NODE_MEMORY = {"dgx-a": 12 * GiB, "dgx-b": 1 * GiB}

# dcgm-exporter: (Hostname, gpu, UUID, util %, FB used MiB, FB free MiB, namespace, pod, container)
GPUS = [
    ("dgx-a", "0", "GPU-aaaa0000", 2.0, 1024, 15360, "ml", "idle-trainer", "train"),
    ("dgx-a", "1", "GPU-aaaa0001", 60.0, 8192, 8192, "ml", "busy-trainer", "train"),
    ("dgx-b", "0", "GPU-bbbb0000", 3.0, 512, 15872, "ml", "pair", "train"),
    ("dgx-b", "1", "GPU-bbbb0001", 95.0, 16000, 384, "ml", "pair", "train"),
]

# cAdvisor: (namespace, pod, container, cpu rate in cores, working set bytes); container "" is the
# pod's own cgroup and "POD" the pause container: kubeview must not count them again.
CONTAINERS = [
    ("ml", "busy-trainer", "train", 0.75, 2 * GiB),
    ("ml", "busy-trainer", "sidecar", 0.25, 100 * MiB),
    ("ml", "busy-trainer", "", 1.0, 2 * GiB + 100 * MiB),
    ("ml", "busy-trainer", "POD", 0.001, 1 * MiB),
    ("ml", "idle-trainer", "train", 0.01, 512 * MiB),
    ("ml", "pair", "train", 1.5, 4 * GiB),
]
EXPECTED_POD_CPU = {("ml", "busy-trainer"): 1000.0, ("ml", "idle-trainer"): 10.0, ("ml", "pair"): 1500.0}
EXPECTED_POD_MEMORY = {("ml", "busy-trainer"): 2 * GiB + 100 * MiB, ("ml", "idle-trainer"): 512 * MiB,
                       ("ml", "pair"): 4 * GiB}


class TestCollector:
    """Serves the tables above; counters computed at scrape time."""

    __test__ = False  # not a pytest class

    def __init__(self) -> None:
        self.t0 = time.time() - 60.0  # counters are well above zero from the first scrape

    def collect(self) -> Iterator[CounterMetricFamily | GaugeMetricFamily]:
        elapsed = time.time() - self.t0
        cpu = CounterMetricFamily("node_cpu_seconds_total", "Seconds the CPUs spent in each mode.",
                                  labels=["cpu", "mode", "node", "instance"])
        total = GaugeMetricFamily("node_memory_MemTotal_bytes", "Memory information field MemTotal_bytes.",
                                  labels=["node", "instance"])
        avail = GaugeMetricFamily("node_memory_MemAvailable_bytes", "Memory information field MemAvailable_bytes.",
                                  labels=["node", "instance"])
        for spec in NODES.values():
            lv = [spec["labels"].get("node", ""), spec["labels"].get("instance", "")]
            for i in range(spec["cpus"]):
                for mode, rate in spec["rates"].items():
                    cpu.add_metric([str(i), mode, *lv], rate / spec["cpus"] * elapsed)
            total.add_metric(lv, spec["mem_total"])
            avail.add_metric(lv, spec["mem_available"])
        yield from (_drop_empty(cpu), _drop_empty(total), _drop_empty(avail))

        dcgm = ["gpu", "UUID", "device", "modelName", "Hostname", "namespace", "pod", "container"]
        util = GaugeMetricFamily("DCGM_FI_DEV_GPU_UTIL", "GPU utilization (in %).", labels=dcgm)
        used = GaugeMetricFamily("DCGM_FI_DEV_FB_USED", "Framebuffer memory used (in MiB).", labels=dcgm)
        free = GaugeMetricFamily("DCGM_FI_DEV_FB_FREE", "Framebuffer memory free (in MiB).", labels=dcgm)
        for host, gpu, uuid, u, fb_used, fb_free, ns, pod, container in GPUS:
            lv = [gpu, uuid, f"nvidia{gpu}", "NVIDIA A100-SXM4-16GB", host, ns, pod, container]
            util.add_metric(lv, u)
            used.add_metric(lv, fb_used)
            free.add_metric(lv, fb_free)
        yield from (util, used, free)

        cad = ["namespace", "pod", "container", "node"]
        ccpu = CounterMetricFamily("container_cpu_usage_seconds_total", "Cumulative cpu time consumed in seconds.",
                                   labels=cad)
        cmem = GaugeMetricFamily("container_memory_working_set_bytes", "Current working set in bytes.", labels=cad)
        for ns, pod, container, rate, ws in CONTAINERS:
            lv = [ns, pod, container, "dgx-a" if pod != "pair" else "dgx-b"]
            ccpu.add_metric(lv, rate * elapsed)
            cmem.add_metric(lv, ws)
        yield from (ccpu, cmem)


def _drop_empty(family: CounterMetricFamily | GaugeMetricFamily) -> CounterMetricFamily | GaugeMetricFamily:
    """Empty label values mean "no such label", as on a real exporter."""
    for s in family.samples:
        for k in [k for k, v in s.labels.items() if v == ""]:
            del s.labels[k]
    return family


def start_test_exporter(host: str = "127.0.0.1") -> tuple[object, int]:
    """(server, port) serving `TestCollector` on a free port; `server.shutdown()` stops it."""
    reg = CollectorRegistry(auto_describe=False)
    reg.register(TestCollector())  # type: ignore[arg-type]
    server, _thread = start_http_server(0, addr=host, registry=reg)
    return server, int(server.server_address[1])
