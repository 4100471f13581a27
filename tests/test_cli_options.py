"""Every option is checked before anything starts (issue #15, items 3, 8, 9): one line, the exit code
README promises, nothing started; and each command's --help lists only flags that command reads."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _env(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("KUBECONFIG", "KUBERNETES_SERVICE_HOST")}
    env["HOME"] = str(tmp_path)  # no ~/.kube/config
    return env


def kubeview(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "kubeview", *args], capture_output=True, text=True, timeout=60,
                          env=_env(tmp_path), cwd=tmp_path)


BAD_SCENE = ("name: x\nseed: 1\nimage: {width: -3, height: 2, samples_per_pixel: 1, max_depth: 2}\n"
             "camera: {lookfrom: [0, 0, 0], lookat: [0, 0, -1], vfov: 40}\nmaterials: {}\nobjects: []\n")
RENDER = ("--render", "three-spheres", "--headless", "--local")


def _usage(flag: str, why: str, prog: str = "kubeview") -> str:
    return f"{prog}: error: argument {flag}: {why} (see {prog} --help)\n"


def test_bad_values_are_one_line_and_start_nothing(tmp_path: Path) -> None:
    (tmp_path / "bad.yaml").write_text(BAD_SCENE)
    (tmp_path / "dir").mkdir()
    cases: dict[tuple[str, ...], tuple[int, str]] = {
        ("--window", "5x"): (2, _usage("--window", "'5x' is not a Prometheus duration such as 30s, 5m or 1h")),
        ("snapshot", "--prometheus", "not-a-url"): (2, _usage(
            "--prometheus", "'not-a-url' is not an http:// or https:// URL such as http://prometheus:9090",
            "kubeview snapshot")),
        ("--extender", "localhost:8888"): (2, _usage(
            "--extender", "'localhost:8888' is not an http:// or https:// URL such as http://prometheus:9090")),
        (*RENDER, "--replicas", "0"): (2, _usage("--replicas", "expected a whole number from 1 to 10,000, got '0'")),
        (*RENDER, "--spp", "0"): (2, _usage("--spp", "expected a whole number from 1 to 1,000,000, got '0'")),
        (*RENDER, "--width", "16385"): (2, _usage("--width", "expected a whole number from 1 to 16,384, got '16385'")),
        (*RENDER, "--width", "16384", "--spp", "1"):
            (2, "kubeview: three-spheres.yaml: image: 16384x10923 is more than 67108864 pixels\n"),
        (*RENDER, "--cpu", "lots"): (2, _usage("--cpu", "'lots' is not a cpu amount (examples: 1000m, 0.5, 2)")),
        (*RENDER, "--start-timeout", "0"): (2, _usage("--start-timeout", "expected a positive number of seconds, got '0'")),
        ("--render", "bad.yaml", "--headless", "--local"): (2, "kubeview: bad.yaml: image.width: must be >= 1, got -3\n"),
        ("--render", "nosuch", "--headless", "--local"): (2, "kubeview: nosuch: no such scene file or bundled scene\n"),
        (*RENDER, "-o", "dir"): (2, "kubeview: -o dir is a directory; name a file, e.g. dir/render.png\n"),
        (*RENDER, "-o", "nodir/x.png"): (2, f"kubeview: -o nodir/x.png: directory '{tmp_path}/nodir' does not exist\n"),
        (*RENDER, "--raw", "dir"): (2, "kubeview: --raw dir is a directory; name a file, e.g. dir/render.png\n"),
    }
    for args, (code, message) in cases.items():
        out = kubeview(tmp_path, *args)
        assert (out.returncode, out.stderr) == (code, message), args
        assert out.stdout == "", args  # "render: starting ..." never printed: nothing was started
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.yaml", "dir"]  # no image, no probe left


@pytest.mark.skipif(not os.access("/sys", os.R_OK), reason="needs sysfs, which refuses new files even to root")
def test_an_unwritable_output_is_refused_before_the_render(tmp_path: Path) -> None:
    out = kubeview(tmp_path, *RENDER, "-o", "/sys/kubeview-test.png")
    assert (out.returncode, out.stdout, out.stderr) == (
        2, "", "kubeview: -o /sys/kubeview-test.png: cannot write in /sys: Permission denied\n")


def test_help_lists_the_bundled_scenes(tmp_path: Path) -> None:
    out = kubeview(tmp_path, "--help")
    assert "bundled name (spheres, three-spheres)" in " ".join(out.stdout.split())


# -- each command's --help lists only flags it uses ----------------------------------------------------------

def _module_file(name: str) -> Path | None:
    p = ROOT / Path(*name.split("."))
    return p.with_suffix(".py") if p.with_suffix(".py").is_file() else (p / "__init__.py" if p.is_dir() else None)


def _reachable(seeds: list[str]) -> set[Path]:
    """Files of the kubeview modules the seeds import, transitively (function-level imports too)."""
    seen: set[Path] = set()
    todo = list(seeds)
    while todo:
        f = _module_file(todo.pop())
        if f is None or f in seen:
            continue
        seen.add(f)
        for node in ast.walk(ast.parse(f.read_text())):
            if isinstance(node, ast.Import):
                todo += [a.name for a in node.names if a.name.startswith("kubeview")]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").startswith("kubeview"):
                todo += [node.module, *(f"{node.module}.{a.name}" for a in node.names)]
    return seen


def _args_read(files: set[Path]) -> set[str]:
    """Attribute names read from a variable called `args`: `args.x` and `getattr(args, "x", ...)`."""
    names: set[str] = set()
    for f in files:
        for node in ast.walk(ast.parse(f.read_text())):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "args":
                names.add(node.attr)
            elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "getattr"
                  and len(node.args) >= 2 and isinstance(node.args[0], ast.Name) and node.args[0].id == "args"
                  and isinstance(node.args[1], ast.Constant)):
                names.add(str(node.args[1].value))
    return names


def test_every_flag_a_command_lists_is_read_by_that_command() -> None:
    """`kubeview extender --help` listed --extender, --prometheus, --window...: flags it never read."""
    import argparse

    from kubeview.cli import COMMANDS, build_parser

    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    extra_seeds = {"bench": ["kubeview.bench.model", "kubeview.bench.scheduler.command", "kubeview.bench.tui",
                             "kubeview.bench.render", "kubeview.bench.plan",
                             "kubeview.bench.cluster.command"]}  # chosen by name at run time
    for name, command_parser in sub.choices.items():
        command = command_parser.get_default("command")
        read = _args_read(_reachable([COMMANDS[command], *extra_seeds.get(name, [])]))
        listed = {a.dest: a.option_strings[-1] if a.option_strings else a.dest for a in command_parser._actions
                  if not isinstance(a, argparse._HelpAction)}
        unread = sorted(flag for dest, flag in listed.items() if dest not in read)
        assert not unread, f"kubeview {name} --help lists flags it never reads: {unread}"
    ext = sub.choices["extender"].format_help()
    assert "--extender" not in ext and "--prometheus" not in ext and "--window" not in ext
