"""Pure parts of the TUI: the incremental row index, the state's coalescing, number formatting."""

from __future__ import annotations

import random

import pytest

from kubeview.cluster.synthetic import SyntheticSource
from kubeview.model.events import WatchEvent
from kubeview.tui import format as fmt
from kubeview.tui import key_index
from kubeview.tui.key_index import Cancelled, Contains, ItemValue, KeyIndex, natural_sorted
from kubeview.tui.state import ClusterState


def test_key_index_matches_a_full_sort_after_random_changes() -> None:
    rng = random.Random(5)
    values = {f"k{i:04d}": rng.randrange(20) for i in range(500)}
    texts = {k: f"{k} {'odd' if v % 2 else 'even'}" for k, v in values.items()}

    def expected(match=None) -> list[str]:  # noqa: ANN001
        keys = [k for k in values if match is None or match(k)]
        return sorted(keys, key=lambda k: (values[k], k))

    index = KeyIndex(values.__getitem__)
    index.rebuild(sorted(values))
    filtered = KeyIndex(values.__getitem__, Contains("odd", texts))
    filtered.rebuild(sorted(values))
    for _ in range(300):
        key = f"k{rng.randrange(600):04d}"
        if key in values and rng.random() < 0.3:
            del values[key], texts[key]
        else:
            values[key] = rng.randrange(20)
            texts[key] = f"{key} {'odd' if values[key] % 2 else 'even'}"
        index.update([key], values.__contains__)
        filtered.update([key], values.__contains__)
    assert index.keys == expected()
    assert filtered.keys == expected(lambda k: "odd" in texts[k])
    assert all(index.position(k) == i for i, k in enumerate(index.keys))
    assert index.position("nope") is None
    filtered.narrow(Contains("k00", texts))
    assert filtered.keys == expected(lambda k: "odd" in texts[k] and "k00" in texts[k])


def test_names_sort_naturally() -> None:
    """#24 item 16: pod names sorted character by character (`-86, -9, -90`)."""
    names = [("ns", f"app-{n}") for n in (90, 9, 86, 100)] + [("ns", "app-9-b"), ("ns", "app"), ("ms", "z-1")]
    want = [("ms", "z-1"), ("ns", "app"), ("ns", "app-9"), ("ns", "app-9-b"), ("ns", "app-86"), ("ns", "app-90"),
            ("ns", "app-100")]
    assert natural_sorted(names) == want
    index = KeyIndex()
    index.rebuild(natural_sorted(names[:3]))
    index.update(names[3:], lambda k: True)  # watch events insert in natural order too
    assert index.keys == want and all(index.position(k) == i for i, k in enumerate(want))
    by_len = KeyIndex(lambda k: len(k[1]))
    by_len.rebuild(want)
    assert by_len.keys[:3] == [("ms", "z-1"), ("ns", "app"), ("ns", "app-9")]  # ties: natural


def test_by_name_index_and_string_values() -> None:
    index = KeyIndex()
    index.rebuild([("a", "x"), ("b", "y")])
    index.update([("a", "w"), ("b", "y")], lambda k: True)
    assert index.keys == [("a", "w"), ("a", "x"), ("b", "y")]
    nodes = {("a", "w"): "node-2", ("a", "x"): "", ("b", "y"): "node-1"}
    by_node = KeyIndex(nodes.__getitem__)
    by_node.rebuild(index.keys)
    assert by_node.keys == [("a", "x"), ("b", "y"), ("a", "w")]


def test_bulk_values_over_many_chunks_sort_like_one_call_per_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(key_index, "CHUNK", 7)  # many steps, and a last one that is short
    rng = random.Random(3)
    items = {("ns", f"p{i:03d}"): {"node": f"n{rng.randrange(9)}", "cpu": -rng.randrange(4000)} for i in range(200)}
    keys = sorted(items)
    gone = {"node": "", "cpu": 0}
    deleted = ("ns", "p1-deleted")  # listed, then deleted while a worker sorts: sorts as `gone`
    texts = {k: k[1] for k in [*keys, deleted]}
    for field in ("node", "cpu"):
        bulk = KeyIndex(ItemValue(items, lambda p, f=field: p[f], gone), Contains("p1", texts))
        bulk.rebuild(sorted([*keys, deleted]))
        expected = sorted((k for k in [*keys, deleted] if "p1" in k[1]),
                          key=lambda k, f=field: (items.get(k, gone)[f], k))
        assert bulk.keys == expected and deleted in bulk
        assert all(bulk.position(k) == i for i, k in enumerate(bulk.keys)) and keys[5] not in bulk


def test_a_cancelled_rebuild_stops_at_its_next_step(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(key_index, "CHUNK", 10)
    asked = []

    def cancelled() -> bool:
        asked.append(1)
        return len(asked) > 3

    index = KeyIndex(lambda k: -k)
    with pytest.raises(Cancelled):
        index.rebuild(list(range(1000)), cancelled)
    assert len(asked) == 4 and index.keys == []  # stopped after three steps; nothing half-built shown


def test_a_burst_of_events_notifies_once_until_caught_up() -> None:
    src = SyntheticSource(nodes=10, pods=60, seed=1)
    state = ClusterState()
    calls = []
    state.notify = lambda: calls.append(1)
    for listed in src.lists():
        state.emit(listed)
    tracker = state.tracker("Pod")
    assert len(calls) == 1
    events = [e for _ in range(200) for e in src._random_event()]
    for event in events:
        state.emit(event)
    assert len(calls) == 1  # still one: the UI has not taken the first yet
    full, changed = state.take(tracker)
    assert full  # a new reader starts from scratch
    state.caught_up()
    current = [e for e in events if isinstance(e, WatchEvent) and e.kind == "Pod" and e.type == "MODIFIED"
               and (pod := state.model.pods.get((e.obj["metadata"]["namespace"], e.obj["metadata"]["name"])))
               and pod.resource_version == e.obj["metadata"]["resourceVersion"]]
    assert current
    for event in current[:3]:
        state.emit(event)  # already applied: no change, no notification
    assert len(calls) == 1
    state.emit(src._random_event()[0])
    assert len(calls) == 2
    full, changed = state.take(tracker)
    assert not full and len(changed) >= 1
    assert state.pods_by_name.keys == natural_sorted(state.model.pods)
    assert set(state.pod_search) == set(state.model.pods)


def test_formatting() -> None:
    assert [fmt.cpu(v) for v in (None, 0, 250, 1000, 1500, 96000, 123456)] == ["-", "0", "250m", "1", "1.5", "96", "123"]
    assert [fmt.mem(v) for v in (None, 512, 2**20 * 512, 2**30 * 1.5, 2**40 * 3)] == ["-", "512", "512Mi", "1.5Gi", "3Ti"]
    assert fmt.taints([{"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"},
                       {"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}]) == \
        "nvidia.com/gpu=present:NoSchedule, node.kubernetes.io/unschedulable:NoSchedule"
    assert fmt.bar(5, 10, 8).plain == "████····"
    assert fmt.bar(1, 16, 2).plain == "▏·"  # 1/16 of 2 cells: one eighth of a cell
    assert fmt.bar(12, 10, 4).plain == "████"  # overcommitted: full
    assert fmt.bar_cell(3, 8, 6, used=1.5, label="3/8").plain == "██▎··· 3/8 u19%"
    assert fmt.duration(65) == "1m05s" and fmt.rate(1_234_567) == "1.2M/s"


def test_a_new_sort_while_one_is_built_wins() -> None:
    import asyncio

    from tui_helpers import settle, wait_for

    from kubeview.tui.app import make_app
    from kubeview.tui.screens import indexed

    async def run() -> None:
        old = indexed.BACKGROUND_ROWS
        indexed.BACKGROUND_ROWS = 10  # the small cluster's pods are sorted in the worker too
        try:
            app = make_app(SyntheticSource(nodes=12, pods=80, seed=1))
            async with app.run_test(size=(120, 40)) as pilot:
                await settle(pilot)
                await pilot.press("2", "o", "o", "o", "o")  # name, node, phase, then cpu: each supersedes the last
                screen = app.screen
                await wait_for(pilot, lambda: not screen.busy, 10, "the worker")
                await pilot.pause()
                assert screen.sort_column == "cpu"
                keys = screen.index.keys
                cpus = [app.state.model.pods[k].requests.get("cpu", 0) for k in keys]
                assert len(keys) == 80 and cpus == sorted(cpus, reverse=True)
        finally:
            indexed.BACKGROUND_ROWS = old

    asyncio.run(run())


class _Clock:
    """``time`` for the app module: sleeping advances it, nothing else does. What yield_to_ui
    waits is then exact, not a wall-clock reading a loaded machine stretches (issue 23)."""

    def __init__(self) -> None:
        self.now, self.slept = 1000.0, 0.0

    def monotonic(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds
        self.slept += seconds


def test_background_work_waits_while_a_key_is_answered(monkeypatch: pytest.MonkeyPatch) -> None:
    from kubeview.tui import app as app_mod

    app = app_mod.make_app(SyntheticSource(nodes=2, pods=4, seed=1))
    clock = _Clock()
    monkeypatch.setattr(app_mod, "time", clock)
    app._ui_busy_until = 0.0
    app.yield_to_ui()  # no key pressed: no wait
    assert clock.slept == 0
    app._ui_busy_until = clock.now + 0.05
    app.yield_to_ui()
    assert clock.slept == pytest.approx(0.05)  # until the key is answered, and no longer
    monkeypatch.setattr(app_mod, "YIELD_AT_MOST", 0.05)
    clock.slept = 0.0
    app._ui_busy_until = clock.now + 60  # a key held down: the worker still moves on
    app.yield_to_ui()
    assert clock.slept == pytest.approx(0.05)


def test_a_filter_that_keeps_few_rows_finds_them_without_lookups() -> None:
    rng = random.Random(9)
    texts = {("ns", f"p{rng.randrange(10**6):06d}"): f"ns/p {rng.choice(['running', 'pending', 'failed'])}"
             for _ in range(3000)}
    by_key = sorted(texts)
    for needle in ("fail", "ns/p", "nothing"):
        match = Contains(needle, texts)
        expected = match.select(by_key)
        assert match.few(len(expected)) == expected  # the same rows, in key order
        if expected:
            assert match.few(len(expected) - 1) is None  # too many: the caller takes the ordered path
