"""The local scheduler breaks score ties at random with a seeded generator, as kube-scheduler's
`selectHost` does (#24 item 9): the demo's Job pods all sat on gpu-node-1 (ties went to the first
node by name), so `kubeview preempt gpu-node-2` disrupted nothing. And `preempt --json` prints only
the JSON document on stdout."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from pathlib import Path

from kubeview.cluster.local.scheduler import decide
from kubeview.scheduling.config import PackingConfig

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scheduling"))
from builders import cluster, node, pod_obj  # noqa: E402

NODES = [node(f"gpu-node-{i}") for i in range(1, 5)]  # alike: every cpu-only pod ties on all four


def picks(seed: int | None, n: int = 40) -> list[str | None]:
    alloc = cluster(NODES)
    ties = random.Random(seed) if seed is not None else None
    return [decide(alloc, pod_obj(f"p{i}", cpu="10m"), PackingConfig(policy="spread"), ties=ties).node
            for i in range(n)]


def test_ties_spread_over_the_tied_nodes_and_repeat_per_seed() -> None:
    assert set(picks(None)) == {"gpu-node-1"}  # no generator: the first by name, as before
    assert set(picks(7)) == {n.name for n in NODES}
    assert picks(7) == picks(7) and picks(7) != picks(8)


def test_preempt_json_is_only_json_on_stdout_and_gpu_node_2_disrupts_something(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("KUBECONFIG", "KUBERNETES_SERVICE_HOST")}
    out = subprocess.run([sys.executable, "-m", "kubeview", "preempt", "gpu-node-2", "--items", "200", "--json"],
                         capture_output=True, text=True, timeout=180, env=env, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)  # the whole of stdout: progress lines went to stderr
    assert doc["state"] == "Complete" and doc["missing"] == "" and doc["twice"] == ""
    assert doc["disrupted"] and {d["node"] for d in doc["disrupted"]} == {"gpu-node-2"}
    assert "succeeded" in out.stderr and "preempted" in out.stderr
