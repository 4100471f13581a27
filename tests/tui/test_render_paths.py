"""The render screen names the image the way a user would type it, never the machine's layout."""

from __future__ import annotations

from pathlib import Path

import pytest

from kubeview.tui.screens.render import shown_path


def test_shown_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home, work = tmp_path / "home", tmp_path / "home" / "src" / "kubeview"
    work.mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.chdir(work)
    assert shown_path(work / "screenshots" / "a.png") == "screenshots/a.png"
    assert shown_path(home / "renders" / "a.png") == "~/renders/a.png"
    assert shown_path(tmp_path / "a.png") == str(tmp_path / "a.png")  # outside both: as given
    assert shown_path("a.png") == "a.png"
