"""CI runs what the README says: the Quickstart's test line is the one `.ci/run` executes."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def quickstart_lines() -> list[str]:
    text = (ROOT / "README.md").read_text()
    block = re.search(r"## Quickstart\s+```sh\n(.*?)```", text, re.S)
    assert block, "README has no Quickstart code block"
    return [line for line in block.group(1).splitlines() if line.strip()]


def test_quickstart_has_exactly_two_lines() -> None:
    lines = quickstart_lines()
    assert len(lines) == 2
    assert "kubeview --render" in lines[0]
    assert "pytest" in lines[1]


def test_ci_runs_the_readme_test_line_verbatim() -> None:
    ci = (ROOT / ".ci" / "run").read_text().splitlines()
    assert quickstart_lines()[1] in ci


def test_readme_names_the_commands_that_made_the_screenshots() -> None:
    """scripts/screenshots.py runs these commands; the README says which, verbatim."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("screenshots", ROOT / "scripts" / "screenshots.py")
    assert spec is not None and spec.loader is not None
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    readme = (ROOT / "README.md").read_text()
    for argv in (script.DEMO, script.RENDER):
        command = " ".join(["kubeview", *(a.format(out="screenshots") for a in argv)])
        assert f"\n{command}" in readme, command


# -- issue 42 item 10: the README, --help and the TUI's help cannot drift apart ---------------------------

def _usage() -> str:
    text = (ROOT / "README.md").read_text()
    return text[text.index("## Usage"):text.index("## Development")]


def _subcommands() -> dict:
    import argparse

    from kubeview.cli import build_parser

    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return sub.choices


def test_every_command_in_help_is_in_the_readme_usage() -> None:
    """`plan`, `bench plan` and `bench cluster` were in --help and not in the README."""
    usage = _usage()
    commands = _subcommands()
    missing = [name for name in commands if f"kubeview {name} " not in usage]
    what = next(a for a in commands["bench"]._actions if a.dest == "what")
    missing += [f"bench {name}" for name in what.choices if f"kubeview bench {name} " not in usage]
    assert not missing, f"in `kubeview --help`, not in README's Usage: {missing}"


def test_the_extender_verbs_are_the_same_in_its_help_the_readme_and_the_server() -> None:
    """`extender --help` said "(filter, prioritize)"; the server serves bind too."""
    from kubeview.scheduling.server import VERBS

    description = _subcommands()["extender"].description
    readme = _usage()
    extender = readme[readme.index("### GPU packing"):]
    for verb in VERBS:
        assert verb in description, verb
        assert f"`{verb}`" in extender[:600], verb


def test_every_tui_screen_is_in_the_readme_the_hint_and_the_help() -> None:
    """Help had no Tune section and the prompt's hint left out tune."""
    from kubeview.tui.app import SCREENS
    from kubeview.tui.screens.help import sections
    from kubeview.tui.widgets.prompt_bar import HINT
    from kubeview.tui.widgets.prompt_bar import SCREENS as COMPLETED

    titles = {title.lower() for title, _ in sections([])}
    readme = _usage()
    for screen in SCREENS:
        assert f"`:{screen}`" in readme, screen
        assert f" {screen} " in HINT and screen in COMPLETED, screen
        assert screen in titles, screen


def test_the_readme_and_the_help_say_resuming_a_job_may_ask_first() -> None:
    """A resume that starts more than 10 pods asks (workloads.needs_confirmation), as a scale jump does."""
    from kubeview.tui.screens.workloads import WorkloadsScreen, needs_confirmation

    assert needs_confirmation(0, 11) and not needs_confirmation(0, 10)
    z = next(b for b in WorkloadsScreen.BINDINGS if b.key == "z")
    assert "asks first too when that starts more than 10 pods" in z.tooltip
    assert "resumes it\n  (asks first too when that starts more than 10 pods)" in _usage()
