#!/usr/bin/env python3
"""Start the realk8s test plane for `kubeview bench scheduler --kubeconfig`, and optionally run it.

    python scripts/realk8s-plane.py                      # start, print the kubeconfig, wait for Ctrl-C
    python scripts/realk8s-plane.py --modes names,nodes -- --scenarios FILE
                                                         # run the bench once per extender mode, then stop
    python scripts/realk8s-plane.py --lean               # etcd, kube-apiserver, kcm and kwok only: for
                                                         # `bench cluster` at 150,000 pods (its pods are bound
                                                         # by nodeName; each scheduler holds ~2.7 GB of them)
    python scripts/realk8s-plane.py --gated -- kubeview/bench/scenarios/scheduler-gang-realk8s.yaml \
        --schedulers default-scheduler               # gangs: the plane with 1.37's gang gates on

The plane is the test fixture's (tests/realk8s/plane.py), so a figure measured here is measured on
what the tests run against; tests/realk8s/bench_plane.py adds a kube-scheduler with the native
packing profile (`kubeview-native`), one with the shipped extender profile (`kubeview-scheduler`),
the extender process and lifted client QPS; the bench compares all three (plain first, the ratios
are to it) unless the bench arguments name `--schedulers` themselves. Every bench run is printed
with the load average and each process's CPU seconds, because on a shared 2-core machine a figure
only means something as a ratio within one run.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.realk8s.bench_plane import CONTROLLERS, SCHEDULERS, BenchPlane, cpu_table, latency_line  # noqa: E402
from tests.realk8s.plane import bin_dir, missing_binaries, new_plane  # noqa: E402
from tests.realk8s.procs import stop_all  # noqa: E402

MODES = {"names": True, "nodes": False}


def main(argv: list[str]) -> int:
    own, bench_args = (argv[: argv.index("--")], argv[argv.index("--") + 1:]) if "--" in argv else (argv, None)
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--modes", default="names", help="extender modes to run the bench in: names,nodes")
    parser.add_argument("--qps", type=float, default=1000.0, help="every scheduler's client QPS and burst")
    parser.add_argument("--gated", action="store_true", help="the gated plane (the gated_plane fixture's): 1.37's "
                        "gang and DRA gates on, scheduling.k8s.io/v1beta1 served, so gang workloads run")
    parser.add_argument("--lean", action="store_true", help="no scheduler and no extender: the plane for "
                        "`kubeview bench cluster`, whose pods are bound by nodeName; runs nothing, waits for Ctrl-C")
    args = parser.parse_args(own)
    modes = [m for m in args.modes.split(",") if m]
    if any(m not in MODES for m in modes):
        parser.error(f"--modes takes names and/or nodes, not {args.modes!r}")
    binaries = bin_dir()
    if missing_binaries(binaries):
        sys.stderr.write(f"missing {', '.join(missing_binaries(binaries))}: bash scripts/build-kubernetes.sh\n")
        return 1
    started = time.monotonic()
    plane = new_plane("kubeview-realk8s-bench-", gated=args.gated)
    plane.controllers = CONTROLLERS
    plane.start()
    if args.lean:
        plane.procs.pop("kube-scheduler").stop()
        print(f"lean plane up in {time.monotonic() - started:.0f} s; kubeconfig {plane.kubeconfig}", flush=True)
        try:
            while True:
                time.sleep(3600)
        except KeyboardInterrupt:
            pass
        finally:
            stop_all()
        return 0
    bench = BenchPlane(plane, {"qps": args.qps, "burst": int(args.qps)}).start(MODES[modes[0]])
    print(f"plane up in {time.monotonic() - started:.0f} s; kubeconfig {plane.kubeconfig}; "
          f"schedulers {', '.join(SCHEDULERS)} (extender {bench.extender.url}), "
          f"client qps/burst {args.qps:g}", flush=True)
    try:
        if bench_args is None:
            while True:
                time.sleep(3600)
        if "--schedulers" not in bench_args:
            bench_args = [*bench_args, "--schedulers", ",".join(SCHEDULERS)]
        for mode in modes:
            bench.set_mode(MODES[mode])
            run_bench(bench, plane.kubeconfig, mode, bench_args)
    except KeyboardInterrupt:
        pass
    finally:
        stop_all()
    return 0


def run_bench(bench: BenchPlane, kubeconfig: Path, mode: str, bench_args: list[str]) -> None:
    """One `kubeview bench scheduler --kubeconfig` run, framed by the load and the CPU each process used."""
    print(f"\n== extender mode {mode} (nodeCacheCapable: {bench.node_cache_capable}); "
          f"load {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} {os.getloadavg()[2]:.2f}", flush=True)
    before, t0 = bench.cpu_seconds(), time.monotonic()
    child_before = os.times()
    subprocess.run([sys.executable, "-m", "kubeview", "bench", "scheduler", *bench_args,
                    "--kubeconfig", str(kubeconfig)], check=False)
    seconds = time.monotonic() - t0
    after = bench.cpu_seconds()
    child = os.times()
    after["bench (kubeview)"] = (child.children_user + child.children_system
                                 - child_before.children_user - child_before.children_system)
    print(cpu_table(before, after, seconds))
    print(latency_line(bench.extender.status()))
    print(f"load after: {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} {os.getloadavg()[2]:.2f}", flush=True)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
