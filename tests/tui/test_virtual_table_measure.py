"""What a VirtualTable measures for its name columns (#41: at 150,000 pods a sort of the 5,000 nodes
took 120-270 ms, measuring every row's stamp again): rows of the same `content` in another order are
not measured again and keep the widths measured; rows of new content are measured by `measure`
where given, not by the costlier `stamp`; and a row whose measured text grew still widens its column."""

from __future__ import annotations

from textual.app import App, ComposeResult
from tui_helpers import run_async

from kubeview.tui.rows.column import Column
from kubeview.tui.widgets.table_rows import Rows
from kubeview.tui.widgets.virtual_table import VirtualTable


class Table(App):
    def compose(self) -> ComposeResult:
        yield VirtualTable([Column("name", "NAME", 0, whole=True), Column("cpu", "CPU", 8)])


def _rows(names: dict[str, str], order: list[str], content: object, reads: list[str]) -> Rows:
    def stamp(key: str) -> object:
        reads.append("stamp")
        return (names[key], "figures")

    def measure(key: str) -> object:
        reads.append("measure")
        return names[key]

    return Rows(order, lambda key: [names[key], "1"], stamp=stamp, content=content, measure=measure)


@run_async
async def test_a_resort_measures_nothing_and_new_content_reads_the_cheap_stamp() -> None:
    app = Table()
    async with app.run_test(size=(60, 20)) as pilot:
        table = app.query_one(VirtualTable)
        names = {f"k{i}": f"node-{i}" for i in range(300)}
        reads: list[str] = []
        table.rows = _rows(names, sorted(names), (1, ""), reads)
        await pilot.pause()
        assert table.want["name"] == len("node-299") and reads.count("measure") >= 300
        assert reads.count("stamp") < 300  # the stamp only for the rows painted (their strips' cache)
        reads.clear()
        for order in (sorted(names, reverse=True), sorted(names, key=lambda k: int(k[1:]) % 7)):
            table.rows = _rows(names, order, (1, ""), reads)  # sorted anew: the same build, the same filter
            await pilot.pause()
            assert table.want["name"] == len("node-299")
        assert reads.count("measure") == 0  # no row measured again for a sort
        names = {**names, "k7": "a-node-whose-name-grew"}
        table.rows = _rows(names, sorted(names), (2, ""), reads)  # a new build: measured again
        await pilot.pause()
        assert table.want["name"] == len("a-node-whose-name-grew")
        assert reads.count("measure") >= 300 and reads.count("stamp") < 300
        assert table.rows.key(0) == "k0"
