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
    ("kubeview.model", ["textual", "kubernetes"]),
    ("kubeview.scheduling", ["textual"]),
    ("renderer", ["textual", "kubeview"]),
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
