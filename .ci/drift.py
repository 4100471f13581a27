"""CI's drift check: the suite's dependency-covering subset in a fresh environment with the newest
releases pyproject allows, compared with requirements/test.lock.

Prints every package whose newest version differs from the lock. Where the subset fails there,
each moved package is tried alone in the locked environment (installed without its dependencies,
then put back) on the failing tests, and the ones that break them are named. Exit 1 on failure.
The subset must import every direct dependency (checked here: a subset that stops covering one
fails too). Standard library only: it runs before anything is installed.

    python .ci/drift.py --locked-venv .venv [--tests FILE] [--budget SECONDS]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import time
import tomllib
import venv
from pathlib import Path
from xml.etree import ElementTree

ROOT = Path(__file__).resolve().parents[1]
LOCK = ROOT / "requirements" / "test.lock"
PLUGIN = ROOT / ".ci" / "drift_imports.py"


def norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def locked_versions(lock: Path = LOCK) -> dict[str, str]:
    pins = re.findall(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==([^\s;\\]+)", lock.read_text(), re.M)
    return {norm(n): v for n, v in pins}


def direct_dependencies() -> list[str]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    specs = [*project["dependencies"], *project["optional-dependencies"]["test"]]
    return [norm(re.split(r"[<>=!~\[; ]", s, maxsplit=1)[0]) for s in specs]


def installed_versions(python: Path) -> dict[str, str]:
    code = "import json, importlib.metadata as m; print(json.dumps({d.metadata['Name']: d.version for d in m.distributions()}))"
    out = subprocess.run([str(python), "-c", code], capture_output=True, text=True, check=True).stdout
    return {norm(n): v for n, v in json.loads(out).items()}


def run(cmd: list[str], **kw) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cmd, text=True, cwd=ROOT, **kw)


def pytest_ids(python: Path, tests: list[str], report: Path, timeout: float) -> tuple[int, list[str]]:
    """Run pytest; return its exit code and the failed/errored test ids (from its JUnit XML)."""
    report.unlink(missing_ok=True)
    env = dict(os.environ, PYTHONPATH=str(PLUGIN.parent))
    r = run([str(python), "-m", "pytest", "-q", "--tb=line", "-p", "no:cacheprovider", "-p", "drift_imports",
             f"--junitxml={report}", *tests], env=env, timeout=timeout)
    failed: list[str] = []
    if report.exists():
        for case in ElementTree.parse(report).iter("testcase"):
            if case.find("failure") is not None or case.find("error") is not None:
                path = case.get("classname", "").replace(".", "/")
                failed.append(f"{path}.py::{case.get('name')}")
    return r.returncode, failed


def culprits(locked_python: Path, moved: dict[str, tuple[str, str]], failed: list[str],
             report: Path, deadline: float) -> list[str]:
    """Moved packages that alone, on top of the lock, make the failed tests fail."""
    pip = [str(locked_python), "-m", "pip", "install", "-q", "--no-deps"]
    names: list[str] = []
    for name, (old, new) in sorted(moved.items()):
        if time.monotonic() > deadline:
            print(f"drift: out of time before trying {name} alone", flush=True)
            break
        if run([*pip, f"{name}=={new}"], capture_output=True).returncode != 0:
            continue
        try:
            code, _ = pytest_ids(locked_python, failed, report, timeout=max(30.0, deadline - time.monotonic()))
        finally:
            run([*pip, f"{name}=={old}"], capture_output=True, check=True)
        print(f"drift: {name} {new} alone on the lock: {'FAILS' if code else 'passes'}", flush=True)
        if code:
            names.append(f"{name} {new} (locked {old})")
    return names


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--locked-venv", type=Path, required=True, help="the environment made from the lock")
    ap.add_argument("--tests", type=Path, default=ROOT / ".ci" / "drift-tests.txt")
    ap.add_argument("--budget", type=float, default=600.0, help="seconds for the whole check")
    ap.add_argument("--venv", type=Path, default=ROOT / ".venv-newest")
    args = ap.parse_args()
    deadline = time.monotonic() + args.budget
    tests = [ln.strip() for ln in args.tests.read_text().splitlines() if ln.strip() and not ln.startswith("#")]

    venv.create(args.venv, with_pip=True, clear=True)
    py = args.venv / "bin" / "python"
    r = run([str(py), "-m", "pip", "install", "-q", "-e", ".[test]"], capture_output=True)
    if r.returncode != 0:
        print(f"drift: FAILED: the newest versions pyproject allows do not install:\n{r.stderr[-2000:]}")
        return 1
    locked, newest = locked_versions(), installed_versions(py)
    moved = {n: (locked[n], v) for n, v in newest.items() if n in locked and locked[n] != v}
    added = sorted(set(newest) - set(locked) - {"kubeview", "pip", "setuptools", "wheel"})
    for name, (old, new) in sorted(moved.items()):
        print(f"drift: {name} {old} -> {new}")
    for name in added:
        print(f"drift: {name} {newest[name]} (new, not in the lock)")
    if not moved and not added:
        print("drift: the newest versions pyproject allows are the locked ones")

    report = args.venv / "drift-junit.xml"
    start = time.monotonic()
    code, failed = pytest_ids(py, tests, report, timeout=max(60.0, deadline - time.monotonic()))
    print(f"drift: subset of {len(tests)} test files ran in {time.monotonic() - start:.0f} s on the newest versions")
    imported = set(json.loads((args.venv / "drift-imports.json").read_text())) if (args.venv / "drift-imports.json").exists() else set()
    uncovered = sorted(set(direct_dependencies()) - imported - {"ruff"})  # ruff: CI runs it after
    if uncovered:
        print(f"drift: FAILED: the subset ({args.tests.name}) imports none of: {', '.join(uncovered)}")
        return 1
    if code == 0:
        return 0
    if not failed:
        print(f"drift: FAILED: pytest exited {code} on the newest versions with no failed test to retry")
        return 1
    print(f"drift: {len(failed)} test(s) fail on the newest versions: {', '.join(f[:160] for f in failed[:8])}")
    names = culprits(args.locked_venv / "bin" / "python", moved, failed, report, deadline)
    if names:
        print(f"drift: FAILED: newer release(s) break kubeview: {'; '.join(names)}")
    else:
        moved_list = ", ".join(f"{n} {o}->{v}" for n, (o, v) in sorted(moved.items())) or "none"
        print(f"drift: FAILED: no single moved package fails alone; moved together: {moved_list}")
    return 1


if __name__ == "__main__":
    sys.exit(main())
