"""Pod detail: a long message wraps under its own column (a hanging indent), never back to column 0
(#24 item 16), at every supported size; the demo's train-c has the scheduler's long message."""

from __future__ import annotations

import pytest
from textual.widgets import Static
from tui_helpers import run_async, settle, wait_for

from kubeview.cluster.local.demo import DEMO_PENDING
from kubeview.cluster.local.source import LocalSource
from kubeview.tui.app import make_app
from kubeview.tui.screens.pod_detail import PodDetailScreen


def test_hanging_indent() -> None:
    from kubeview.tui.format import hanging

    lead = "Warning  FailedScheduling  3m  default-scheduler  "
    text = "0/7 nodes are available: 1 Insufficient memory, 2 Insufficient nvidia.com/gpu, 3 Insufficient cpu."
    assert hanging(lead, text, None) == [lead + text]
    lines = hanging(lead, text, 100)
    assert lines[0].startswith(lead) and len(lines) == 2 and lines[1] == " " * len(lead) + lines[1].lstrip()
    assert " ".join(line.strip() for line in lines).endswith(text) and all(len(line) <= 100 for line in lines)
    narrow = hanging(lead, text, 60)  # too narrow for the column: under a small indent
    assert narrow[0] == lead.rstrip() and all(line.startswith("    ") and len(line) <= 60 for line in narrow[1:])


@pytest.mark.parametrize("size", [(160, 48), (100, 30), (80, 24)])
@run_async
async def test_pod_detail_messages_keep_their_indent(demo: LocalSource, size: tuple[int, int]) -> None:
    app = make_app(demo)
    async with app.run_test(size=size) as pilot:
        await wait_for(pilot, lambda: app.state.model.pending_count() == DEMO_PENDING, 30, "the demo's pending pods")
        await settle(pilot)
        await pilot.press("2", "slash", *"train-c", "enter", "enter")
        await wait_for(pilot, lambda: isinstance(app.screen, PodDetailScreen), what="the pod's page")
        await wait_for(pilot, lambda: "FailedScheduling" in str(app.screen.query_one("#pod-text", Static).render()),
                       30, "the pod's events")
        await settle(pilot)
        box = app.screen.query_one("#pod-text", Static)
        lines = str(box.render()).splitlines()
        assert all(len(line) <= box.size.width for line in lines), [ln for ln in lines if len(ln) > box.size.width]
        why = lines.index("Why it is not scheduled (the scheduler's message)")
        message = lines[why + 1:lines.index("", why + 1)]
        assert message[0].startswith("  0/9 nodes are available") and all(ln.startswith("  ") for ln in message)
        events = lines.index("Events")
        rows = lines[events + 1:]
        column = rows[0].index("Message")
        for line in rows[1:]:
            if line and not line.lstrip().startswith(("Warning", "Normal")):  # a wrapped line
                assert line.startswith(" " * min(column, 6)), line  # never back at column 0
        assert len(lines) > events + 2  # premise: an event was listed
