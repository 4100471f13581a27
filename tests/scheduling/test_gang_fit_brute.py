"""fit_gang() against a search over every placement, on many seeded random small clusters.

The search knows nothing of `evaluate`: plain integers per node (free cpu, GPUs, pod slots), a taint
and a label. Members with equal requests and constraints: greedy placement is exact (each node takes
floor(free / request) whatever the order), so fits and room must equal the search's. Unequal members:
greedy is what kube-scheduler does and may miss a placement, so the guarantees are that its placement
is valid, its room never exceeds the best, and it never says "fits" when no placement exists.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

import pytest
from builders import cluster, node, pod

from kubeview.scheduling import POLICIES, PackingConfig
from kubeview.scheduling.gang_fit import fit_gang

TAINT = {"key": "dedicated", "value": "infer", "effect": "NoSchedule"}
TOLERATE = [{"key": "dedicated", "operator": "Exists"}]


@dataclass
class Spec:
    """A member as the search sees it."""

    cpu: int  # millicores
    gpu: int
    pool: str | None  # nodeSelector pool=...
    tolerates: bool

    def view(self, name: str):
        return pod(name, cpu=f"{self.cpu}m", gpu=self.gpu, node_selector={"pool": self.pool} if self.pool else None,
                   tolerations=TOLERATE if self.tolerates else None)


@dataclass
class Free:
    name: str
    cpu: int
    gpu: int
    pods: int
    pool: str
    tainted: bool

    def takes(self, m: Spec, cpu: int, gpu: int, pods: int) -> bool:
        return ((not self.tainted or m.tolerates) and (m.pool is None or m.pool == self.pool)
                and cpu + m.cpu <= self.cpu and gpu + m.gpu <= self.gpu and pods + 1 <= self.pods)


def random_cluster(rng: random.Random):
    nodes, frees, used = [], [], []
    for i in range(rng.randint(2, 4)):
        name, gpus, cores = f"n{i}", rng.choice([0, 1, 2, 4, 8]), rng.randint(1, 4)
        pods, pool, tainted = rng.randint(2, 6), rng.choice(["x", "y"]), rng.random() < 0.2
        nodes.append(node(name, cpu=str(cores), gpu=gpus, pods=pods, labels={"pool": pool},
                          taints=[TAINT] if tainted else None))
        g = rng.randint(0, gpus)  # what a pod already there uses
        c = rng.randint(0, cores * 1000 - 100) // 100 * 100
        if g or c:
            used.append(pod(f"old-{i}", cpu=f"{c}m" if c else None, gpu=g, node_name=name))
        frees.append(Free(name, cores * 1000 - c, gpus - g, pods - (1 if g or c else 0), pool, tainted))
    return cluster(nodes, used), frees


def random_spec(rng: random.Random) -> Spec:
    return Spec(cpu=rng.choice([100, 500, 1000, 1500]), gpu=rng.choice([0, 1, 1, 2, 4]),
                pool=rng.choice([None, None, "x"]), tolerates=rng.random() < 0.3)


def best(frees: list[Free], specs: list[Spec]) -> int:
    """Most members placeable together, by search (members may be left out)."""
    load = {f.name: [0, 0, 0] for f in frees}
    top = 0

    def go(i: int, placed: int) -> None:
        nonlocal top
        top = max(top, placed)
        if i == len(specs) or placed + len(specs) - i <= top:
            return
        m = specs[i]
        for f in frees:
            c, g, p = load[f.name]
            if f.takes(m, c, g, p):
                load[f.name] = [c + m.cpu, g + m.gpu, p + 1]
                go(i + 1, placed + 1)
                load[f.name] = [c, g, p]
        go(i + 1, placed)
    go(0, 0)
    return top


def valid(frees: list[Free], specs: list[Spec], placement: list[tuple[int, str]]) -> bool:
    load = {f.name: [0, 0, 0] for f in frees}
    by_name = {f.name: f for f in frees}
    for i, where in placement:
        c, g, p = load[where]
        if not by_name[where].takes(specs[i], c, g, p):
            return False
        load[where] = [c + specs[i].cpu, g + specs[i].gpu, p + 1]
    return True


@pytest.mark.parametrize("policy", POLICIES)
def test_identical_members_agree_exactly_with_the_search(policy: str) -> None:
    rng = random.Random(f"identical-{policy}")
    fits_seen = {True: 0, False: 0}
    for _ in range(150):
        alloc, frees = random_cluster(rng)
        spec = random_spec(rng)
        size = rng.randint(1, 6)
        min_count = rng.randint(1, size)
        specs = [spec] * size
        fit = fit_gang(alloc, [spec.view(f"m{i}") for i in range(size)], min_count, PackingConfig(policy=policy))
        top = best(frees, specs)
        assert fit.room == min(top, size)
        assert fit.fits == (top >= min_count)
        fits_seen[fit.fits] += 1
        if fit.fits:
            assert valid(frees, specs, [(int(p.name[1:]), n) for p, n in fit.placement])
    assert min(fits_seen.values()) > 20  # both answers were exercised


@pytest.mark.parametrize("policy", POLICIES)
def test_unequal_members_greedy_is_valid_and_never_promises_too_much(policy: str) -> None:
    rng = random.Random(f"unequal-{policy}")
    for _ in range(150):
        alloc, frees = random_cluster(rng)
        size = rng.randint(2, 6)
        specs = [random_spec(rng) for _ in range(size)]
        min_count = rng.randint(1, size)
        fit = fit_gang(alloc, [s.view(f"m{i}") for i, s in enumerate(specs)], min_count, PackingConfig(policy=policy))
        top = best(frees, specs)
        assert fit.room <= top
        assert not fit.fits or top >= min_count
        placed = [(int(m.pod.name[1:]), m.node) for m in fit.members if m.node is not None]
        assert len(placed) == fit.room and valid(frees, specs, placed)
