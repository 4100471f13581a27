"""The kubeview side of `bench cluster`'s TUI figures, run as its own process by tui_run.py:
`python -m kubeview.bench.cluster.tui_probe KUBECONFIG PREFIX NODES BOUND DURATION`.

The real app on the real kube source, headless (Textual's run_test at 120x40). It prints
`complete` the moment the Nodes screen's rows hold every node named PREFIX* and the pods bound to
them (every row present with its allocation) and that screen has been painted; then waits for `go`
on stdin (the churn has started), times key presses on the Nodes screen as bench tui does (key
arriving until its answer is painted), prints `keys <json list of seconds>`, and stays up until
DURATION seconds after its start so the parent reads its peak RSS then.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time

START = time.monotonic()

from kubeview.cluster.kube.source import KubeSource  # noqa: E402
from kubeview.tui.app import make_app  # noqa: E402
from kubeview.tui.screens.nodes import NodesScreen  # noqa: E402

KEYS = ["down", "pagedown", "G", "g", "down", "down", "o", "o", "N"]


def complete(screen: object, prefix: str, nodes: int, bound: int) -> bool:
    """Whether the Nodes screen's rows hold every bench node and every pod bound to them."""
    if not isinstance(screen, NodesScreen):
        return False
    data = screen.data
    mine = [i for i, name in enumerate(data.names) if name.startswith(prefix)]
    return len(mine) >= nodes and int(sum(int(data.pods[i]) for i in mine)) >= bound


async def main(kubeconfig: str, prefix: str, nodes: int, bound: int, duration: float) -> None:
    app = make_app(KubeSource(kubeconfig=kubeconfig))
    async with app.run_test(size=(120, 40)) as pilot:
        while not complete(app.screen, prefix, nodes, bound):
            await asyncio.sleep(0.02)
        await asyncio.wait_for(app.screen.wait_for_refresh(), 30.0)
        print(f"complete {time.monotonic() - START:.3f}", flush=True)
        await asyncio.get_running_loop().run_in_executor(None, sys.stdin.readline)
        from kubeview.bench.tui import press  # after the first screen: the real TUI never imports it

        seconds = []
        for _ in range(3):
            for key in KEYS:
                seconds.append(await press(pilot, key))
                await asyncio.sleep(0.05)
        print("keys " + json.dumps(seconds), flush=True)
        while time.monotonic() - START < duration:
            await asyncio.sleep(0.2)
        app.exit()


if __name__ == "__main__":
    kc, pre, n, b, d = sys.argv[1:6]
    asyncio.run(main(kc, pre, int(n), int(b), float(d)))
