"""No partial figure shown as a fact (#41 item 1), on the real API server with the pod list held mid-way.

kubeview's TUI lists the plane through a proxy (held_pages.py) that holds the second page of the pod
list until the test releases it, with pages of 10 objects and 24 pods of ours on two GPU nodes of ours:
while the page is held, kubeview has read 10 pods and knows more are coming. Then the header, the
node rows and the Packing what-if must show no figure that counts pods as a number ("…", and what it
waits for); once released, the real figures. `snapshot`'s and `fit`'s initial sync (`commands.snapshot
.sync`) must not return while the page is held, and then count every pod.

After a relist the same rule holds: the API server is killed, etcd compacted past what kubeview saw and
the API server started again, so kubeview's watch is answered 410 and it relists, its second pod page
held again: the figures are the last complete ones, dimmed, "as of" when the link went down.

With KUBEVIEW_SHOTS=DIR the screens while listing are saved there (screenshots/listing*.svg come from it).
"""

from __future__ import annotations

import asyncio
import base64
import io
import os
import re
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from kubernetes import client
from rich.text import Text

from kubeview.cluster.kube.source import KubeSource, WatchSettings
from kubeview.commands.snapshot import sync
from kubeview.model.cluster import ClusterModel
from kubeview.tui.app import KubeviewApp, make_app
from kubeview.tui.widgets.allocated_resources import AllocatedResources
from kubeview.tui.widgets.cluster_header import ClusterHeader
from kubeview.tui.widgets.virtual_table import VirtualTable

from .held_pages import HeldPages
from .objects import add_node, api, ensure_namespace, wait_nodes_ready
from .plane import Plane
from .procs import wait_until

NS = "pending-figures"
NODES = ("pf-node-0", "pf-node-1")
PODS = 24  # 12 per node, 250m each (3 cores of 16: 19%), the first 2 on each node asking 1 GPU (2 of 4 free)
PAGED = WatchSettings(page_size=10, connect_timeout=5.0, error_backoffs=(0.2, 0.5, 1.0))
GPU = "nvidia.com/gpu"


@pytest.fixture(scope="module")
def core(plane: Plane) -> Iterator[client.CoreV1Api]:
    """Our two GPU nodes and 24 pods bound to them; removed afterwards (the plane is shared: a later test's
    GPU pod must not land on them)."""
    core = client.CoreV1Api(api(plane.kubeconfig))
    ensure_namespace(core, NS)
    for name in NODES:
        add_node(core, name, {"cpu": "16", "memory": "64Gi", "pods": "110", GPU: "4"})
    wait_nodes_ready(core, list(NODES))
    for i in range(PODS):
        node = NODES[i % 2]
        asks = {"cpu": "250m", **({GPU: "1"} if i < 4 else {})}
        c = client.V1Container(name="c", image="registry.k8s.io/pause:3.10",
                               resources=client.V1ResourceRequirements(requests=asks, limits={GPU: "1"} if i < 4 else None))
        core.create_namespaced_pod(NS, client.V1Pod(
            metadata=client.V1ObjectMeta(name=f"pf-{i:02d}"),
            spec=client.V1PodSpec(containers=[c], node_name=node, termination_grace_period_seconds=0)))
    yield core
    core.delete_collection_namespaced_pod(NS, grace_period_seconds=0)
    for name in NODES:
        core.delete_node(name)


@pytest.fixture
def proxy(plane: Plane, core: client.CoreV1Api) -> Iterator[HeldPages]:  # noqa: ARG001
    with HeldPages(plane) as p:
        yield p


def header_lines(app: KubeviewApp) -> list[str]:
    header = app.screen.query_one(ClusterHeader)
    s = header.summary
    return [header._line1(s).plain, header._line2(s).plain, header._line3(s).plain]


def row(table: VirtualTable, key: str) -> list[str]:
    return [c.plain if isinstance(c, Text) else str(c) for c in table.rows.cells(key)]


def rendered(app: KubeviewApp, widget: type) -> str:
    """What a widget of the current screen draws, as text."""
    from rich.console import Console

    console = Console(width=120, record=True, file=io.StringIO())
    console.print(app.screen.query_one(widget).render())
    return console.export_text()


def no_number(text: str) -> bool:
    """No digit left once the words saying what is being listed ("listing Pod 10…") are taken out."""
    return not re.search(r"\d", re.sub(r"listing Pod [\d,]+…", "", text))


async def wait_for(pilot, predicate, what: str, timeout: float = 60) -> None:  # noqa: ANN001
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not predicate():
        if loop.time() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await pilot.pause(0.05)


def test_the_tui_shows_no_figure_from_a_partial_pod_list(plane: Plane, core: client.CoreV1Api, proxy: HeldPages,
                                                         tmp_path: Path) -> None:
    source = KubeSource(str(proxy.kubeconfig(tmp_path / "held.kubeconfig")), settings=PAGED)
    app = make_app(source)
    shots = os.environ.get("KUBEVIEW_SHOTS")

    async def body() -> None:
        async with app.run_test(size=(120, 32)) as pilot:
            def only_pods_listing() -> bool:  # every other kind listed (the DRA kinds too): Pod is what is held
                with app.state.lock:
                    return app.state.model.synced >= set(source.kinds) - {"Pod"} and app.version == app.state.model.version

            # the first page (10 pods) read, the second held at the proxy: shown once the header says so
            await wait_for(pilot, lambda: proxy.held.is_set() and only_pods_listing() and "listing Pod 10…" in
                           header_lines(app)[0] and NODES[0] in app.screen.query_one(VirtualTable).rows.keys,
                           "the first pod page shown")
            with app.state.lock:
                assert "Pod" not in app.state.model.synced and app.state.model.listing["Pod"] == 10
            line1, line2, line3 = header_lines(app)
            assert "… pods … pending" in line1 and re.search(r"\d+ nodes", line1)  # nodes are listed: a fact
            assert line2.split() == ["cpu", "…", "│", "mem", "…", "│", "GPU", "…"]
            assert line3.strip() == "GPUs … (listing Pod 10…)"
            assert no_number(line2) and no_number(line3)
            table = app.screen.query_one(VirtualTable)
            for name in NODES:  # allocatable is the node's own (a fact); what counts pods is "…"
                assert row(table, name)[1:6] == ["…/16", "…/64Gi", "…/4", "…/110", "…"], row(table, name)
            if shots:
                app.save_screenshot("listing.svg", shots)
            await pilot.press("enter")  # the node's own screen: its requests count pods too
            await wait_for(pilot, lambda: "Allocated resources (listing Pod 10…)" in rendered(app, AllocatedResources),
                           "the node screen")
            block = rendered(app, AllocatedResources)
            assert "Pods: …" in block and "Largest GPU request that fits: …" in block
            assert [line.split()[:2] for line in block.splitlines() if line.strip().startswith("cpu")] == [["cpu", "…"]]
            await pilot.press("escape")
            await pilot.press("4")  # Packing
            await wait_for(pilot, lambda: app.current_mode == "packing" and "no what-if from a partial list "
                           "(listing Pod 10…)" in str(app.screen.query_one("#whatif-summary").render()), "Packing")
            assert app.screen.whatif is None and len(app.screen.query_one("#whatif", VirtualTable).rows) == 0
            if shots:
                app.save_screenshot("listing-packing.svg", shots)
            await pilot.press("1")

            proxy.release()
            await wait_for(pilot, lambda: "listing" not in header_lines(app)[0] and app.current_mode == "nodes"
                           and row(app.screen.query_one(VirtualTable), NODES[0])[1] != "…/16", "the pods listed")
            pods = core.list_pod_for_all_namespaces().items
            nodes = core.list_node().items
            line1, line2, line3 = header_lines(app)
            assert f"{len(nodes)} nodes {len(pods)} pods" in line1
            assert "cpu …" not in line2 and "GPUs …" not in line3
            table = app.screen.query_one(VirtualTable)
            for name in NODES:
                cells = row(table, name)
                assert cells[1].endswith("19%") and cells[3].strip().endswith("2/4") and cells[4] == "12/110" \
                    and cells[5] == "2", cells

    try:
        asyncio.run(body())
    finally:
        source.close()


def test_snapshot_and_fit_wait_for_every_page(plane: Plane, core: client.CoreV1Api, proxy: HeldPages,
                                              tmp_path: Path) -> None:
    source = KubeSource(str(proxy.kubeconfig(tmp_path / "held.kubeconfig")), settings=PAGED)
    got: list[ClusterModel] = []
    thread = threading.Thread(target=lambda: got.append(sync(source)), daemon=True)
    try:
        thread.start()
        wait_until(proxy.held.is_set, 60, "the second pod page held at the proxy")
        assert not got  # it cannot have returned: the pod list's second page has not been answered
        proxy.release()
        thread.join(timeout=60)
        assert got, "sync did not return after the page was released"
    finally:
        source.close()
    model = got[0]
    assert len(model.pods) == len(core.list_pod_for_all_namespaces().items)
    assert {k for k in model.pods if k[0] == NS} == {(NS, f"pf-{i:02d}") for i in range(PODS)}


def dim(text: Text | str) -> bool:
    """The whole text is dimmed (a stale figure)."""
    return isinstance(text, Text) and any("dim" in str(sp.style) and sp.start == 0 and sp.end >= len(text.plain.rstrip())
                                          for sp in text.spans)


def test_after_a_relist_the_figures_are_the_last_complete_ones_marked_as_of(
        plane: Plane, core: client.CoreV1Api, tmp_path: Path) -> None:
    with HeldPages(plane, armed=False) as proxy:
        source = KubeSource(str(proxy.kubeconfig(tmp_path / "held.kubeconfig")), settings=PAGED)
        app = make_app(source)
        shots = os.environ.get("KUBEVIEW_SHOTS")

        def header() -> tuple[ClusterHeader, list[Text]]:
            h = app.screen.query_one(ClusterHeader)
            return h, [h._line1(h.summary), h._line2(h.summary), h._line3(h.summary)]

        def node_cells() -> list:
            return list(app.screen.query_one(VirtualTable).rows.cells(NODES[0]))

        async def body() -> None:
            async with app.run_test(size=(120, 32)) as pilot:
                await wait_for(pilot, lambda: header()[0].summary.fresh().fact and NODES[0] in
                               app.screen.query_one(VirtualTable).rows.keys, "the first list shown")
                listed = [t.plain for t in header()[1]]
                assert not dim(header()[1][1]) and not dim(node_cells()[1])
                plane.stop_apiserver(sig=9)
                pods = next(i for i in source._informers if i.spec.kind == "Pod")
                await wait_for(pilot, lambda: "reconnecting" in header()[1][0].plain and pods.broken_at is not None,
                               "reconnecting, the pods' watch broken")
                h, (line1, line2, line3) = header()
                assert h.summary.fresh().why == "reconnecting" and dim(line2) and dim(line3)
                assert dim(node_cells()[1]) and node_cells()[1].plain.endswith("19%")  # kept, not current
                # one revision beyond anything kubeview saw, compacted: its watch will be answered 410
                plane.etcd("/v3/kv/put", {"key": base64.b64encode(b"kubeview-realk8s/bump").decode(), "value": "eA=="})
                plane.compact_etcd()
                proxy.arm()
                restarted = time.time()
                plane.start_apiserver()
                await wait_for(pilot, lambda: proxy.held.is_set() and "Pod 10…" in header()[1][0].plain,
                               "the relist's first pod page shown", timeout=90)
                h, (line1, line2, line3) = header()
                assert re.search(r"figures as of \d\d:\d\d:\d\d, relisting .*Pod 10…", line1.plain), line1.plain
                assert h.summary.fresh().as_of < restarted  # as of when the watch broke, not the relist's start
                assert line2.plain == listed[1] and line3.plain == listed[2]  # the last complete figures...
                assert dim(line2) and dim(line3)  # ...not current
                cells = node_cells()
                assert cells[1].plain.endswith("19%") and cells[4].plain == "12/110" and all(dim(c) for c in cells[1:6])
                if shots:
                    app.save_screenshot("relisting.svg", shots)
                await pilot.press("4")
                await wait_for(pilot, lambda: app.current_mode == "packing" and "relisting" in
                               str(app.screen.query_one("#whatif-summary").render()), "Packing as of")
                assert "as of " in str(app.screen.query_one("#whatif-summary").render())
                await pilot.press("1")
                proxy.release()
                await wait_for(pilot, lambda: header()[0].summary.fresh().fact and app.current_mode == "nodes"
                               and not dim(node_cells()[1]), "the relist done, the link live")
                assert "as of" not in header()[1][0].plain and not dim(header()[1][1])

        try:
            asyncio.run(body())
        finally:
            source.close()
            if "kube-apiserver" not in plane.procs:  # the test failed while it was down: the next tests need it
                plane.start_apiserver()
