"""Issue 16 item 9: YAML nested 25,000 deep (50 KB) is one clear line, never a segfault.

libyaml's composer recurses in C per level; before the depth check ``renderer render`` and
``renderer producer`` died with SIGSEGV (exit 139) on this file."""

from __future__ import annotations

from pathlib import Path

import pytest

from renderer import bounded_yaml
from renderer.scene import SceneError, parse
from tests.renderer.testkit import free_port, run_cli

DEEP_FLOW = "[" * 25_000 + "]" * 25_000
DEEP_BLOCK = "- " * 25_000 + "x\n"  # block sequences nest just as compactly


@pytest.mark.parametrize("text", [DEEP_FLOW, DEEP_BLOCK, "{a: " * 25_000 + "1" + "}" * 25_000],
                         ids=["flow", "block", "mapping"])  # ids: the texts are 50 KB each
def test_depth_is_refused_before_composing(text: str) -> None:
    with pytest.raises(bounded_yaml.TooDeep, match=r"^nested more than 64 levels deep \(line 1\)$"):
        bounded_yaml.safe_load(text)


def test_depth_at_the_bound_loads() -> None:
    assert bounded_yaml.safe_load("[" * 64 + "]" * 64) is not None
    with pytest.raises(bounded_yaml.TooDeep):
        bounded_yaml.safe_load("[" * 65 + "]" * 65)


def test_scene_error_names_the_line() -> None:
    with pytest.raises(SceneError, match=r"^deep.yaml: line 2: nested more than 64 levels deep$"):
        parse("name: x\nseed: " + DEEP_FLOW, "deep.yaml")


@pytest.mark.parametrize("command", ["render", "producer"])
def test_cli_deep_scene_is_one_line(tmp_path: Path, command: str) -> None:
    scene = tmp_path / "deep.yaml"
    scene.write_text(DEEP_FLOW)
    extra = ["--listen", f"127.0.0.1:{free_port()}"] if command == "producer" else []
    r = run_cli(command, str(scene), "-o", str(tmp_path / "out.png"), *extra, timeout=60)
    assert r.returncode == 2, r.stderr
    assert r.stderr.strip().splitlines() == ["renderer: deep.yaml: line 1: nested more than 64 levels deep"]
    assert not (tmp_path / "out.png").exists()
