"""Nodes, the start screen: requested vs allocatable per node, GPU fit, conditions, taints.

Rows are recomputed per refresh with numpy (see `rows/nodes.py`); Enter opens the node.
"""

from __future__ import annotations

from textual import on
from textual.app import App, ComposeResult
from textual.binding import Binding

from kubeview.tui.format import GPU
from kubeview.tui.rows import nodes as rows
from kubeview.tui.rows.gpu_units import shaped
from kubeview.tui.screens.base import ClusterScreen
from kubeview.tui.screens.node_detail import NodeDetailScreen
from kubeview.tui.state import ClusterState
from kubeview.tui.widgets.table_rows import Rows
from kubeview.tui.widgets.virtual_table import VirtualTable

DETAIL = "node-detail"


def install_detail(app: App) -> NodeDetailScreen:
    """The node screen, installed once and reused: mounting a new screen costs a full layout."""
    if not app.is_screen_installed(DETAIL):
        app.install_screen(NodeDetailScreen(""), DETAIL)
    return app.get_screen(DETAIL)  # type: ignore[return-value]


class NodesScreen(ClusterScreen):
    SCREEN_TITLE = "Nodes"
    BINDINGS = [
        Binding("enter", "open", "Open node", id="nodes.open", tooltip="Show the node's pods and allocation"),
        Binding("o", "sort_next", "Sort", id="nodes.sort_next", tooltip="Sort by the next column"),
        Binding("O", "sort_reverse", "Reverse", show=False, id="nodes.sort_reverse",
                tooltip="Reverse the sort order"),
        Binding("C", "sort('cpu')", "Sort cpu", show=False, id="nodes.sort_cpu",
                tooltip="Sort by cpu requested (fullest first)"),
        Binding("M", "sort('memory')", "Sort memory", show=False, id="nodes.sort_memory",
                tooltip="Sort by memory requested (fullest first)"),
        Binding("U", "sort('gpu')", "Sort GPUs", show=False, id="nodes.sort_gpu",
                tooltip="Sort by GPUs requested (most first)"),
        Binding("F", "sort('fit')", "Sort GPU fit", show=False, id="nodes.sort_fit",
                tooltip="Sort by the largest GPU request that still fits"),
        Binding("N", "sort('name')", "Sort name", show=False, id="nodes.sort_name", tooltip="Sort by name"),
    ]

    def __init__(self) -> None:
        super().__init__()
        self.sort_column = "name"
        self.sort_reverse = False
        self.data = rows.NodeRows()
        self._builds = 0  # one more per `data`: with the filter, what the table's rows hold (`Rows.content`)
        self._search: dict[str, tuple[str, str]] = {}
        self._usage: dict = {}

    def compose_body(self) -> ComposeResult:
        table = VirtualTable(rows.COLUMNS, empty="no nodes (yet)")
        table.sort_column = self.sort_column
        yield table

    def main_widget(self) -> VirtualTable:
        return self.query_one(VirtualTable)

    def update_from_state(self, state: ClusterState) -> None:
        with state.lock:
            model = state.model
            self.data = rows.build(model, state.memo("gpu_fit", lambda: model.largest_fit(GPU)), self._usage,
                                   state.memo("gpu_shaped", lambda: shaped(model)), self.node_figures())
        self._builds += 1
        self._show()

    def _show(self) -> None:
        data = self.data
        names = rows.order(data, self.sort_column, rows.matches(data, self.filter_text, self._search))
        position = {n: i for i, n in enumerate(names)}
        table = self.main_widget()
        table.sort_column, table.sort_reverse = self.sort_column, self.sort_reverse
        table.rows = Rows(names, lambda name: rows.cells(data, name, table.width_of), position.get,
                          self.sort_reverse, lambda name: rows.stamp(data, name), (self._builds, self.filter_text),
                          lambda name: rows.measure_stamp(data, name))

    def apply_filter(self, text: str) -> None:
        self._show()

    def action_sort(self, column: str) -> None:
        if column == self.sort_column:
            self.sort_reverse = not self.sort_reverse
        else:
            self.sort_column, self.sort_reverse = column, False
        self._show()

    def action_sort_next(self) -> None:
        keys = [c.key for c in rows.COLUMNS]
        self.action_sort(keys[(keys.index(self.sort_column) + 1) % len(keys)])

    def action_sort_reverse(self) -> None:
        self.action_sort(self.sort_column)

    def action_open(self) -> None:
        key = self.main_widget().cursor_key
        if key is None:
            return
        # installed once and reused: mounting a new screen costs a full layout
        install_detail(self.app).show(str(key))
        self.app.push_screen(DETAIL)

    @on(VirtualTable.Selected)
    def _selected(self, event: VirtualTable.Selected) -> None:
        self.action_open()

    @on(VirtualTable.HeaderClicked)
    def _header_clicked(self, event: VirtualTable.HeaderClicked) -> None:
        self.action_sort(event.column)
