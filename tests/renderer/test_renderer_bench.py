"""The benchmark's own parts (the benchmarks themselves are commands, not tests)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import numpy as np

from renderer import bench
from renderer import scene as scene_mod
from tests.renderer.testkit import THREE, InProcessProducer


def test_fake_consumers_finish_a_job_with_zeros(tmp_path: Path) -> None:
    sc = scene_mod.load(THREE, spp=40, chunk=1, tile=8)  # 24 tiles x 40 chunks = 960 tasks
    with InProcessProducer(sc, raw=tmp_path / "z.npy") as p:
        asyncio.run(asyncio.wait_for(bench._fake_consumers("127.0.0.1", p.port, 4), 60))
    assert p.rc == 0
    assert not np.load(tmp_path / "z.npy").any()


def test_table_lists_every_figure() -> None:
    r = {"machine": {"cpus": 2, "python": "3.11", "load_average_1m": 0.5},
         "kernel": {"width": 200, "height": 112, "max_depth": 50, "spheres": 484,
                    "bvh_samples_per_second_per_core": 1_400_000, "brute_force_samples_per_second_per_core": 180_000,
                    "bvh_speedup": 7.8, "bvh_samples_per_cpu_second": 1_400_000,
                    "brute_force_samples_per_cpu_second": 180_000},
         "distribution": {"spp": 200, "tile": 32, "chunk": 25, "tasks": 224, "one_consumer_samples_per_second": 1,
                          "two_consumers_samples_per_second": 2, "efficiency": 1.0, "efficiency_end_to_end": 0.95,
                          "efficiency_per_cpu_second": 0.97, "consumer_cpu_share_one": 0.99,
                          "consumer_cpu_share_two": 0.98},
         "producer": {"tasks_per_second": 9000}, "met": {"kernel": True, "distribution": True, "producer": True}}
    text = bench.table(r)
    for words in ("1,400,000", "7.8x", "efficiency", "9,000", ">= 5,000"):
        assert words in text
    assert "BELOW" not in text
