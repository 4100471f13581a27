"""`?`: every key of every screen, gathered from the bindings themselves (so it cannot go stale)."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static


def _key_label(b: Binding) -> str:
    names = {"colon": ":", "question_mark": "?", "slash": "/", "plus": "+", "minus": "-", "equals_sign": "=",
             "right_square_bracket": "]", "left_square_bracket": "[", "escape": "Esc", "enter": "Enter",
             "pageup": "PgUp", "pagedown": "PgDn"}
    return " ".join(names.get(k.strip(), k.strip()) for k in b.key.split(","))


def key_table(title: str, bindings: list[Binding]) -> Table:
    table = Table(title=title, title_justify="left", title_style="bold underline", box=None, show_header=False,
                  padding=(0, 2, 0, 0))
    table.add_column("key", style="bold cyan", no_wrap=True)
    table.add_column("what")
    for b in bindings:
        table.add_row(_key_label(b), b.tooltip or b.description)
    return table


def sections(app_bindings: list) -> list[tuple[str, list]]:
    """The help's sections: a title and its keys, each screen's from its own BINDINGS."""
    from kubeview.tui.screens.capacity import CapacityScreen
    from kubeview.tui.screens.gang_detail import GangDetailScreen
    from kubeview.tui.screens.group_detail import GroupDetailScreen
    from kubeview.tui.screens.indexed import IndexedScreen
    from kubeview.tui.screens.node_detail import NodeDetailScreen
    from kubeview.tui.screens.nodes import NodesScreen
    from kubeview.tui.screens.packing import PackingScreen
    from kubeview.tui.screens.pods import PodsScreen
    from kubeview.tui.screens.quota import QuotaScreen
    from kubeview.tui.screens.quota_detail import QuotaDetailScreen
    from kubeview.tui.screens.render import RenderScreen
    from kubeview.tui.screens.tune import TuneScreen
    from kubeview.tui.screens.workloads import WorkloadsScreen
    from kubeview.tui.widgets.virtual_table import VirtualTable

    return [
        ("Everywhere", [*app_bindings, Binding("ctrl+p", "", "", tooltip="Command palette: every action"),
                        Binding("slash", "", "", tooltip="Filter the rows (Escape clears)")]),
        ("Tables", VirtualTable.BINDINGS + IndexedScreen.BINDINGS),
        ("Nodes", NodesScreen.BINDINGS),
        ("Node", NodeDetailScreen.BINDINGS),
        ("Pods", PodsScreen.BINDINGS),
        ("Workloads", WorkloadsScreen.BINDINGS),
        ("Gang", GangDetailScreen.BINDINGS),
        ("Packing", PackingScreen.BINDINGS),
        ("Capacity", [*CapacityScreen.BINDINGS,
                      Binding("7", "", "", tooltip="Capacity (:capacity): the node groups and NodePools, their "
                                                   "sizes against their limits, the pods waiting on each; the panel "
                                                   "tells the selected group's story and a rough time")]),
        ("Node group", GroupDetailScreen.BINDINGS),
        ("Quota", [*QuotaScreen.BINDINGS,
                   Binding("8", "", "", tooltip="Quota (:quota): each namespace's ResourceQuotas, GPU, cpu and "
                                                "memory used against hard as bars, kubeview's count where it "
                                                "differs, and the workloads quota holds back")]),
        ("Namespace quota", QuotaDetailScreen.BINDINGS),
        ("Render", RenderScreen.BINDINGS),
        ("Tune", [*TuneScreen.BINDINGS,
                  Binding("colon", "", "", tooltip=":tune shows the study of `kubeview tune SCENE`: its trials, "
                                                   "the best so far, wall time plotted, live"),
                  Binding("q", "", "", tooltip="Quit: the running trial stops and is kept as failed "
                                               "(interrupted); the same command resumes the study")]),
    ]


class HelpScreen(ModalScreen[None]):
    BINDINGS = [Binding("escape,question_mark,q", "close", "Close", id="help.close", tooltip="Close the help")]

    def compose(self) -> ComposeResult:
        with VerticalScroll(classes="dialog", id="help"):
            yield Static(Text("kubeview keys", style="bold"))
            for title, bindings in sections(type(self.app).BINDINGS):
                unique = [b for b in bindings if isinstance(b, Binding)]
                yield Static(key_table(title, unique), classes="help-section")

    def on_mount(self) -> None:
        self.query_one("#help").border_title = "Help (Esc closes)"

    def action_close(self) -> None:
        self.dismiss(None)
