"""pytest plugin for .ci/drift.py: records which distributions the test run imported, so the drift
subset is checked to cover every direct dependency (written next to the interpreter's venv)."""

from __future__ import annotations

import importlib.metadata
import json
import re
import sys
from pathlib import Path


def pytest_sessionfinish(session, exitstatus) -> None:  # noqa: ANN001 -- pytest hook
    by_module = importlib.metadata.packages_distributions()
    seen = {re.sub(r"[-_.]+", "-", dist).lower()
            for mod in list(sys.modules) for dist in by_module.get(mod.partition(".")[0], [])}
    seen.add("pytest")
    # plugins pytest loaded count as used: pytest-timeout, pytest-textual-snapshot
    for plugin in session.config.pluginmanager.list_plugin_distinfo():
        seen.add(re.sub(r"[-_.]+", "-", plugin[1].project_name).lower())
    Path(sys.prefix, "drift-imports.json").write_text(json.dumps(sorted(seen)))
