"""`kubeview bench render`: what running the render on the local cluster costs over running it alone.

Wall time of `kubeview --render SCENE --headless` (producer and consumer processes on the embedded
cluster, one consumer per usable core) against `python -m renderer render SCENE` (one process, all
cores) on the same machine, same scene. Runs alternate so a change in machine load hits both; the
median of each is compared. Target: overhead <= 10%. Both write the raw image, and the bench checks
they are bit-identical. `--quick` renders the same scene at a quarter of the pixels.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import yaml

import kubeview

TARGET = 0.10
ROUNDS = 3
REPO = Path(kubeview.__file__).resolve().parent.parent


def _scene(quick: bool, workdir: Path) -> Path:
    from renderer.scene import bundled

    path = bundled("spheres")
    if not quick:
        return path
    doc = yaml.safe_load(path.read_text())
    doc["image"]["width"] //= 2
    doc["image"]["height"] //= 2
    small = workdir / "spheres-quick.yaml"
    small.write_text(yaml.safe_dump(doc, sort_keys=False))
    return small


def _timed(argv: list[str], cwd: Path) -> tuple[float, str]:
    """Wall seconds of one run, and its stdout."""
    env = {**os.environ, "PYTHONPATH": str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    t0 = time.perf_counter()
    proc = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True)
    elapsed = time.perf_counter() - t0
    if proc.returncode != 0:
        last = (proc.stderr.strip().splitlines() or ["(no output)"])[-1]
        raise RuntimeError(f"{' '.join(argv[1:4])} failed with exit {proc.returncode}: {last}")
    return elapsed, proc.stdout


def _producer_seconds(stdout: str) -> float | None:
    """The producer's own elapsed time, from kubeview's last line (`render: wrote ... in 7.8s`)."""
    m = re.search(r"render: wrote .* in ([0-9.]+)s\s*$", stdout.strip())
    return float(m.group(1)) if m else None


def measure(quick: bool = False, rounds: int = ROUNDS) -> dict:
    with tempfile.TemporaryDirectory(prefix="kubeview-bench-") as tmp:
        work = Path(tmp)
        scene = _scene(quick, work)
        kube = [sys.executable, "-m", "kubeview", "--render", str(scene), "--headless", "-o", "kv.png",
                "--raw", "kv.npy"]
        ref = [sys.executable, "-m", "renderer", "render", str(scene), "-o", "ref.png", "--raw", "ref.npy",
               "--no-progress"]
        # warm numba's on-disk cache for both kernels (serial in consumers, parallel in render): not timed
        from renderer.scene import bundled

        small = [str(bundled("three-spheres"))]
        _timed(kube[:4] + small + kube[5:], work)
        _timed(ref[:4] + small + ref[5:], work)
        load = os.getloadavg()[0]
        times: dict[str, list[float]] = {"kubeview": [], "renderer": []}
        producer: list[float] = []
        for i in range(rounds):
            order = (("kubeview", kube), ("renderer", ref)) if i % 2 == 0 else (("renderer", ref), ("kubeview", kube))
            for name, argv in order:
                elapsed, out = _timed(argv, work)
                times[name].append(elapsed)
                if name == "kubeview" and _producer_seconds(out) is not None:
                    producer.append(_producer_seconds(out))  # type: ignore[arg-type]
        identical = np.load(work / "kv.npy").tobytes() == np.load(work / "ref.npy").tobytes()
        from renderer.scene import load as load_scene

        sc = load_scene(scene)
    kv, rf = statistics.median(times["kubeview"]), statistics.median(times["renderer"])
    return {
        "scene": f"{sc.name} {sc.width}x{sc.height} spp {sc.spp}",
        "usable_cores": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count(),
        "load_average_before": round(load, 2),
        "rounds": rounds,
        "kubeview_seconds": [round(t, 3) for t in times["kubeview"]],
        "renderer_seconds": [round(t, 3) for t in times["renderer"]],
        "kubeview_median": round(kv, 3),
        "producer_elapsed_median": round(statistics.median(producer), 3) if producer else None,
        "renderer_median": round(rf, 3),
        "overhead": round(kv / rf - 1.0, 4),
        "target": TARGET,
        "ok": kv / rf - 1.0 <= TARGET,
        "bit_identical": identical,
    }


def run(args: argparse.Namespace) -> int:
    try:
        r = measure(quick=args.quick, rounds=1 if args.quick else ROUNDS)
    except RuntimeError as exc:
        sys.stderr.write(f"kubeview bench render: {exc}\n")
        return 1
    if args.json:
        print(json.dumps(r, indent=2))
        return 0
    print(f"render benchmark: {r['scene']}, {r['usable_cores']} usable cores, load {r['load_average_before']} "
          f"before ({r['rounds']} round(s), alternating, median)")
    print(f"  python -m renderer render            {r['renderer_median']:7.2f} s   {r['renderer_seconds']}")
    print(f"  kubeview --render --headless         {r['kubeview_median']:7.2f} s   {r['kubeview_seconds']}")
    if r["producer_elapsed_median"] is not None:
        print(f"    of which the producer ran          {r['producer_elapsed_median']:7.2f} s   "
              f"(the rest: kubeview, pod start-up and shutdown)")
    verdict = "OK" if r["ok"] else "ABOVE TARGET"
    print(f"  overhead                             {100 * r['overhead']:+6.1f} %   target <= {100 * TARGET:.0f}%  "
          f"{verdict}")
    print(f"  images bit-identical                 {'yes' if r['bit_identical'] else 'NO'}")
    return 0
