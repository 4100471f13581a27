"""Tables on narrow screens keep names whole and the Pending reason's point; Enter opens a pod."""

from __future__ import annotations

from textual.widgets import Static
from tui_helpers import run_async, settle

from kubeview.cluster.synthetic import SyntheticSource
from kubeview.tui import format as fmt
from kubeview.tui.app import make_app
from kubeview.tui.format import reason_key
from kubeview.tui.rows.column import Column, fit_widths
from kubeview.tui.rows.pods import reason_cell
from kubeview.tui.screens.pod_detail import PodDetailScreen
from kubeview.tui.screens.pods import PodsScreen
from kubeview.tui.widgets.virtual_table import VirtualTable

REASON = ("0/5 nodes are available: 2 Insufficient nvidia.com/gpu, 3 Insufficient cpu. preemption: 0/5 nodes "
          "are available: 5 No preemption victims found for incoming pod.")


def shown_rows(table: VirtualTable) -> list[str]:
    return [table.render_line(y).text for y in range(1, len(table.rows) + 1)]


def test_widths_keep_names_whole_and_shrink_figures_first() -> None:
    cols = [Column("name", "NAME", 0, whole=True), Column("bar", "BAR", 18, least=9),
            Column("n", "N", 5), Column("rest", "REST", 0)]
    assert fit_widths(cols, 60, {"name": 12}) == [12, 18, 5, 21]  # room: the rest gets it
    assert fit_widths(cols, 35, {"name": 12}) == [12, 10, 5, 4]  # the bar gives first
    assert fit_widths(cols, 36, {"name": 12, "rest": 10}) == [12, 9, 5, 6]  # then the last flexible one
    assert fit_widths(cols, 30, {"name": 12}) == [8, 9, 5, 4]  # the name only when nothing else gives


def test_widths_keep_the_reason_point_before_names_take_their_full_width() -> None:
    cols = [Column("ns", "NS", 0, whole=True, least=12), Column("name", "NAME", 0, whole=True),
            Column("n", "N", 6, least=4), Column("why", "WHY", 0, point=fmt.reason_point)]
    want = {"ns": 21, "name": 42, "why": 18}
    assert fit_widths(cols, 100, want) == [21, 42, 6, 27]  # room: all whole, the reason gets the rest
    # narrower: the figure gives first, then the namespace down to its least, then the name; the
    # reason keeps its point (before: names whole, the reason cut to "3 Insufficie…")
    assert fit_widths(cols, 80, want) == [12, 42, 4, 18]
    assert fit_widths(cols, 60, want) == [12, 22, 4, 18]
    assert fit_widths(cols, 30, want) == [12, 6, 4, 4]  # both cannot fit: the reason gives before a name below 10


def test_a_cut_reason_keeps_whole_parts() -> None:
    assert reason_cell(REASON, 200) == REASON
    assert reason_cell(REASON, 49) == "3 Insufficient cpu, 2 Insufficient nvidia.com/gpu"  # its whole key
    assert reason_cell(REASON, 48) == "3 Insufficient cpu, +1 more"  # never a part cut mid-word
    assert reason_cell(REASON, 22) == "3 Insufficient cpu, …"  # "+1 more" does not fit: still says cut
    assert reason_cell(REASON, 18) == "3 Insufficient cpu, …"  # the point: the table cuts it with "…"
    # a pod asking for GPUs: its GPU part first (#24: train-c read "3 Insufficient cpu")
    assert reason_cell(REASON, 40, gpu_first=True) == "2 Insufficient nvidia.com/gpu, +1 more"
    assert fmt.reason_point(REASON) == fmt.reason_point("2 Insufficient nvidia.com/gpu, +1 more") == \
        "2 Insufficient nvidia.com/gpu, …"
    assert fmt.reason_point("0/3 nodes are available: 3 Insufficient cpu.") == "3 Insufficient cpu"
    assert fmt.cut_middle("kube-flannel-ds-6bmvt", 12) == "kube-f…6bmvt"


def test_the_reason_key_part() -> None:
    # what is short leads, most nodes first (kube-scheduler sorts the parts as strings)
    assert reason_key(REASON) == "3 Insufficient cpu, 2 Insufficient nvidia.com/gpu"
    assert reason_key("0/14 nodes are available: 1 Insufficient memory, 3 Insufficient cpu, "
                      "5 Insufficient nvidia.com/gpu, 9 node(s) didn't match Pod's node affinity/selector.") == \
        ("5 Insufficient nvidia.com/gpu, 3 Insufficient cpu, 1 Insufficient memory, "
         "9 node(s) didn't match Pod's node affinity/selector")
    assert reason_key("Unschedulable") == "Unschedulable"


def test_the_reason_key_drops_the_dra_postfilter_sentence() -> None:
    """kube-scheduler v1.36 (tests/fixtures/k8s/dra and its events) put the DRA PostFilter's sentence between
    the nodes' reasons and the preemption one; v1.37.2 (tests/realk8s/test_dra_real_scheduler.py) does
    not. The key is the nodes' reasons either way."""
    tail = " preemption: 0/8 nodes are available: 8 Preemption is not helpful for scheduling."
    want = "6 node(s) didn't match Pod's node affinity/selector, 2 cannot allocate all claims"
    body = "0/8 nodes are available: 2 cannot allocate all claims, 6 node(s) didn't match Pod's node affinity/selector."
    for between in (" still not schedulable,", " no new claims to deallocate,", ""):  # 1.36, 1.36, 1.37
        assert reason_key(body + between + tail) == want


@run_async
async def test_node_names_are_whole_and_distinct_at_100x30(small_cluster: SyntheticSource) -> None:
    app = make_app(small_cluster)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        table = app.screen.query_one(VirtualTable)
        lines = shown_rows(table)
        names = [line.split()[0] for line in lines]
        assert names == [str(table.rows.key(i)) for i in range(len(table.rows))]  # whole, no `…`
        assert len(set(names)) == 12
        gpu_line = next(line for line in lines if line.startswith("gpu-node-04"))
        assert "3/8" in gpu_line  # the figure after a shortened bar is still there


@run_async
async def test_a_cut_pending_reason_shows_its_key_part_and_enter_shows_it_whole(
        small_cluster: SyntheticSource) -> None:
    app = make_app(small_cluster)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.press("2", "slash", *"pending", "enter")
        await settle(pilot)
        table = app.screen.query_one(VirtualTable)
        key = table.cursor_key
        pod = app.state.model.pods[key]
        line = table.render_line(1).text
        assert "nodes are available" not in line and "Insuffici" in line  # the point, not the prefix

        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, PodDetailScreen) and app.screen.key == key
        text = str(app.screen.query_one("#pod-text", Static).render())
        assert pod.pending_reason in " ".join(text.split())  # whole, however it wraps
        for expected in (f"Name       {pod.name}", "Phase      Pending", "Node       <none>", "cpu",
                         "memory", "PodScheduled=False"):
            assert expected in text, expected
        cpu_line = next(line for line in text.splitlines() if line.strip().startswith("cpu"))
        assert cpu_line.split()[1] == fmt.cpu(pod.requests["cpu"])  # the request, in cores
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, PodsScreen)


@run_async
async def test_a_running_pod_shows_its_node_and_requests(small_cluster: SyntheticSource) -> None:
    app = make_app(small_cluster)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("2", "enter")
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, PodDetailScreen)
        pod = app.state.model.pods[screen.key]
        text = str(screen.query_one("#pod-text", Static).render())
        assert f"Node       {pod.node}" in text and "PodScheduled=True" in text
        memory_line = next(line for line in text.splitlines() if line.strip().startswith("memory"))
        assert memory_line.split()[1] == fmt.mem(pod.requests["memory"])  # with its unit (Mi, Gi)
