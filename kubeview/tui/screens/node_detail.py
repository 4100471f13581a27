"""One node: conditions, taints, the "Allocated resources" block, what its GPUs are made of (shared
replicas, MIG slices, another vendor's, an NVLink domain: the "GPUs" block), its DRA devices, and the
pods counted against it.

On the embedded cluster `P` preempts the node (asks first): its pods are killed with
`DisruptionTarget`, the node goes, and controllers replace what they own (a spot node reclaimed).
"""

from __future__ import annotations

from dataclasses import replace

from textual.app import ComposeResult
from textual.binding import Binding

from kubeview.cluster.source import Preempts
from kubeview.model.cluster import ClusterModel
from kubeview.tui import format as fmt
from kubeview.tui.rows import pods as pod_rows
from kubeview.tui.rows.devices import node_devices
from kubeview.tui.rows.gpu_block import node_block
from kubeview.tui.rows.gpu_units import NodeUnit, node_unit, shaped
from kubeview.tui.screens.base import ClusterScreen
from kubeview.tui.screens.prompts import Confirm
from kubeview.tui.state import ClusterState
from kubeview.tui.widgets.allocated_resources import AllocatedResources, NodeFigures
from kubeview.tui.widgets.cluster_header import ClusterHeader
from kubeview.tui.widgets.device_table import DeviceTableView
from kubeview.tui.widgets.gpu_shape import GpuShapeView
from kubeview.tui.widgets.table_rows import Rows
from kubeview.tui.widgets.virtual_table import VirtualTable

SHOWN = ("cpu", "memory", "ephemeral-storage", "pods")


class NodeDetailScreen(ClusterScreen):
    SCREEN_TITLE = "Node"
    BINDINGS = [Binding("escape", "back", "Back", id="node.back", tooltip="Back to the nodes"),
                Binding("P", "preempt", "Preempt node", id="node.preempt",
                        tooltip="Embedded cluster: kill the node's pods (DisruptionTarget) and remove the node")]

    def __init__(self, node: str) -> None:
        super().__init__()
        self.node = node
        self.SCREEN_TITLE = f"Node {node}"

    def show(self, node: str) -> None:
        """Reuse this screen for another node (mounting a new screen costs a full layout)."""
        self.node = node
        self.SCREEN_TITLE = f"Node {node}"
        self._stale = True
        headers = self.query(ClusterHeader)
        if headers:
            headers.first().screen_title = self.SCREEN_TITLE
            table = self.main_widget()
            table.cursor_key, table.follow_key = None, False
            table.cursor = 0

    def compose_body(self) -> ComposeResult:
        yield AllocatedResources()
        yield GpuShapeView()
        yield DeviceTableView()
        yield VirtualTable(pod_rows.COLUMNS, empty="no pods on this node")

    def main_widget(self) -> VirtualTable:
        return self.query_one(VirtualTable)

    def update_from_state(self, state: ClusterState) -> None:
        with state.lock:
            model = state.model
            shapes = state.memo("gpu_shaped", lambda: shaped(model))
            figures = node_figures(model, self.node, node_unit(shapes.nodes[self.node])
                                   if self.node in shapes.nodes else None)
            if figures is not None:  # requests from a partial pod list are not a fact (#41)
                figures = replace(figures, fresh=self.node_figures())
            pods = state.model.pods_on(self.node)
            devices = node_devices(state.model, self.node)
            held = pod_rows.dra_held(state.model)
            gpus = node_block(model, self.node, shapes)
        self.query_one(GpuShapeView).block = gpus
        self.query_one(DeviceTableView).table = devices
        by_key = {p.key: p for p in pods}
        self.query_one(AllocatedResources).node = figures
        table = self.main_widget()
        table.rows = Rows([p.key for p in pods], lambda k: pod_rows.cells(by_key.get(k), k, table.width_of, held))

    def on_resize(self) -> None:
        """Short (80x24): the GPUs block says less (no column headers, no carves), the pods keep rows."""
        self.set_class(self.size.height < 30, "-short")
        gpus = self.query(GpuShapeView)
        if gpus:
            gpus.first().short = self.has_class("-short")

    def apply_filter(self, text: str) -> None:
        self.refresh_data()

    def action_back(self) -> None:
        if self.filter_text:  # a filter first: "Escape clears", then a second one goes back
            self.action_clear_filter()
            return
        self.app.pop_screen()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "preempt":  # only the embedded cluster can lose a node on request
            return isinstance(self.kv.source, Preempts)
        return super().check_action(action, parameters)

    def action_preempt(self) -> None:
        node = self.node
        with self.state.lock:
            pods = len(self.state.model.pods_on(node))

        def answered(yes: bool | None) -> None:
            if yes:
                self.kv.banner = (f"preempting node {node}…", "")
                self.kv.preempt(node)
            else:
                self.kv.banner = (f"node {node} left alone.", "ok")

        self.app.push_screen(Confirm(f"Preempt node {node}? Its {pods} pod(s) are killed and the node removed."),
                             answered)


def node_figures(model: ClusterModel, node: str, unit: NodeUnit | None = None) -> NodeFigures | None:
    """The block's figures for `node` (call under the state's lock); `unit`: its GPUs' own unit where
    they are shared replicas, MIG slices or another vendor's (rows/gpu_units.py): the fit is in it."""
    a = model.allocation()
    try:
        i = a.nodes.index(node)
    except ValueError:
        return None
    view = a.views[i]
    resources = [r for r in SHOWN if r in a.resources]
    resources += [r for r in a.resources if r not in SHOWN and (a.allocatable[i, a.resources.index(r)]
                                                               or a.requested[i, a.resources.index(r)])]
    cols = [a.resources.index(r) for r in resources]
    usage = model.usage.nodes.get(node)

    def used(res: str) -> float | None:
        if usage is None:
            return None
        if res == "cpu":
            return usage.cpu
        if res == "memory":
            return usage.memory
        if res == fmt.GPU and usage.gpu_util:
            return sum(usage.gpu_util) / 100
        return None

    fit_resource = unit.resource if unit is not None else fmt.GPU
    gpu_col = a.column(fit_resource)
    has_gpu = gpu_col is not None and a.allocatable[i, gpu_col] > 0
    return NodeFigures(
        name=node,
        resources=tuple(resources),
        allocatable=tuple(int(a.allocatable[i, c]) for c in cols),
        requested=tuple(int(a.requested[i, c]) for c in cols),
        limits=tuple(int(a.limits[i, c]) for c in cols),
        used=tuple(used(r) for r in resources),
        conditions=fmt.conditions(view.conditions, view.unschedulable).plain,
        taints=fmt.taints(view.taints),
        pods=int(model.pod_counts()[i]),
        gpu_fit=int(model.largest_fit(fit_resource)[i]) if has_gpu else None,
        fit_unit=unit.unit if unit is not None else "GPU",
    )
