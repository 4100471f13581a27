"""The UI boundary is enforced, not hoped for (Harlequin's pattern, see STYLE.md).

Each rule imports every module of a package in a fresh interpreter and inspects `sys.modules`.
The same checker runs against a copy of the tree with a forbidden import planted, to show it bites.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

# (package, modules it must never pull in, directly or through anything it imports)
RULES = [
    ("kubeview.model", ["textual", "kubernetes", "kubeview.cluster", "kubeview.scheduling", "kubeview.tui",
                        "kubeview.snapshot"]),
    # the snapshot document sits on the model and below everything that prints or shows it
    ("kubeview.snapshot", ["textual", "kubernetes", "kubeview.cluster", "kubeview.scheduling", "kubeview.tui",
                           "kubeview.web", "kubeview.render", "kubeview.commands"]),
    ("kubeview.scheduling", ["textual", "kubeview.cluster", "kubeview.tui", "kubeview.render"]),
    ("kubeview.cluster.local", ["textual", "kubernetes", "kubeview.cluster.kube", "kubeview.tui"]),
    ("kubeview.cluster.kube", ["textual", "kubeview.cluster.local", "kubeview.tui"]),
    ("kubeview.cluster.prometheus", ["textual", "kubeview.cluster.kube", "kubeview.cluster.local", "kubeview.tui"]),
    ("renderer", ["textual", "kubeview"]),
    # `kubeview serve` relays terminals: each session's TUI and cluster live in its own process
    ("kubeview.web", ["textual", "kubernetes", "kubeview.cluster", "kubeview.tui"]),
    # table logic and widgets are views: shared formatting lives in tui/format.py, never in a screen
    ("kubeview.tui.rows", ["kubeview.tui.screens", "kubeview.tui.app"]),
    ("kubeview.tui.widgets", ["kubeview.tui.screens", "kubeview.tui.app"]),
]

_PROBE = """
import importlib, json, pkgutil, sys
sys.path.insert(0, sys.argv[1])
package, forbidden = sys.argv[2], json.loads(sys.argv[3])
mod = importlib.import_module(package)
names = [package] + [m.name for m in pkgutil.walk_packages(mod.__path__, package + ".")
                     if not m.name.rsplit(".", 1)[-1].startswith("__")]
for name in names:
    importlib.import_module(name)
bad = sorted({f for f in forbidden for m in sys.modules if m == f or m.startswith(f + ".")})
print(json.dumps({"modules": len(names), "forbidden": bad}))
"""


def violations(root: Path, package: str, forbidden: list[str]) -> tuple[int, list[str]]:
    """How many modules of `package` under `root` were imported, and which forbidden ones came along."""
    out = subprocess.run(
        [sys.executable, "-c", _PROBE, str(root), package, json.dumps(forbidden)],
        capture_output=True, text=True, timeout=300, cwd=root,
    )
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout.strip().splitlines()[-1])
    return result["modules"], result["forbidden"]


@pytest.mark.parametrize(("package", "forbidden"), RULES, ids=[r[0] for r in RULES])
def test_package_stays_inside_its_boundary(package: str, forbidden: list[str]) -> None:
    count, bad = violations(ROOT, package, forbidden)
    assert count >= 1
    assert bad == [], f"{package} imports {bad}"


def test_checker_catches_textual_planted_in_model(tmp_path: Path) -> None:
    shutil.copytree(ROOT / "kubeview", tmp_path / "kubeview", ignore=shutil.ignore_patterns("__pycache__"))
    (tmp_path / "kubeview" / "model" / "planted.py").write_text("import textual  # noqa: F401\n")
    _, bad = violations(tmp_path, "kubeview.model", ["textual", "kubernetes"])
    assert bad == ["textual"]


def test_checker_catches_the_snapshot_planted_in_model(tmp_path: Path) -> None:
    shutil.copytree(ROOT / "kubeview", tmp_path / "kubeview", ignore=shutil.ignore_patterns("__pycache__"))
    (tmp_path / "kubeview" / "model" / "planted.py").write_text(
        "from kubeview.snapshot.document import build_snapshot  # noqa: F401\n")
    _, bad = violations(tmp_path, "kubeview.model", ["kubeview.snapshot"])
    assert bad == ["kubeview.snapshot"]


def _commands_imports(root: Path) -> list[str]:
    """Library modules that import kubeview.commands anywhere, function bodies included (the probe
    above only sees module-level imports)."""
    import ast

    bad = []
    for path in sorted((root / "kubeview").rglob("*.py")):
        rel = path.relative_to(root).as_posix()
        if rel.startswith("kubeview/commands/") or rel == "kubeview/cli.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(), rel)):
            names = [node.module or ""] if isinstance(node, ast.ImportFrom) else \
                [a.name for a in node.names] if isinstance(node, ast.Import) else []
            if any(n == "kubeview.commands" or n.startswith("kubeview.commands.") for n in names):
                bad.append(f"{rel}:{node.lineno}")
    return bad


def test_library_modules_never_import_commands(tmp_path: Path) -> None:
    assert _commands_imports(ROOT) == []
    shutil.copytree(ROOT / "kubeview", tmp_path / "kubeview", ignore=shutil.ignore_patterns("__pycache__"))
    (tmp_path / "kubeview" / "render" / "planted.py").write_text(
        "def f():\n    from kubeview.commands import snapshot  # noqa: F401\n")
    assert _commands_imports(tmp_path) == ["kubeview/render/planted.py:2"]


# --- no circles between files, no file over 400 lines (#26, #34) ---------------------------------
MAX_LINES = 400


def import_graph(root: Path) -> dict[str, set[str]]:
    """module -> the project modules it imports anywhere (function bodies and TYPE_CHECKING too)."""
    import ast

    mods = {}
    for pkg in ("kubeview", "renderer"):
        for path in (root / pkg).rglob("*.py"):
            parts = path.relative_to(root).with_suffix("").parts
            mods[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path

    def resolve(name: str) -> str:
        while name and name not in mods:
            name = name.rpartition(".")[0]
        return name

    graph: dict[str, set[str]] = {m: set() for m in mods}
    for mod, path in mods.items():
        package = mod if path.name == "__init__.py" else mod.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    up = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join(up + ([base] if base else []))
                targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in mods else resolve(base) for a in node.names]
            elif isinstance(node, ast.Import):
                targets = [resolve(a.name) for a in node.names]
            else:
                continue
            graph[mod].update(t for t in targets if t and t != mod)
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected groups of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(graph[w]))))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                group = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    group.append(w)
                    if w == v:
                        break
                if len(group) > 1:
                    out.append(sorted(group))
    return out


def test_no_import_circles_between_files(tmp_path: Path) -> None:
    assert circles(import_graph(ROOT)) == []
    for pkg in ("kubeview", "renderer"):
        shutil.copytree(ROOT / pkg, tmp_path / pkg, ignore=shutil.ignore_patterns("__pycache__"))
    link = tmp_path / "renderer" / "link.py"  # plant the circle #26 cut: link -> producer -> link
    link.write_text(link.read_text() + "\nfrom renderer.producer import Producer  # noqa: E402,F401\n")
    # producer -> admission -> link joins the circle: one cycle of three files
    assert circles(import_graph(tmp_path)) == [["renderer.admission", "renderer.link", "renderer.producer"]]


def test_no_file_over_400_lines() -> None:
    long = {str(p.relative_to(ROOT)): n for pkg in ("kubeview", "renderer") for p in (ROOT / pkg).rglob("*.py")
            if (n := len(p.read_text().splitlines())) > MAX_LINES}
    assert long == {}, f"split these where the code has a seam: {long}"


def test_subpackages_say_what_they_hold_and_may_import() -> None:
    for pkg in ("cluster/kube", "cluster/local", "cluster/prometheus", "bench/scheduler", "snapshot", "model/gangs",
                "model/gpus", "model/jobs"):
        doc = (ROOT / "kubeview" / pkg / "__init__.py").read_text()
        assert doc.startswith('"""') and "May import" in doc, pkg


@pytest.mark.parametrize(("folder", "package", "planted", "forbidden"), [
    ("cluster/local", "kubeview.cluster.local", "import kubeview.cluster.kube.errors", "kubeview.cluster.kube"),
    ("tui/rows", "kubeview.tui.rows", "from kubeview.tui.screens.pod_detail import describe", "kubeview.tui.screens"),
], ids=["cross-source", "row-imports-a-screen"])
def test_checker_catches_a_planted_import(tmp_path: Path, folder: str, package: str, planted: str,
                                          forbidden: str) -> None:
    shutil.copytree(ROOT / "kubeview", tmp_path / "kubeview", ignore=shutil.ignore_patterns("__pycache__"))
    (tmp_path / "kubeview" / folder / "planted.py").write_text(f"{planted}  # noqa: F401\n")
    _, bad = violations(tmp_path, package, [forbidden])
    assert bad == [forbidden]
