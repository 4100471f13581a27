"""What `--cpu` a render's consumers could ask for on this cluster (#24 item 13).

`kubeview --demo --render three-spheres` asked 1000m per consumer where no node that takes them had
that much free: the error said so and stopped. This finds the most free cpu on any node that passes
every other filter for the consumer pod (taints, selectors, memory, pod count), with kubeview's own
scheduler filters, and rounds it down to a tidy amount. Pure: an allocation and a pod in, a string out.
"""

from __future__ import annotations

import copy

import numpy as np

from kubeview.model.allocation import Allocation
from kubeview.model.views import PodView
from kubeview.scheduling.config import PackingConfig
from kubeview.scheduling.evaluate import evaluate


def fitting_cpu(alloc: Allocation, pod: dict) -> int | None:
    """The largest cpu request (millicores, a multiple of 100m when at least 100m) with which `pod`
    fits some node today; None when no node takes it at any cpu."""
    col = alloc.column("cpu")
    if col is None or not len(alloc.nodes):
        return None
    probe = copy.deepcopy(pod)
    for c in (probe.get("spec") or {}).get("containers") or []:
        c.setdefault("resources", {}).setdefault("requests", {})["cpu"] = "1m"
    placement = evaluate(alloc, PodView.from_api(probe), PackingConfig())
    rows = np.flatnonzero(placement.feasible)
    if not len(rows):
        return None
    index = {n: i for i, n in enumerate(alloc.nodes)}
    free = max(int(alloc.allocatable[index[placement.nodes[r]], col] - alloc.requested[index[placement.nodes[r]], col])
               for r in rows.tolist())
    per_container = free // max(1, len((probe.get("spec") or {}).get("containers") or []))
    return per_container - per_container % 100 if per_container >= 100 else per_container or None


def cpu_option(millis: int) -> str:
    return f"--cpu {millis // 1000}" if millis % 1000 == 0 else f"--cpu {millis}m"


# what `kubeview --render` asks per consumer by default (cli.py: --cpu 1000m); the consumer pod's
# shape for the estimate (local.consumer_replicaset: no tolerations, no selectors, cpu only)
DEFAULT_CPU_MILLIS = 1000
CONSUMER_POD = {"metadata": {"name": "consumer", "namespace": "kubeview-render"},
                "spec": {"containers": [{"name": "consumer", "resources": {"requests": {"cpu": "1000m"}}}]}}


def render_command(alloc: Allocation, *, demo: bool, scene: str = "three-spheres") -> str:
    """A `kubeview --render` command that starts on the cluster shown: `--demo` when it is the demo,
    and `--cpu` lowered when the default 1000m fits no node."""
    words = ["kubeview", *(["--demo"] if demo else []), "--render", scene]
    millis = fitting_cpu(alloc, CONSUMER_POD)
    if millis is not None and millis < DEFAULT_CPU_MILLIS:
        words.append(cpu_option(millis))
    return " ".join(words)
