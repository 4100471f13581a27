"""`kubeview bench WHAT`: dispatches to `kubeview.bench.WHAT.run(args)`."""

from __future__ import annotations

import argparse
import importlib


def run(args: argparse.Namespace) -> int:
    module = importlib.import_module(f"kubeview.bench.{args.what}")
    return int(module.run(args) or 0)
