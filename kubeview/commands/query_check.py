"""`--prometheus-queries FILE` checked once parsing is done, before anything starts: by `cli.main` for
every command, and by `serve` for each session's options. A module of its own, not in options.py (which
every command imports), so only those two count as reading it (tests/test_cli_options.py)."""

from __future__ import annotations

import argparse


def check_queries(args: argparse.Namespace) -> str | None:
    """`--prometheus-queries` is read only with `--prometheus`: without it, or unreadable, it was
    silently ignored. The file is loaded (and validated) here, before anything starts."""
    path = getattr(args, "prometheus_queries", None)
    if not path:
        return None
    if not getattr(args, "prometheus", None):
        return f"--prometheus-queries {path} needs --prometheus URL (the queries are sent there)."
    from kubeview.cluster.prometheus.queries import QueryConfigError, load_queries

    try:
        load_queries(path)
    except QueryConfigError as exc:
        return str(exc)
    return None
