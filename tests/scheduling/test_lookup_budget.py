"""The pure bounds on what a caller of the extender can cause: the token bucket and negative cache
of API lookups (lookup_budget.py) and the wait slots (wait_slots.py), on a clock the test moves."""

from __future__ import annotations

import pytest
from builders import FakeClock

from kubeview.scheduling.lookup_budget import LookupBudget, LookupLimits, NegativeCache, TokenBucket
from kubeview.scheduling.wait_slots import WaitLimits, WaitSlots


def test_the_bucket_gives_its_burst_then_its_rate() -> None:
    clock = FakeClock()
    bucket = TokenBucket(rate=4.0, burst=10.0, clock=clock)
    assert sum(bucket.take() for _ in range(100)) == 10  # full at the start: the burst, then nothing
    assert not bucket.available()
    clock.now += 0.5  # half a second at 4/s: two tokens
    assert bucket.available()
    assert sum(bucket.take() for _ in range(100)) == 2
    clock.now += 3600  # an hour idle fills it to the burst, not beyond
    assert sum(bucket.take() for _ in range(100)) == 10


def test_the_bucket_bounds_any_schedule_of_takers() -> None:
    """Over any span, what was taken is at most burst + rate x span (the bound the real-plane test asserts)."""
    clock = FakeClock()
    bucket = TokenBucket(rate=20.0, burst=40.0, clock=clock)
    start, taken = clock.now, 0
    for step in range(5000):
        clock.now += (step % 7) * 0.001
        taken += bucket.take()
    assert taken <= 40 + 20 * (clock.now - start)
    assert taken >= 20 * (clock.now - start)  # and it does give that much to a caller that keeps asking


def test_available_does_not_spend() -> None:
    bucket = TokenBucket(rate=1.0, burst=1.0, clock=FakeClock())
    assert all(bucket.available() for _ in range(5))
    assert bucket.take() and not bucket.available() and not bucket.take()


def test_the_negative_cache_forgets_after_its_ttl_and_beyond_its_size() -> None:
    clock = FakeClock()
    cache = NegativeCache(ttl=5.0, max_entries=3, clock=clock)
    cache.add(("ns", "a", "u1"))
    clock.now += 4.9
    assert ("ns", "a", "u1") in cache and ("ns", "a", "u2") not in cache
    clock.now += 0.2
    assert ("ns", "a", "u1") not in cache
    for name in "bcde":
        cache.add(("ns", name, "u"))
    assert len(cache) == 3 and ("ns", "b", "u") not in cache  # the oldest went first
    assert all(("ns", name, "u") in cache for name in "cde")


def test_limits_refuse_what_would_disable_the_bound() -> None:
    for bad in ({"rate": 0}, {"burst": -1}, {"absent_ttl": 0}, {"absent_max": 0}):
        with pytest.raises(ValueError, match="must be above 0"):
            LookupLimits(**bad)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="node-names must be at least 1"):
        WaitLimits(node_names=0)
    budget = LookupBudget(LookupLimits(rate=3, burst=7, absent_ttl=2, absent_max=9), FakeClock())
    assert (budget.bucket.rate, budget.bucket.burst, budget.absent.ttl, budget.absent.max_entries) == (3, 7, 2, 9)


def test_wait_slots_never_block_and_never_go_over() -> None:
    slots = WaitSlots(2)
    assert slots.acquire() and slots.acquire()
    assert not slots.free() and not slots.acquire() and slots.held == 2
    slots.release()
    assert slots.free() and slots.acquire() and not slots.acquire()
