"""The Quota screen on the demo's story, pilot-driven: the training team at its GPU quota (4/4 while GPUs
are free) and its Job finetune held by it, at 160x48 and 80x24; then the quota raised and the hold gone.

The demo as `kubeview --demo` opens it; the quota is raised through the source, as `kubectl apply` would,
and the screen is read once the app shows the source's state (`settle`, `wait_for`), never after a sleep.
"""

from __future__ import annotations

import pytest
from textual.widgets import Static
from tui_helpers import run_async, settle, under, wait_for

from kubeview.cluster.local.demo import open_demo
from kubeview.cluster.local.source import LocalSource
from kubeview.tui.app import make_app, screen_named
from kubeview.tui.screens.help import HelpScreen, sections
from kubeview.tui.screens.quota import NO_QUOTAS, QuotaScreen
from kubeview.tui.screens.quota_detail import QuotaDetailScreen
from kubeview.tui.widgets.virtual_table import VirtualTable

HELD = "held by quota gpus: requests.nvidia.com/gpu 4/4 — 2 pods not created"
REFUSED = ("is forbidden: exceeded quota: gpus, requested: requests.nvidia.com/gpu=1, "
           "used: requests.nvidia.com/gpu=4, limited: requests.nvidia.com/gpu=4")
QUOTA = {"kind": "ResourceQuota", "metadata": {"name": "gpus", "namespace": "training"},
         "spec": {"hard": {"requests.nvidia.com/gpu": "6", "requests.cpu": "12", "requests.memory": "48Gi"}}}


def row(screen: QuotaScreen, namespace: str = "training") -> dict[str, str]:
    """The namespace's row as drawn, column by column."""
    table = screen.query_one("#quota-table", VirtualTable)
    line = table.render_line(1 + table.rows.index(namespace)).text  # type: ignore[operator]
    assert len(line.rstrip()) <= table.size.width
    return {c.key: under(table, line, c.key) for c in table.columns}


def drawn(screen: QuotaScreen) -> bool:
    """The training row is in the table and the panel has its size (the first layout is done)."""
    table = screen.query_one("#quota-table", VirtualTable)
    return "training" in screen.data.namespaces and len(table.rows) > 0 and bool(panel_text(screen))


def panel_text(screen: QuotaScreen) -> str:
    """What the panel box shows, its wrapped lines joined."""
    box = screen.query_one("#quota-panel", Static)
    lines = [box.render_line(y).text.rstrip() for y in range(box.size.height)]
    assert all(len(line) <= box.size.width for line in lines)
    return " ".join(line.strip() for line in lines if line.strip())


@pytest.mark.parametrize("size", [(160, 48), (80, 24)])
@run_async
async def test_quota_shows_the_training_team_held_at_its_gpu_quota(size: tuple[int, int]) -> None:
    source: LocalSource = open_demo(autoscale_every=None)
    app = make_app(source)
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        await pilot.press("8")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, QuotaScreen)
        await wait_for(pilot, lambda: drawn(screen), 20, "the training row and its panel drawn")
        first = row(screen)
        assert first["namespace"] == "training" and first["quotas"] == "gpus"
        assert first["gpu"].endswith(" 4/4") and first["cpu"].endswith(" 6/12")
        assert first["memory"].endswith("24Gi/48Gi") and first["held"] == "1"
        assert first["note"].startswith("Job finetune held")
        if size[0] >= 160:
            assert first["note"] == f"Job finetune {HELD}"
        text = panel_text(screen)
        assert ("training quota gpus: requests.cpu 6/12 · requests.memory 24Gi/48Gi · "
                "requests.nvidia.com/gpu 4/4 (full)") in text
        assert f"Job finetune: {HELD}" in text
        assert "from job-controller's FailedCreate Events and the Job's status" in text

        await pilot.press("enter")  # the namespace: key by key, the API server's words
        await settle(pilot)
        detail = app.screen
        assert isinstance(detail, QuotaDetailScreen)
        await wait_for(pilot, lambda: REFUSED in detail.text, 20, "the namespace's words")
        assert "[b]Quota gpus[/b]" in detail.text and REFUSED in detail.text
        assert "the API server said (" in detail.text
        assert 'Error creating: pods "finetune-0-' in detail.text
        await pilot.press("escape")
        await settle(pilot)
        assert app.screen is screen

        # the team's quota raised to 6: the Job controller's next try creates both pods, the hold is gone
        source.apply_workload(QUOTA)
        # the hold is gone as soon as the quota admits the pods; they count once the Job controller's
        # retry has created them (its backoff): wait for both, not for the first alone
        await wait_for(pilot, lambda: row(screen)["held"] == "0" and row(screen)["gpu"].endswith(" 6/6"), 20,
                       "the hold gone and both pods counted")
        raised = row(screen)
        # (the note may say kubeview counts 5: a pod whose GPU a DRA claim serves drops it from the
        # model's requests, model/quota/counting.py, while the quota controller counts the pod's spec)
        assert raised["gpu"].endswith(" 6/6") and not raised["note"].startswith("Job")
        assert len([p for p in source.pods("training") if p["metadata"]["name"].startswith("finetune-")]) == 2
        assert "no workload is held by its quota" in panel_text(screen)
        await pilot.press("q")


@run_async
async def test_quota_key_jump_and_help(small_cluster) -> None:  # noqa: ANN001
    """`8` and `:quota` open it, `:q` still quits; without any quota the table says so; `?` has its keys."""
    app = make_app(small_cluster)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("colon", *"quota", "enter")
        await settle(pilot)
        assert isinstance(app.screen, QuotaScreen)
        table = app.screen.query_one("#quota-table", VirtualTable)
        assert table.empty == NO_QUOTAS and len(table.rows) == 0
        assert not app.screen.query_one("#quota-panel", Static).display
        await pilot.press("1", "8")
        await settle(pilot)
        assert isinstance(app.screen, QuotaScreen)
        await pilot.press("question_mark")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        said = {t: [b.tooltip for b in keys] for t, keys in sections(type(app).BINDINGS)}
        assert said["Namespace quota"] == ["Back to the quotas"]
        assert any(t.startswith("Open the namespace") for t in said["Quota"])
        assert "Go to the quota screen" in said["Everywhere"]
        await pilot.press("escape")


def test_colon_q_still_quits_beside_quota() -> None:
    assert [screen_named(t) for t in ("q", "quota", "quo", "qu", "capa", "quit")] == [
        "quit", "quota", "quota", None, "capacity", "quit"]
