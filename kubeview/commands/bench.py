"""`kubeview bench WHAT`: dispatches to `kubeview.bench.WHAT.run(args)` (a sub-package's `command`)."""

from __future__ import annotations

import argparse
import importlib
import importlib.util


def run(args: argparse.Namespace) -> int:
    name = f"kubeview.bench.{args.what}"
    if _is_package(name):  # bench/scheduler/: its entry point is command.py
        name += ".command"
    module = importlib.import_module(name)
    return int(module.run(args) or 0)


def _is_package(name: str) -> bool:
    spec = importlib.util.find_spec(name)
    return spec is not None and spec.submodule_search_locations is not None
