"""A pod list applied page by page (`Listing.page`: views, Job pods, gang keys and sort keys built while
the next page is in transit, #41 item 2) ends in the same model and the same TUI indexes as the same
events without the pages: the staged builds are taken only for the very object they were built of.

Each seed runs a first list and a relist over a random pod mix (bound, pending, finished, Job pods,
gang members) with what a real list does not do but an event stream may: a restart mid-list (a 410 on
`continue`), pods whose final place differs from the page they were read in, a copy of a pod in the
final list instead of the object the page held, watch events between pages (pods modified, deleted,
a node added and deleted), and a relist that keeps some pods' resourceVersions. Each page is cut to
its objects' identities once built (model/staged.py `slim`), so every object `Listed` takes from a
page must come from what was built of it.
"""

from __future__ import annotations

import copy
import random
import re
import subprocess
import sys
from pathlib import Path

import pytest

from kubeview.bench.model_cluster import node, pod
from kubeview.model.events import Listed, Listing, SourceEvent, WatchEvent
from kubeview.model.gangs.gang import KAI_ANNOTATION
from kubeview.model.jobs.views import JOB_NAME_LABEL
from kubeview.model.staged import IDENTITY
from kubeview.scheduling.feed import ModelFeed
from kubeview.snapshot.document import snapshot_json
from kubeview.tui.key_index import natural_sorted
from kubeview.tui.state import ClusterState

NODES = 8


def _pod(rng: random.Random, i: int, rv: int) -> dict:
    where = rng.choice([None, *(f"cpu-node-{n:04d}" for n in range(2, NODES)), "gpu-node-0000", "gpu-node-0001"])
    gpus = rng.choice((0, 0, 1, 2)) if where is not None and where.startswith("gpu") else 0
    obj = pod(i, rng.randrange(12), where, gpus, rv, phase=rng.choice(("Running", "Running", "Succeeded", "Failed")),
              restarts=rng.randrange(3), namespaces=3)
    labels, r = obj["metadata"]["labels"], rng.random()
    if r < 0.25:
        labels[JOB_NAME_LABEL] = f"job-{i % 4}"
    elif r < 0.4:
        obj["metadata"]["annotations"] = {KAI_ANNOTATION: f"gang-{i % 3}"}
    return obj


def _pages(objects: list[dict], rng: random.Random) -> list[list[dict]]:
    cuts = sorted(rng.sample(range(1, len(objects)), 4))
    return [objects[a:b] for a, b in zip([0, *cuts], [*cuts, len(objects)], strict=True)]


def _list(rng: random.Random, objects: list[dict], rv: int) -> list[SourceEvent]:
    """One list of `objects` as an informer emits it, with what an event stream may add."""
    events: list[SourceEvent] = [Listing("Pod", 0, 1.0)]
    if rng.random() < 0.5:  # a first attempt, cut short by a 410: its pages were of other objects
        events.append(Listing("Pod", 5, 1.0, [copy.deepcopy(o) for o in objects[:5]]))
        events.append(Listing("Pod", 0, 1.0))
    read = list(objects)
    for _ in range(2):  # two pairs of pods that the final list holds at each other's place
        i, j = rng.randrange(len(read)), rng.randrange(len(read))
        read[i], read[j] = read[j], read[i]
    pages = _pages(read, rng)
    n = 0
    for page in pages[:-1]:
        n += len(page)
        events.append(Listing("Pod", n, 1.0, page))
        r = rng.random()
        if r < 0.3:  # a watch event is decoded anew, never the page's dict (which the model slims)
            events.append(WatchEvent("Pod", "DELETED", copy.deepcopy(rng.choice(page))))
        elif r < 0.6:
            changed = copy.deepcopy(rng.choice(page))
            changed["metadata"]["resourceVersion"] = str(rv + 1_000_000 + n)
            changed["status"]["phase"] = "Succeeded"
            events.append(WatchEvent("Pod", "MODIFIED", changed))
        elif r < 0.8:
            events.append(WatchEvent("Node", rng.choice(("ADDED", "DELETED")), node(NODES + n % 2, 0)))
    final = list(objects)
    final[rng.randrange(len(final))] = copy.deepcopy(final[rng.randrange(len(final))])  # a copy, not the page's
    events.append(Listed("Pod", final, str(rv)))
    return events


def _same(paged: ClusterState, plain: ClusterState) -> None:
    a, b = paged.model, plain.model
    assert a.pods == b.pods
    assert a.node_pods.bound == b.node_pods.bound and a.node_pods.pending == b.node_pods.pending
    for name in ("requested", "limits", "allocatable"):
        assert (getattr(a.allocation(), name) == getattr(b.allocation(), name)).all()
    assert (a.pod_counts() == b.pod_counts()).all()
    assert a.jobs._pods == b.jobs._pods  # no Job objects listed: their pods are all the store has
    assert a.gangs.gangs() == b.gangs.gangs()
    assert snapshot_json(a, now=100.0) == snapshot_json(b, now=100.0)
    assert paged.pods_by_name.keys == plain.pods_by_name.keys and paged.pod_search == plain.pod_search


def _without_pages(event: SourceEvent) -> SourceEvent:
    return Listing(event.kind, event.items, event.as_of) if isinstance(event, Listing) else event


@pytest.mark.parametrize("seed", range(8))
def test_a_list_applied_by_pages_builds_what_one_listed_builds(seed: int) -> None:
    rng = random.Random(seed)
    paged, plain = ClusterState("t"), ClusterState("t")
    nodes = Listed("Node", [node(i, 8 if i < 2 else 0) for i in range(NODES)], "1")
    first = [_pod(rng, i, 100 + i) for i in range(60)]
    relisted = [copy.deepcopy(o) if rng.random() < 0.5 else _pod(rng, i, 500 + i) for i, o in enumerate(first)
                if rng.random() < 0.85] + [_pod(rng, i, 900 + i) for i in range(60, 75)]
    for events in ([nodes], _list(rng, first, 200), _list(rng, relisted, 1000)):
        before = dict(plain.model.pods), dict(paged.model.pods)
        unpaged = copy.deepcopy(events)  # the paged state owns its events: it slims each page once built
        for event, same in zip(events, unpaged, strict=True):
            held = dict(paged.model.pods)
            paged.emit(event)
            plain.emit(_without_pages(same))
            if isinstance(event, Listing):  # the figures stay pending: nothing of the list is held yet
                assert paged.model.pods == held
                assert all(set(o) == {"metadata"} and set(o["metadata"]) <= set(IDENTITY) for o in event.page)
            assert paged.model.pods == plain.model.pods
        _same(paged, plain)
        for key, view in plain.model.pods.items():  # a view kept over the relist is kept paged too
            if view is before[0].get(key):
                assert paged.model.pods[key] is before[1].get(key)
        # paged, a view may also be kept where an event changed the pod after its page was read: the
        # view held then is of the very resourceVersion listed (equal contents are asserted above)


def test_the_pods_index_after_a_list_holds_the_events_that_came_before_its_first_read() -> None:
    rng = random.Random(3)
    state = ClusterState("t")
    state.emit(Listed("Node", [node(i, 8 if i < 2 else 0) for i in range(NODES)], "1"))
    pods = [_pod(rng, i, 100 + i) for i in range(40)]
    state.emit(Listed("Pod", pods, "200"))
    state.emit(WatchEvent("Pod", "DELETED", pods[7]))
    state.emit(WatchEvent("Pod", "ADDED", _pod(rng, 99, 300)))
    assert state.pods_by_name.keys == natural_sorted(state.model.pods)  # read: built from the model now
    state.emit(WatchEvent("Pod", "DELETED", pods[8]))
    state.emit(WatchEvent("Pod", "ADDED", _pod(rng, 98, 301)))  # after the read: followed one by one
    assert state.pods_by_name.keys == natural_sorted(state.model.pods)
    assert set(state.pod_search) == set(state.model.pods) and len(state.model.pods) == 40


def test_the_extenders_feed_keeps_a_lists_pages_whole() -> None:
    """The extender's feed does not own its events (its assumed pods read a relist's objects after the
    model applied it): its model builds the pages ahead but never slims them."""
    rng = random.Random(5)
    pods = [_pod(rng, i, 100 + i) for i in range(30)]
    whole = copy.deepcopy(pods)
    relisted: list[dict] = []

    class Follower:
        def observe(self, obj: dict, deleted: bool, version: int) -> None:
            pass

        def relisted(self, objects: list[dict], version: int) -> None:
            relisted.extend(objects)

    feed = ModelFeed()
    feed.follow_pods(Follower())
    feed.apply(Listed("Node", [node(i, 8 if i < 2 else 0) for i in range(NODES)], "1"))
    for event in (Listing("Pod", 0, 1.0), Listing("Pod", 10, 1.0, pods[:10]), Listing("Pod", 20, 1.0, pods[10:20]),
                  Listed("Pod", pods, "200")):
        feed.apply(event)
    assert relisted == whole and pods == whole
    state = ClusterState("t")  # the same events, owned: the first two pages cut to their identities
    state.emit(Listed("Node", [node(i, 8 if i < 2 else 0) for i in range(NODES)], "1"))
    for event in (Listing("Pod", 0, 1.0), Listing("Pod", 10, 1.0, pods[:10]), Listing("Pod", 20, 1.0, pods[10:20]),
                  Listed("Pod", pods, "200")):
        state.emit(event)
    assert pods[20:] == whole[20:] and all(set(p) == {"metadata"} for p in pods[:20])
    assert state.model.pods == feed.model.pods


def test_a_list_cut_page_by_page_holds_half_the_memory_of_one_kept_whole(tmp_path) -> None:
    """#41 item 3, measured in processes of their own (scripts/list-apply-profile.py: 30,000 pods as 30
    JSON pages through the TUI's state, then the list dropped): RSS held above the nodes-listed state
    with the pages cut once built, against the same list kept whole until `Listed`. pymalloc's arenas
    are what differ (a page's dicts freed into memory the next page reuses), so the ratio is the claim."""
    script = Path(__file__).resolve().parents[2] / "scripts" / "list-apply-profile.py"

    def held(*flags: str) -> float:
        out = subprocess.run([sys.executable, str(script), "--nodes", "1000", "--pods", "30000", "--page", "1000",
                              *flags], capture_output=True, text=True, timeout=300, check=True).stdout
        found = re.search(r"list dropped \+([\d,]+)", out)
        assert found, out
        return float(found.group(1).replace(",", ""))

    cut, whole = held(), held("--keep-pages")
    assert cut < 0.7 * whole, (cut, whole)
